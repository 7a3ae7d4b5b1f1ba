// A C caller may pass any int where the C API declares an enum, but in C++
// loading an enum object whose value lies outside the enum's range is
// undefined. Enums arriving from C are therefore read as raw ints, by
// copying their bytes, and only then checked.
#pragma once

#include <cstring>
#include <type_traits>

namespace dtrain {

template <typename Enum>
int enum_value(const Enum& value) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int), "a C enum");
  int raw;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

}  // namespace dtrain
