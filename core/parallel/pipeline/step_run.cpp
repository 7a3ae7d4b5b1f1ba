#include "parallel/pipeline/step_run.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/error.hpp"

namespace dtrain::parallel::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int index_of(Direction direction) { return static_cast<int>(direction); }

}  // namespace

StepRun::StepRun(comm::Communicator& comm, const Shape& shape, const std::vector<Action>& actions,
                 const std::vector<std::size_t>& next_compute, const ActivationSpec& activation,
                 const StageFunctions& functions, BufferPool& pool, std::vector<Buffer>& abandoned, int step)
    : comm_(comm),
      shape_(shape),
      actions_(actions),
      next_compute_(next_compute),
      activation_(activation),
      functions_(functions),
      pool_(pool),
      abandoned_(abandoned),
      units_done_(static_cast<std::size_t>(shape.chunks), 0),
      timeline_(comm, step) {
  const std::size_t units = static_cast<std::size_t>(shape.chunks) * shape.microbatches;
  for (int d = 0; d < 2; ++d) {
    receiving_[d].resize(units);
    handed_over_[d].resize(units);
    produced_[d].resize(units);
  }
}

StepStats StepRun::run() {
  const Clock::time_point start = Clock::now();
  try {
    run_all();
    wait_for_sends();
  } catch (...) {
    comm_.abort();
    abandon_in_flight();
    throw;
  }
  stats_.step_seconds = seconds_since(start);
  return stats_;
}

void StepRun::run_all() {
  for (std::size_t index = 0; index < actions_.size(); ++index) {
    try {
      run_action(index);
    } catch (const Error& error) {
      throw Error(error.status(),
                  "rank " + std::to_string(comm_.rank()) + ": " + describe(actions_[index]) + ": " + error.what());
    }
  }
}

void StepRun::run_action(std::size_t index) {
  const Action& action = actions_[index];
  switch (action.kind) {
    case ActionKind::recv_activation:
    case ActionKind::recv_grad:
      post_receives_through(index);
      return;
    case ActionKind::send_activation:
      send(action, Direction::activation, produced_[index_of(Direction::activation)]);
      return;
    case ActionKind::send_grad:
      send(action, Direction::gradient, produced_[index_of(Direction::gradient)]);
      return;
    case ActionKind::forward:
    case ActionKind::backward:
    case ActionKind::backward_input:
    case ActionKind::backward_weight:
      break;
  }
  // The receives the next compute action needs travel while this one runs.
  post_receives_through(next_compute_[index]);
  switch (action.kind) {
    case ActionKind::forward: forward(action); break;
    case ActionKind::backward: backward(action, true); break;
    case ActionKind::backward_input: backward(action, false); break;
    default: backward_weight(action); break;
  }
  reap_finished_sends();
}

void StepRun::forward(const Action& action) {
  const int stage = global_stage(action.chunk);
  Buffer input = stage > 0 ? take_input(Direction::activation, action.chunk, action.microbatch) : nullptr;
  Buffer output = stage < last_global_stage() ? pool_.acquire() : nullptr;
  const TensorView input_view = view(input);
  const TensorView output_view = view(output);
  run_callback(action, [&] {
    return functions_.forward(action.chunk, action.microbatch, input ? &input_view : nullptr,
                              output ? &output_view : nullptr);
  });
  pool_.release(std::move(input));
  stats_.peak_in_flight = std::max(stats_.peak_in_flight, ++alive_);
  if (!output) return;
  const int a = index_of(Direction::activation);
  if (shape_.stages == 1) {
    handed_over_[a][unit(action.chunk + 1, action.microbatch)] = std::move(output);
  } else {
    produced_[a][unit(action.chunk, action.microbatch)] = std::move(output);
  }
}

void StepRun::backward(const Action& action, bool weights_too) {
  const int stage = global_stage(action.chunk);
  Buffer grad_output =
      stage < last_global_stage() ? take_input(Direction::gradient, action.chunk, action.microbatch) : nullptr;
  Buffer grad_input = stage > 0 ? pool_.acquire() : nullptr;
  const TensorView grad_output_view = view(grad_output);
  const TensorView grad_input_view = view(grad_input);
  run_callback(action, [&] {
    return functions_.backward(action.chunk, action.microbatch, grad_output ? &grad_output_view : nullptr,
                               grad_input ? &grad_input_view : nullptr);
  });
  pool_.release(std::move(grad_output));
  if (grad_input) {
    const int g = index_of(Direction::gradient);
    if (shape_.stages == 1) {
      handed_over_[g][unit(action.chunk - 1, action.microbatch)] = std::move(grad_input);
    } else {
      produced_[g][unit(action.chunk, action.microbatch)] = std::move(grad_input);
    }
  }
  if (weights_too) finish_unit(action.chunk);
}

void StepRun::backward_weight(const Action& action) {
  run_callback(action, [&] { return functions_.backward_weight(action.chunk, action.microbatch); });
  finish_unit(action.chunk);
}

