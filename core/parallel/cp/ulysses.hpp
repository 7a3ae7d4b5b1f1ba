// All-to-all (Ulysses) attention (dtrain/cp.h): one all-to-all turns each
// rank's rows of every head into every row of its share of the heads; each
// rank attends over the whole sequence for its heads alone, and a second
// all-to-all returns the results to the ranks that own the rows. Both head
// counts must be divisible by the group size (checked by the caller, with
// the rest of the arguments).
#pragma once

#include "comm/communicator.hpp"
#include "parallel/cp/layout.hpp"
#include "parallel/cp/sharded_attention.hpp"

namespace dtrain::parallel::cp {

// A ShardedForward.
void ulysses_attention_forward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                               const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                               float* lse);

// A ShardedBackward: the gradients of each rank's heads over the whole
// sequence, returned to the rows' owners by the reverse all-to-all.
void ulysses_attention_backward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                                const AttentionShape& shape, const GradientInputs& in, float* dq, float* dk,
                                float* dv);

}  // namespace dtrain::parallel::cp
