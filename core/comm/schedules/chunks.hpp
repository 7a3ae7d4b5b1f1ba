// How pipelined schedules cut buffers: into `n` near-equal segments (one per
// rank, the first count % n one element longer) and segments into chunks,
// one lane per chunk index.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/dtype.hpp"
#include "comm/schedules/operation.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm::schedule {

struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

inline Range segment(std::int64_t total, int parts, int index) {
  const std::int64_t base = total / parts;
  const std::int64_t extra = total % parts;
  return {index * base + std::min<std::int64_t>(index, extra), base + (index < extra ? 1 : 0)};
}

// Chunk `lane` of `whole`; empty past its end.
inline Range chunk(Range whole, std::int64_t chunk_elements, int lane) {
  const std::int64_t start = static_cast<std::int64_t>(lane) * chunk_elements;
  const std::int64_t n = std::clamp<std::int64_t>(whole.count - start, 0, chunk_elements);
  return {whole.first + start, n};
}

// Elements per chunk for pieces of at most `longest` elements: the
// communicator's chunk size, grown when needed so that lane numbers fit the
// tag's step field.
inline std::int64_t chunk_elements(const Pipelining& pipelining, DType dtype, std::int64_t longest) {
  const std::int64_t tuned =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(pipelining.chunk_bytes / dtype_size(dtype)));
  const std::int64_t least = (longest + kStepLimit - 1) / kStepLimit;
  return std::max(tuned, least);
}

inline int lanes_for(std::int64_t longest, std::int64_t chunk_elements) {
  return static_cast<int>((longest + chunk_elements - 1) / chunk_elements);
}

// Scratch space that is always written before it is read: left
// uninitialised, since clearing it would cost as much as a pass of the
// schedule over it.
using Scratch = std::unique_ptr<std::byte[]>;
inline Scratch scratch(std::size_t bytes) { return std::make_unique_for_overwrite<std::byte[]>(bytes); }

inline int mod(int value, int n) { return ((value % n) + n) % n; }

}  // namespace dtrain::comm::schedule
