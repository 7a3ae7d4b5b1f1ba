#include "parallel/zero/layout.hpp"

#include <algorithm>
#include <string>

#include "base/error.hpp"
#include "parallel/common/bucket_plan.hpp"

namespace dtrain::parallel::zero {

Layout::Layout(const std::vector<std::int64_t>& counts, const std::vector<std::size_t>& unit_sizes, int shards,
               int shard_index)
    : shard_index_(shard_index) {
  places_.resize(counts.size());
  std::size_t param = 0;
  std::int64_t global = 0;
  for (std::size_t size : unit_sizes) {
    Unit unit;
    unit.first_param = param;
    unit.params = size;
    unit.first_element = global;
    for (std::size_t k = 0; k < size; ++k, ++param) {
      places_[param] = Place{units_.size(), unit.count, counts[param]};
      unit.count += counts[param];
    }
    unit.padded = (unit.count + shards - 1) / shards * shards;
    unit.shard = unit.padded / shards;
    global += unit.count;
    units_.push_back(unit);
  }
}

void Layout::check_parameter(std::size_t param) const {
  if (param >= places_.size()) {
    raise(DT_ERR_INVALID_ARGUMENT, "parameter index " + std::to_string(param) + " is out of range: there are " +
                                       std::to_string(places_.size()) + " parameters");
  }
}

void Layout::check_unit(std::size_t unit) const {
  if (unit >= units_.size()) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "unit " + std::to_string(unit) + " is out of range: there are " + std::to_string(units_.size()) + " units");
  }
}

Range Layout::owned(const Unit& unit) const {
  return overlap(shard(unit), {0, unit.count});
}

std::vector<std::size_t> bucket_units(const std::vector<std::int64_t>& counts, DType dtype, std::int64_t bucket_bytes) {
  const std::vector<common::BucketPlan> plans =
      common::plan_buckets(std::vector<DType>(counts.size(), dtype), counts, bucket_bytes);
  // One dtype, so each bucket is a run of consecutive parameters, and the
  // buckets come last parameter first.
  std::vector<std::size_t> sizes;
  for (auto plan = plans.rbegin(); plan != plans.rend(); ++plan) sizes.push_back(plan->members.size());
  return sizes;
}

}  // namespace dtrain::parallel::zero
