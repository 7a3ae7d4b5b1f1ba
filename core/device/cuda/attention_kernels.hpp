// The passes of blockwise attention (device/cuda/attention.hpp) that are not
// products, queued on `stream` on the current device; device pointers.
// Score blocks are rows x cols (queries x keys) row-major; per-query
// statistics are read and written at [r * stride], so that one head's
// column of a [rows, heads] array is addressed in place. Sums over a row
// are taken in double, as on the CPU.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace dtrain::device::cuda {

// Which keys each query of a rows x cols block sees: all, or (causal) those
// with k_positions[j] <= q_positions[i].
struct ScoreMask {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  bool causal = false;
  const std::int64_t* q_positions = nullptr;
  const std::int64_t* k_positions = nullptr;
};

// Forward: each row of scores becomes its softmax over the visible keys (0
// elsewhere), and lse[r * stride] the log-sum-exp of those; a row that sees
// no key becomes zeros with lse -inf. One block per row.
void masked_softmax(const ScoreMask& mask, float* scores, float* lse, std::int64_t stride, cudaStream_t stream);

// Backward: scores become exp(score - lse[r * stride]) where visible, 0
// where hidden or where the row saw no key (lse -inf).
void masked_probabilities(const ScoreMask& mask, float* scores, const float* lse, std::int64_t stride,
                          cudaStream_t stream);

// ds = p * (ds - delta[r * stride]) * scale, element-wise over rows x cols
// (ds holds d_o v^T on entry).
void score_gradient(std::int64_t rows, std::int64_t cols, const float* p, const float* delta, std::int64_t stride,
                    float scale, float* ds, cudaStream_t stream);

// dt_cp_attention_merge over `rows` rows (tokens times heads) of head_dim.
void merge_partial_results(std::int64_t rows, std::int64_t head_dim, float* o, float* lse, const float* o_other,
                           const float* lse_other, cudaStream_t stream);

// delta[r] = sum_c d_o[r, c] * o[r, c] over `rows` rows of head_dim.
void output_dot(std::int64_t rows, std::int64_t head_dim, const float* d_o, const float* o, float* delta,
                cudaStream_t stream);

}  // namespace dtrain::device::cuda
