// Ring attention (dtrain/cp.h): each rank keeps its queries and passes key
// and value blocks to the next rank, computing on the block it holds while
// the next one arrives, until it has seen every rank's block. Arguments are
// checked and agreed on by the caller (capi); these run the ring.
#pragma once

#include "comm/communicator.hpp"
#include "parallel/cp/layout.hpp"
#include "parallel/cp/sharded_attention.hpp"

namespace dtrain::parallel::cp {

// A ShardedForward.
void ring_attention_forward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                            const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                            float* lse);

// A ShardedBackward. dq sums locally; each other rank's key/value block
// travels with a gradient accumulator that every rank it visits adds its
// queries' contribution to, and that reaches the block's owner last. The
// owner's own contribution never travels: half of its queries' share is
// computed before the first block arrives and half while the accumulator
// comes home, so that neither transfer waits on an idle rank.
void ring_attention_backward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                             const AttentionShape& shape, const GradientInputs& in, float* dq, float* dk,
                             float* dv);

}  // namespace dtrain::parallel::cp
