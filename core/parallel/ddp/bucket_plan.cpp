#include "parallel/ddp/bucket_plan.hpp"

#include <map>

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

std::vector<BucketPlan> plan_buckets(const std::vector<DType>& dtypes, const std::vector<std::int64_t>& counts,
                                     const Options& options) {
  std::vector<BucketPlan> plans;
  // For each wire dtype, the bucket still being filled and its size so far.
  std::map<DType, std::pair<std::size_t, std::int64_t>> open;
  for (std::size_t k = dtypes.size(); k-- > 0;) {
    const DType wire = wire_dtype(dtypes[k], options.compression);
    auto it = open.find(wire);
    if (it == open.end()) {
      plans.push_back(BucketPlan{wire, {}});
      it = open.emplace(wire, std::make_pair(plans.size() - 1, std::int64_t{0})).first;
    }
    auto& [bucket, bytes] = it->second;
    plans[bucket].members.push_back(k);
    const std::int64_t size = counts[k] * static_cast<std::int64_t>(dtype_size(wire));
    if (size >= options.bucket_bytes - bytes) {
      open.erase(it);  // full (compared without overflowing the running total)
    } else {
      bytes += size;
    }
  }
  return plans;
}

}  // namespace dtrain::parallel::ddp
