// The store's data: keys to values under the store's limits, with no
// networking, so that its rules can be read and tested on their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "bootstrap/store/limits.hpp"

namespace dtrain::bootstrap {

class KvTable {
 public:
  explicit KvTable(const StoreLimits& limits) : limits_(limits) {}

  // Each returns whether the key was created. A new key beyond max_keys, or
  // a value that would take the table beyond max_total_bytes, throws
  // DT_ERR_OUT_OF_MEMORY naming the limit and changes nothing.
  bool set(std::string_view key, std::string_view value);

  // nullptr when absent; valid until the next change.
  const std::string* find(std::string_view key) const;

  // Adds `delta` to the decimal integer the key holds (0 when absent) and
  // returns the sum. DT_ERR_INVALID_USAGE when the key holds something
  // else, DT_ERR_INVALID_ARGUMENT when the sum overflows 64 bits.
  std::int64_t add(std::string_view key, std::int64_t delta, bool* created);

  struct CasOutcome {
    bool swapped = false;
    bool created = false;
    std::optional<std::string> value;  // what the key holds afterwards
  };
  // Sets `desired` when the key holds `expected`, or is absent when
  // `expected` is nullopt.
  CasOutcome compare_and_set(std::string_view key, std::optional<std::string_view> expected,
                             std::string_view desired);

  bool remove(std::string_view key);

  std::size_t size() const { return map_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // Throws unless replacing `old_bytes` of value (or adding the key, when
  // `old` is null) with `new_bytes` stays within the limits.
  void check_room(std::string_view key, const std::string* old, std::size_t new_bytes) const;

  StoreLimits limits_;
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> map_;
  std::size_t bytes_ = 0;  // keys plus values
};

}  // namespace dtrain::bootstrap
