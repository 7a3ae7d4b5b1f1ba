// Versioned options structs. A struct starts with `unsigned version` and only
// ever grows at its end; kSizes[v] is the size of version v. A caller compiled
// against version v may hand in a struct of only that size, so the library
// copies exactly that prefix and leaves newer fields at their defaults.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "base/error.hpp"

namespace dtrain {

// `sizes` has one entry per version, sizes[0] unused; the last is the newest.
template <typename Options, std::size_t N>
Options read_options(const Options* user, const Options& defaults, const std::size_t (&sizes)[N],
                     const char* name) {
  static_assert(N >= 2, "a versions table starts at version 1");
  Options result = defaults;
  if (user == nullptr) return result;
  unsigned version = user->version;
  if (version == 0 || version >= N) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + ".version = " + std::to_string(version) +
                                       " is not supported by this library (1.." +
                                       std::to_string(N - 1) + "); initialise it with its _INIT macro");
  }
  std::memcpy(static_cast<void*>(&result), user, sizes[version]);
  result.version = static_cast<unsigned>(N - 1);
  return result;
}

// Writes the defaults of `version` into `out`: only that version's prefix.
template <typename Options, std::size_t N>
void init_options(Options* out, unsigned version, const Options& defaults,
                  const std::size_t (&sizes)[N], const char* name) {
  if (out == nullptr) raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  if (version == 0 || version >= N) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + ": version " + std::to_string(version) +
                                       " is not supported by this library (1.." +
                                       std::to_string(N - 1) + ")");
  }
  std::memcpy(static_cast<void*>(out), &defaults, sizes[version]);
  out->version = version;
}

// For a struct the library fills in (step info, memory figures): throws
// DT_ERR_INVALID_ARGUMENT unless its caller-set `version` is one this
// library writes. `init` names the macro that sets it.
template <std::size_t N>
void check_output_version(unsigned version, const std::size_t (&)[N], const char* name, const char* init) {
  static_assert(N >= 2, "a versions table starts at version 1");
  if (version == 0 || version >= N) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + "->version = " + std::to_string(version) +
                                       " is not supported by this library (1.." + std::to_string(N - 1) +
                                       "); initialise it with " + init);
  }
}

}  // namespace dtrain
