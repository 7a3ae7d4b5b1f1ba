// Which tensors share a reduction bucket. Backward produces the gradients of
// the last layers first, so buckets are filled in reverse registration order:
// the first bucket holds the gradients that are ready first and can start its
// collective while the rest of backward runs. A bucket holds one dtype (one
// collective per bucket) and is closed once it reaches `bucket_bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/dtype.hpp"

namespace dtrain::parallel::common {

struct BucketPlan {
  DType dtype = DType::f32;
  std::vector<std::size_t> members;  // tensor indices, in the order they sit in the bucket
};

// Buckets for tensors of the given dtypes (as they are held in the bucket)
// and element counts, in launch order. Tensors of different dtypes fill
// separate buckets side by side; a bucket's place in the order is where its
// first tensor falls.
std::vector<BucketPlan> plan_buckets(const std::vector<DType>& dtypes, const std::vector<std::int64_t>& counts,
                                     std::int64_t bucket_bytes);

}  // namespace dtrain::parallel::common
