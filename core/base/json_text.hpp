// A string as a JSON string literal, for the files the library writes a
// line at a time in its own layout (traces, flight records, plans):
// nlohmann-json escapes it, and bytes that are not UTF-8 become U+FFFD
// rather than an exception.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dtrain {

inline std::string json_string(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dtrain
