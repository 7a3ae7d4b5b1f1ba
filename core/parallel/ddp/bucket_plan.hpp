// Which gradients share a bucket. Backward produces the gradients of the last
// layers first, so buckets are filled in reverse registration order: the
// first bucket holds the gradients that are ready first and can start its
// allreduce while the rest of backward runs. A bucket holds one wire dtype
// (one allreduce per bucket) and is closed once it reaches `bucket_bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/dtype.hpp"
#include "parallel/ddp/options.hpp"

namespace dtrain::parallel::ddp {

struct BucketPlan {
  DType wire = DType::f32;
  std::vector<std::size_t> members;  // gradient indices, in the order they sit in the bucket
};

// The type a gradient of `dtype` travels in under `compression`.
DType wire_dtype(DType dtype, Compression compression);

// Buckets for gradients of the given dtypes and element counts, in launch
// order. Gradients of different wire dtypes fill separate buckets side by
// side; a bucket's place in the order is where its first gradient falls.
std::vector<BucketPlan> plan_buckets(const std::vector<DType>& dtypes, const std::vector<std::int64_t>& counts,
                                     const Options& options);

}  // namespace dtrain::parallel::ddp
