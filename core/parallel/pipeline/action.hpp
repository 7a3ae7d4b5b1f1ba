// A pipeline schedule as data: what one rank does, step by step. The values
// of both enums are those of the C API (dtrain/pipeline.h) and never change.
#pragma once

namespace dtrain::parallel::pipeline {

enum class ScheduleKind : int { gpipe = 0, one_f_one_b = 1, interleaved_1f1b = 2, zb_h1 = 3 };

enum class ActionKind : int {
  forward = 0,
  backward = 1,         // input and weight gradients together
  backward_input = 2,   // input gradient only (zero-bubble schedules)
  backward_weight = 3,  // weight gradient only (zero-bubble schedules)
  send_activation = 4,
  recv_activation = 5,
  send_grad = 6,
  recv_grad = 7,
};

// The C API's name of a kind (DT_PIPELINE_<name>), as messages and the
// timeline spell it.
inline const char* action_name(ActionKind kind) {
  switch (kind) {
    case ActionKind::forward: return "FORWARD";
    case ActionKind::backward: return "BACKWARD";
    case ActionKind::backward_input: return "BACKWARD_INPUT";
    case ActionKind::backward_weight: return "BACKWARD_WEIGHT";
    case ActionKind::send_activation: return "SEND_ACTIVATION";
    case ActionKind::recv_activation: return "RECV_ACTIVATION";
    case ActionKind::send_grad: return "SEND_GRAD";
    case ActionKind::recv_grad: return "RECV_GRAD";
  }
  return "unknown action";
}

// `peer` is the rank a send goes to or a receive comes from; compute actions
// have none (kNoPeer).
struct Action {
  ActionKind kind;
  int chunk;
  int microbatch;
  int peer;

  friend bool operator==(const Action&, const Action&) = default;
};

inline constexpr int kNoPeer = -1;

// p ranks (stages of the pipeline group), m micro-batches, v model chunks
// per rank. Chunk c of rank r is global stage c * stages + r.
struct Shape {
  int stages;
  int microbatches;
  int chunks;

  int global_stages() const { return stages * chunks; }
};

}  // namespace dtrain::parallel::pipeline
