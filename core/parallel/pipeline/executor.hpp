// The pipeline executor behind dt_pipeline: one rank's list of a schedule,
// its activation buffers, and the trainer's stage functions, run once per
// step (see dtrain/pipeline.h for the contract).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "parallel/pipeline/buffer_pool.hpp"
#include "parallel/pipeline/schedule.hpp"
#include "parallel/pipeline/stage_functions.hpp"

namespace dtrain::parallel::pipeline {

class Executor {
 public:
  // Throws DT_ERR_INVALID_ARGUMENT when `comm`'s size is not the schedule's
  // stages, and DT_ERR_ABORTED when `comm` is broken.
  Executor(std::shared_ptr<comm::Communicator> comm, const Schedule& schedule, const ActivationSpec& activation,
           StageFunctions functions);

  // One step; throws what ended it, after aborting the communicator.
  StepStats step();

 private:
  std::shared_ptr<comm::Communicator> comm_;
  Shape shape_;
  std::vector<Action> actions_;
  // For each action, the index of the next compute action after it (or the
  // list's size): how far ahead receives are posted.
  std::vector<std::size_t> next_compute_;
  ActivationSpec activation_;
  StageFunctions functions_;
  BufferPool pool_;
  // Buffers of operations a failed step cut short (see StepRun::run).
  std::vector<Buffer> abandoned_;
  int steps_ = 0;  // numbers the steps on the timeline
};

}  // namespace dtrain::parallel::pipeline
