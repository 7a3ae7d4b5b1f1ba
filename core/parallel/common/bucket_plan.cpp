#include "parallel/common/bucket_plan.hpp"

#include <map>

namespace dtrain::parallel::common {

std::vector<BucketPlan> plan_buckets(const std::vector<DType>& dtypes, const std::vector<std::int64_t>& counts,
                                     std::int64_t bucket_bytes) {
  std::vector<BucketPlan> plans;
  // For each dtype, the bucket still being filled and its size so far.
  std::map<DType, std::pair<std::size_t, std::int64_t>> open;
  for (std::size_t k = dtypes.size(); k-- > 0;) {
    const DType dtype = dtypes[k];
    auto it = open.find(dtype);
    if (it == open.end()) {
      plans.push_back(BucketPlan{dtype, {}});
      it = open.emplace(dtype, std::make_pair(plans.size() - 1, std::int64_t{0})).first;
    }
    auto& [bucket, bytes] = it->second;
    plans[bucket].members.push_back(k);
    const std::int64_t size = counts[k] * static_cast<std::int64_t>(dtype_size(dtype));
    if (size >= bucket_bytes - bytes) {
      open.erase(it);  // full (compared without overflowing the running total)
    } else {
      bytes += size;
    }
  }
  return plans;
}

}  // namespace dtrain::parallel::common
