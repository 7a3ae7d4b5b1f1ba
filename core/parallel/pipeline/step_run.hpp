// One training step of one rank: walks the rank's action list, calls the
// stage functions, and moves activations and gradients through the
// communicator. Lives for one step; the executor keeps what outlasts it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "parallel/pipeline/action.hpp"
#include "parallel/pipeline/buffer_pool.hpp"
#include "parallel/pipeline/message_tag.hpp"
#include "parallel/pipeline/stage_functions.hpp"
#include "parallel/pipeline/timeline.hpp"

namespace dtrain::parallel::pipeline {

class StepRun {
 public:
  StepRun(comm::Communicator& comm, const Shape& shape, const std::vector<Action>& actions,
          const std::vector<std::size_t>& next_compute, const ActivationSpec& activation,
          const StageFunctions& functions, BufferPool& pool, std::vector<Buffer>& abandoned, int step);

  // Runs every action. On any failure aborts the communicator, so that no
  // operation stays pending, moves the buffers of the sends and receives
  // it cut short to `abandoned` (the executor keeps them until it is
  // destroyed, in case a transport still touches one), and rethrows, naming
  // this rank and the action.
  StepStats run();

 private:
  struct InFlight {
    comm::RequestPtr request;
    Buffer buffer;
    int peer;
  };

  void run_all();
  void run_action(std::size_t index);
  void forward(const Action& action);
  void backward(const Action& action, bool weights_too);
  void backward_weight(const Action& action);
  void send(const Action& action, Direction direction, std::vector<Buffer>& produced);
  // Posts every receive among actions [posted_, end].
  void post_receives_through(std::size_t end);
  void post_receive(const Action& action);
  // The input a compute action of (chunk, microbatch) reads: a received
  // message (waited for here) or, with one rank, what a local chunk handed over.
  Buffer take_input(Direction direction, int chunk, int microbatch);
  void reap_finished_sends();
  void wait_for_sends();
  void abandon_in_flight();
  void finish_unit(int chunk);
  // Runs a stage function for `action` (on the timeline) and throws its
  // non-OK status.
  template <class Call>
  void run_callback(const Action& action, Call&& call);

  int global_stage(int chunk) const { return chunk * shape_.stages + comm_.rank(); }
  int last_global_stage() const { return shape_.global_stages() - 1; }
  std::size_t unit(int chunk, int microbatch) const {
    return static_cast<std::size_t>(chunk) * shape_.microbatches + microbatch;
  }
  // A buffer as the host view of one activation.
  TensorView view(const Buffer& buffer) const;
  std::string describe(const Action& action) const;

  comm::Communicator& comm_;
  const Shape& shape_;
  const std::vector<Action>& actions_;
  const std::vector<std::size_t>& next_compute_;
  const ActivationSpec& activation_;
  const StageFunctions& functions_;
  BufferPool& pool_;
  std::vector<Buffer>& abandoned_;

  std::size_t posted_ = 0;
  // Indexed by unit(chunk, microbatch) of the compute action they serve.
  std::vector<std::optional<InFlight>> receiving_[2];
  std::vector<Buffer> handed_over_[2];
  std::vector<Buffer> produced_[2];
  std::vector<InFlight> sending_;
  std::vector<int> units_done_;
  int alive_ = 0;
  StepStats stats_;
  Timeline timeline_;
};

}  // namespace dtrain::parallel::pipeline