// A (chunk, micro-batch) pair is alive from its forward until its weight
// gradient; the chunk's gradients are complete after its m-th.
void StepRun::finish_unit(int chunk) {
  --alive_;
  if (++units_done_[static_cast<std::size_t>(chunk)] == shape_.microbatches && functions_.chunk_done) {
    const dt_status status = functions_.chunk_done(chunk);
    if (status != DT_OK) {
      raise(status, "the chunk_done callback of chunk " + std::to_string(chunk) + " returned status " +
                        std::to_string(status));
    }
  }
}

template <class Call>
void StepRun::run_callback(const Action& action, Call&& call) {
  const std::int64_t start = Timeline::now();
  const dt_status status = call();
  timeline_.compute(action, global_stage(action.chunk), start);
  if (status != DT_OK) raise(status, "the callback returned status " + std::to_string(status));
}

void StepRun::send(const Action& action, Direction direction, std::vector<Buffer>& produced) {
  Buffer buffer = std::move(produced[unit(action.chunk, action.microbatch)]);
  const int tag = message_tag(direction, action.chunk, action.microbatch, shape_);
  sending_.push_back(InFlight{comm_.send(view(buffer), action.peer, tag), std::move(buffer), action.peer});
}

void StepRun::post_receives_through(std::size_t end) {
  for (; posted_ <= end && posted_ < actions_.size(); ++posted_) {
    const Action& action = actions_[posted_];
    if (action.kind == ActionKind::recv_activation || action.kind == ActionKind::recv_grad) post_receive(action);
  }
}

// The sender of an activation is the previous rank, one chunk lower when the
// model wraps from rank p - 1 to rank 0; of a gradient the next rank, one
// chunk higher when it wraps from rank 0 to rank p - 1.
void StepRun::post_receive(const Action& action) {
  const bool activation = action.kind == ActionKind::recv_activation;
  const Direction direction = activation ? Direction::activation : Direction::gradient;
  const int wraps = activation ? (comm_.rank() == 0 ? -1 : 0) : (comm_.rank() == shape_.stages - 1 ? 1 : 0);
  const int tag = message_tag(direction, action.chunk + wraps, action.microbatch, shape_);
  Buffer buffer = pool_.acquire();
  comm::RequestPtr request = comm_.recv(view(buffer), action.peer, tag);
  receiving_[index_of(direction)][unit(action.chunk, action.microbatch)] = InFlight{request, std::move(buffer), action.peer};
}

Buffer StepRun::take_input(Direction direction, int chunk, int microbatch) {
  const std::size_t u = unit(chunk, microbatch);
  const int d = index_of(direction);
  if (shape_.stages == 1) return std::move(handed_over_[d][u]);
  InFlight in_flight = std::move(*receiving_[d][u]);
  receiving_[d][u].reset();
  const Clock::time_point start = Clock::now();
  const std::int64_t span_start = Timeline::now();
  try {
    comm_.wait(in_flight.request, -1);
  } catch (const Error& error) {
    throw Error(error.status(), std::string("waiting for the ") +
                                    (direction == Direction::activation ? "activation" : "gradient") + " from rank " +
                                    std::to_string(in_flight.peer) + ": " + error.what());
  }
  timeline_.wait(direction, chunk, microbatch, in_flight.peer, span_start);
  const double waited = seconds_since(start);
  stats_.recv_wait_seconds += waited;
  stats_.comm_wait_seconds += waited;
  return std::move(in_flight.buffer);
}

void StepRun::reap_finished_sends() {
  auto done = std::stable_partition(sending_.begin(), sending_.end(),
                                    [&](const InFlight& s) { return comm_.test(s.request) != DT_OK; });
  for (auto it = done; it != sending_.end(); ++it) pool_.release(std::move(it->buffer));
  sending_.erase(done, sending_.end());
}

void StepRun::wait_for_sends() {
  const Clock::time_point start = Clock::now();
  for (InFlight& s : sending_) {
    try {
      comm_.wait(s.request, -1);
    } catch (const Error& error) {
      throw Error(error.status(), "rank " + std::to_string(comm_.rank()) +
                                      ": at the end of the step, waiting for a send to rank " + std::to_string(s.peer) + ": " + error.what());
    }
    pool_.release(std::move(s.buffer));
  }
  sending_.clear();
  stats_.comm_wait_seconds += seconds_since(start);
}

void StepRun::abandon_in_flight() {
  for (auto& direction : receiving_) {
    for (auto& in_flight : direction) {
      if (in_flight) abandoned_.push_back(std::move(in_flight->buffer));
    }
  }
  for (InFlight& s : sending_) abandoned_.push_back(std::move(s.buffer));
}

TensorView StepRun::view(const Buffer& buffer) const {
  return host_view(buffer.get(), activation_.elements, activation_.dtype);
}

std::string StepRun::describe(const Action& action) const {
  std::string text = std::string(action_name(action.kind)) + " of chunk " + std::to_string(action.chunk) +
                     ", micro-batch " + std::to_string(action.microbatch);
  if (action.kind == ActionKind::send_activation || action.kind == ActionKind::send_grad) {
    text += " to rank " + std::to_string(action.peer);
  }
  return text;
}

}  // namespace dtrain::parallel::pipeline
