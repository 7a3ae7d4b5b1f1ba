// A rank's pipeline step on the timeline (comm/trace_file.hpp): with
// DTRAIN_TRACE_FILE set, every compute action and every wait for a message
// becomes a span on the thread "pipeline <label> (stage r of p)", beside
// the communicator's own operations, so a merged trace shows the schedule
// as it ran on every rank. Without it nothing is recorded.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.hpp"
#include "parallel/pipeline/action.hpp"
#include "parallel/pipeline/message_tag.hpp"

namespace dtrain::parallel::pipeline {

class Timeline {
 public:
  // `step` numbers the executor's steps from 0.
  Timeline(const comm::Communicator& comm, int step);

  // A clock reading for the spans below (steady_ns()).
  static std::int64_t now();
  // Compute action `action` of global stage `stage` ran from `start` until now.
  void compute(const Action& action, int stage, std::int64_t start) const;
  // This rank waited from `start` until now for the `direction` message of
  // (chunk, microbatch) from `peer`.
  void wait(Direction direction, int chunk, int microbatch, int peer, std::int64_t start) const;

 private:
  const bool on_;
  const int world_rank_;
  const int step_;
  std::string thread_;
};

}  // namespace dtrain::parallel::pipeline
