// Gathering rows by index and scatter-adding rows into a table
// (device/kernel_args.hpp), as grid-stride loops over the elements of the
// gathered rows: neighbouring threads handle neighbouring columns. Summing
// MoE pairs' rows into their tokens runs a block per token, and its
// backward pass a block per pair, whose threads reduce the dot product.
#include "device/cuda/block_reduce.cuh"
#include "device/cuda/element.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/launch.cuh"
#include "device/cuda/layer_kernels.hpp"

namespace dtrain::device::cuda {

namespace {

__device__ std::int64_t index_at(const IndexedRowsArgs& a, std::int64_t i) {
  return a.index_dtype == DType::i32 ? static_cast<const std::int32_t*>(a.indices)[i]
                                     : static_cast<const std::int64_t*>(a.indices)[i];
}

template <typename E, bool kScatterAdd>
__global__ void indexed_rows_kernel(IndexedRowsArgs a) {
  using Bits = typename E::Bits;
  auto* table = static_cast<Bits*>(a.table);
  auto* rows = static_cast<Bits*>(a.rows);
  const std::int64_t total = a.count * a.cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const std::int64_t i = e / a.cols;
    const std::int64_t j = e % a.cols;
    const std::int64_t row = index_at(a, i) - (a.slice ? a.first : 0);
    if (row < 0 || row >= a.table_rows) {
      // Outside a slice: a row of zeros. Outside a whole table: an index
      // the host did not check, skipped.
      if (!kScatterAdd && a.slice) rows[e] = Bits{};
      continue;
    }
    if (kScatterAdd) {
      E::atomic_add(table + row * a.cols + j, E::load(rows[e]));
    } else {
      rows[e] = table[row * a.cols + j];
    }
  }
}

template <bool kScatterAdd>
void launch(const IndexedRowsArgs& args, cudaStream_t stream, const char* what) {
  const std::int64_t total = args.count * args.cols;
  if (total == 0) return;
  with_element(args.dtype, what, [&](auto e) {
    indexed_rows_kernel<decltype(e), kScatterAdd><<<element_blocks(total), kRowThreads, 0, stream>>>(args);
  });
  check_launch(what);
}

// The table row pair p owns, or -1 (none, or an index the host did not check).
__device__ std::int64_t owned_row(const PairRowsArgs& a, std::int64_t p) {
  const std::int64_t row = a.pair_rows[p];
  return row >= 0 && row < a.table_rows ? row : -1;
}

__global__ void pair_rows_sum_kernel(PairRowsArgs a) {
  for (std::int64_t t = blockIdx.x; t < a.tokens; t += gridDim.x) {
    for (std::int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
      float sum = 0.0f;
      for (std::int64_t p = t * a.k; p < (t + 1) * a.k; ++p) {
        const std::int64_t row = owned_row(a, p);
        if (row >= 0) sum += (a.weights ? a.weights[p] : 1.0f) * a.rows[row * a.cols + c];
      }
      a.out[t * a.cols + c] = sum;
    }
  }
}

__global__ void pair_rows_sum_backward_kernel(PairRowsArgs a) {
  for (std::int64_t p = blockIdx.x; p < a.tokens * a.k; p += gridDim.x) {
    const std::int64_t row = owned_row(a, p);
    if (row < 0) {
      if (threadIdx.x == 0) a.d_weights[p] = 0.0f;
      continue;
    }
    const float* d_token = a.d_out + (p / a.k) * a.cols;
    const float w = a.weights[p];
    double dot = 0.0;
    for (std::int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
      dot += static_cast<double>(d_token[c]) * a.rows[row * a.cols + c];
      a.d_rows[row * a.cols + c] = w * d_token[c];
    }
    dot = block_sum(dot);
    if (threadIdx.x == 0) a.d_weights[p] = static_cast<float>(dot);
  }
}

}  // namespace

void pair_rows_sum(const PairRowsArgs& args, cudaStream_t stream) {
  if (args.tokens == 0) return;
  pair_rows_sum_kernel<<<row_blocks(args.tokens), kRowThreads, 0, stream>>>(args);
  check_launch("pair_rows_sum_kernel");
}

void pair_rows_sum_backward(const PairRowsArgs& args, cudaStream_t stream) {
  if (args.tokens == 0) return;
  pair_rows_sum_backward_kernel<<<row_blocks(args.tokens * args.k), kRowThreads, 0, stream>>>(args);
  check_launch("pair_rows_sum_backward_kernel");
}

void gather_rows(const IndexedRowsArgs& args, cudaStream_t stream) { launch<false>(args, stream, "gather_rows"); }

void scatter_add_rows(const IndexedRowsArgs& args, cudaStream_t stream) {
  launch<true>(args, stream, "scatter_add_rows");
}

}  // namespace dtrain::device::cuda
