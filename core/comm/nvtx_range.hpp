// NVTX ranges around communicator operations, for Nsight Systems and other
// NVTX tools: one range per operation, from its start to its completion,
// named by its kind ("allreduce"). Start and end may come on different
// threads, so these are start/end ranges, not push/pop. Compiled in only
// with CUDA (the nvtx3 headers of the CUDA toolkit); without a tool
// attached each call is a check of a function pointer.
#pragma once

#include <atomic>
#include <cstdint>

#ifdef DTRAIN_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace dtrain::comm::nvtx {

// The range an operation holds open: 0 when none.
using RangeId = std::atomic<std::uint64_t>;

#ifdef DTRAIN_HAVE_CUDA
inline void start(RangeId& range, const char* name) {
  range.store(nvtxRangeStartA(name), std::memory_order_relaxed);
}
inline void end(RangeId& range) {
  const std::uint64_t id = range.exchange(0, std::memory_order_relaxed);
  if (id != 0) nvtxRangeEnd(id);
}
#else
inline void start(RangeId&, const char*) {}
inline void end(RangeId&) {}
#endif

}  // namespace dtrain::comm::nvtx
