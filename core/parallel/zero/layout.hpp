// Where every element of a sharded model lives. Parameters are grouped into
// units (contiguous runs of parameters in registration order); each unit is
// flattened, padded with zeros to a multiple of the shard count and cut
// into that many equal shards, of which this rank owns one. Collectives then
// work on whole units with equal pieces per rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/dtype.hpp"

namespace dtrain::parallel::zero {

struct Unit {
  std::size_t first_param = 0;  // its parameters are [first_param, first_param + params)
  std::size_t params = 0;
  std::int64_t first_element = 0;  // global index of its first element (padding not counted)
  std::int64_t count = 0;          // its parameters' elements
  std::int64_t padded = 0;         // count rounded up to a multiple of the shard count
  std::int64_t shard = 0;          // padded / shard count

  std::int64_t padding() const { return padded - count; }
};

// Parameter i is elements [offset, offset + count) of unit `unit`.
struct Place {
  std::size_t unit = 0;
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

// Elements [first, first + count) of something.
struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

// The elements `a` and `b` share; count 0 (at a's first or b's) when none.
inline Range overlap(Range a, Range b) {
  const std::int64_t first = a.first > b.first ? a.first : b.first;
  const std::int64_t end = std::min(a.first + a.count, b.first + b.count);
  return {first, end > first ? end - first : 0};
}

class Layout {
 public:
  // `counts[i]`: parameter i's elements. `unit_sizes`: parameters per unit,
  // adding up to counts.size(). Rank `shard_index` of `shards` owns shard
  // `shard_index` of every unit.
  Layout(const std::vector<std::int64_t>& counts, const std::vector<std::size_t>& unit_sizes, int shards,
         int shard_index);

  const std::vector<Unit>& units() const { return units_; }
  const Unit& unit(std::size_t u) const { return units_[u]; }
  const Place& place(std::size_t param) const { return places_[param]; }
  std::size_t parameter_count() const { return places_.size(); }

  // Throw DT_ERR_INVALID_ARGUMENT for an index out of range.
  void check_parameter(std::size_t param) const;
  void check_unit(std::size_t unit) const;

  // This rank's shard of `unit`, in elements from the unit's start.
  Range shard(const Unit& unit) const { return {unit.shard * shard_index_, unit.shard}; }
  // The part of this rank's shard that holds parameters rather than padding.
  Range owned(const Unit& unit) const;

 private:
  std::vector<Unit> units_;
  std::vector<Place> places_;
  int shard_index_;
};

// Parameters per unit for stages 0–2: buckets of at least `bucket_bytes`
// formed from the last parameter backwards (backward produces the last
// layers' gradients first), returned in registration order.
std::vector<std::size_t> bucket_units(const std::vector<std::int64_t>& counts, DType dtype, std::int64_t bucket_bytes);

}  // namespace dtrain::parallel::zero
