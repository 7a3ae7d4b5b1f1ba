// What the two ways of attending over a sequence sharded between ranks
// (ring.hpp, ulysses.hpp) share: the same inputs and outputs, so that the C
// API checks and agrees on arguments once for both. Every array is in the
// memory of `queue` (host memory, or the CUDA device of the call), whose
// work the calls queue their attention, copies and sums on; they return
// with it queued, not necessarily run.
#pragma once

#include "comm/communicator.hpp"
#include "device/attention.hpp"
#include "parallel/cp/layout.hpp"

namespace dtrain::parallel::cp {

using device::AttentionShape;

// o and lse of this rank's queries against the whole sequence. Every rank
// holds shape.q_rows == shape.kv_rows rows of `layout`.
using ShardedForward = void (*)(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                                const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                                float* lse);

// What the backward pass reads: the forward pass's inputs and results, and
// the gradient of its output.
struct GradientInputs {
  const float* q;
  const float* k;
  const float* v;
  const float* o;
  const float* lse;
  const float* d_o;
};

// dq, dk and dv (overwritten) of this rank's rows.
using ShardedBackward = void (*)(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                                 const AttentionShape& shape, const GradientInputs& in, float* dq, float* dk,
                                 float* dv);

}  // namespace dtrain::parallel::cp
