// Just enough JSON to read back what dtbench and the MPI peer write.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtbench::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  // The member `key` of an object, or nullptr.
  const Value* find(std::string_view key) const;
};

// Throws std::runtime_error naming the offset of the first error.
Value parse(std::string_view text);
Value parse_file(const std::string& path);

}  // namespace dtbench::json
