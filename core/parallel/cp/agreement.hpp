// Before a ring (or all-to-all) of attention blocks starts, the ranks check
// that they all mean the same attention: the same layout, masking, scale and
// shapes, and tensors in the same kind of memory (host or CUDA). Otherwise a rank would wait for a block of another size, or one
// that never comes. A rank that refused its own arguments still takes part,
// so that the others hear of it instead of waiting.
#pragma once

#include <exception>
#include <string>

#include "comm/communicator.hpp"
#include "parallel/cp/sharded_attention.hpp"
#include "parallel/cp/layout.hpp"

namespace dtrain::parallel::cp {

// Collective over `comm`. `local_failure` set: this rank's shape is not
// looked at and the failure is rethrown after the exchange. Otherwise throws
// DT_ERR_MISMATCH, "<context>: ranks disagree: ...", on every rank when a
// rank refused its arguments or the ranks' layouts or shapes differ.
// `on_device`: the tensors are in CUDA memory.
void agree_on_attention(comm::Communicator& comm, const std::string& context, SequenceLayout layout,
                        const AttentionShape& shape, bool on_device, const std::exception_ptr& local_failure);

}  // namespace dtrain::parallel::cp
