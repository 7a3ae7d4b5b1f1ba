#include "parallel/ddp/bucket_plan.hpp"

namespace dtrain::parallel::ddp {

DType wire_dtype(DType dtype, Compression compression) {
  if (dtype != DType::f32 && dtype != DType::f64) return dtype;
  switch (compression) {
    case Compression::none: return dtype;
    case Compression::f16: return DType::f16;
    case Compression::bf16: return DType::bf16;
  }
  return dtype;
}

std::vector<common::BucketPlan> plan_buckets(const std::vector<DType>& dtypes, const std::vector<std::int64_t>& counts,
                                             const Options& options) {
  std::vector<DType> wires;
  wires.reserve(dtypes.size());
  for (DType dtype : dtypes) wires.push_back(wire_dtype(dtype, options.compression));
  return common::plan_buckets(wires, counts, options.bucket_bytes);
}

}  // namespace dtrain::parallel::ddp
