#include "bootstrap/store/kv_table.hpp"

#include <charconv>

#include "base/error.hpp"

namespace dtrain::bootstrap {

namespace {

std::string quoted(std::string_view key) {
  constexpr std::size_t kShown = 64;
  std::string out = "'" + std::string(key.substr(0, kShown));
  if (key.size() > kShown) out += "...";
  return out + "'";
}

}  // namespace

void KvTable::check_room(std::string_view key, const std::string* old, std::size_t new_bytes) const {
  if (old == nullptr && map_.size() >= limits_.max_keys) {
    raise(DT_ERR_OUT_OF_MEMORY, "the store holds its limit of " + std::to_string(limits_.max_keys) +
                                    " keys; key " + quoted(key) + " was not added");
  }
  std::size_t freed = old != nullptr ? old->size() : 0;
  std::size_t added = new_bytes + (old == nullptr ? key.size() : 0);
  if (bytes_ - freed + added > limits_.max_total_bytes) {
    raise(DT_ERR_OUT_OF_MEMORY, "the store would hold more than its limit of " +
                                    std::to_string(limits_.max_total_bytes) + " bytes; key " + quoted(key) +
                                    " was not changed");
  }
}

bool KvTable::set(std::string_view key, std::string_view value) {
  auto it = map_.find(key);
  if (it != map_.end()) {
    check_room(key, &it->second, value.size());
    bytes_ = bytes_ - it->second.size() + value.size();
    it->second.assign(value);
    return false;
  }
  check_room(key, nullptr, value.size());
  map_.emplace(std::string(key), std::string(value));
  bytes_ += key.size() + value.size();
  return true;
}

const std::string* KvTable::find(std::string_view key) const {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

std::int64_t KvTable::add(std::string_view key, std::int64_t delta, bool* created) {
  std::int64_t current = 0;
  if (const std::string* old = find(key)) {
    const char* end = old->data() + old->size();
    auto [ptr, ec] = std::from_chars(old->data(), end, current);
    if (old->empty() || ec != std::errc() || ptr != end) {
      raise(DT_ERR_INVALID_USAGE, "key " + quoted(key) + " holds a value that is not a counter");
    }
  }
  std::int64_t sum = 0;
  if (__builtin_add_overflow(current, delta, &sum)) {
    raise(DT_ERR_INVALID_ARGUMENT, "adding " + std::to_string(delta) + " to key " + quoted(key) + " (" +
                                       std::to_string(current) + ") overflows a 64-bit integer");
  }
  *created = set(key, std::to_string(sum));
  return sum;
}

KvTable::CasOutcome KvTable::compare_and_set(std::string_view key, std::optional<std::string_view> expected,
                                             std::string_view desired) {
  CasOutcome outcome;
  const std::string* old = find(key);
  bool matches = expected ? (old != nullptr && *old == *expected) : old == nullptr;
  if (matches) {
    outcome.created = set(key, desired);
    outcome.swapped = true;
    outcome.value = std::string(desired);
  } else if (old != nullptr) {
    outcome.value = *old;
  }
  return outcome;
}

bool KvTable::remove(std::string_view key) {
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  bytes_ -= it->first.size() + it->second.size();
  map_.erase(it);
  return true;
}

}  // namespace dtrain::bootstrap
