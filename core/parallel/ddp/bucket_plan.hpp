// Which gradients share a bucket: common::plan_buckets over the dtypes the
// gradients travel in, so that a bucket holds one wire dtype.
#pragma once

#include <cstdint>
#include <vector>

#include "base/dtype.hpp"
#include "parallel/common/bucket_plan.hpp"
#include "parallel/ddp/options.hpp"

namespace dtrain::parallel::ddp {

// The type a gradient of `dtype` travels in under `compression`.
DType wire_dtype(DType dtype, Compression compression);

// Buckets for gradients of the given dtypes and element counts, in launch
// order; each plan's dtype is its wire dtype, and `options.bucket_bytes`
// counts bytes on the wire.
std::vector<common::BucketPlan> plan_buckets(const std::vector<DType>& dtypes, const std::vector<std::int64_t>& counts,
                                             const Options& options);

}  // namespace dtrain::parallel::ddp
