// Gathering rows by index and scatter-adding rows into a table
// (device/kernel_args.hpp), as grid-stride loops over the elements of the
// gathered rows: neighbouring threads handle neighbouring columns.
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

}  // namespace

void gather_rows(const IndexedRowsArgs& args, cudaStream_t stream) { launch<false>(args, stream, "gather_rows"); }

void scatter_add_rows(const IndexedRowsArgs& args, cudaStream_t stream) {
  launch<true>(args, stream, "scatter_add_rows");
}

}  // namespace dtrain::device::cuda
