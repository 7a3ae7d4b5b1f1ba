// What an executor is given besides its schedule: the activation every
// chunk boundary carries, and the trainer's stage functions.
#pragma once

#include <cstdint>
#include <functional>

#include "base/dtype.hpp"
#include "base/tensor.hpp"
#include "dtrain/status.h"

namespace dtrain::parallel::pipeline {

// Every activation between consecutive stages, and its gradient: one flat
// vector of `elements` elements of `dtype`.
struct ActivationSpec {
  std::int64_t elements;
  DType dtype;
};

// The trainer's functions (see dtrain/pipeline.h for when each is called
// and with which tensors; nullptr where the C API passes NULL). The tensors
// are host views of one ActivationSpec each. backward_weight and chunk_done
// may be empty.
struct StageFunctions {
  std::function<dt_status(int chunk, int microbatch, const TensorView* input, const TensorView* output)> forward;
  std::function<dt_status(int chunk, int microbatch, const TensorView* grad_output, const TensorView* grad_input)>
      backward;
  std::function<dt_status(int chunk, int microbatch)> backward_weight;
  std::function<dt_status(int chunk)> chunk_done;
};

// What one step measured on this rank.
struct StepStats {
  double step_seconds = 0;
  double recv_wait_seconds = 0;
  double comm_wait_seconds = 0;
  int peak_in_flight = 0;

  double bubble_fraction() const { return step_seconds > 0 ? recv_wait_seconds / step_seconds : 0.0; }
};

}  // namespace dtrain::parallel::pipeline
