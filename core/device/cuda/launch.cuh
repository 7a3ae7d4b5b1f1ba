// Launch shapes of the CUDA layer kernels: row kernels give each row one
// block of kRowThreads threads (grid-striding over rows beyond kMaxBlocks);
// element-wise kernels are grid-stride loops of kRowThreads-thread blocks.
#pragma once

#include <cstdint>

namespace dtrain::device::cuda {

inline constexpr int kRowThreads = 256;  // a multiple of the warp size
inline constexpr std::int64_t kMaxBlocks = 65535;

inline int row_blocks(std::int64_t rows) { return static_cast<int>(rows < kMaxBlocks ? rows : kMaxBlocks); }

inline int element_blocks(std::int64_t count) {
  const std::int64_t blocks = (count + kRowThreads - 1) / kRowThreads;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace dtrain::device::cuda
