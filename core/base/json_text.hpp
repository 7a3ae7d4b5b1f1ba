// JSON text for the files the library writes (traces, flight records,
// plans), by nlohmann-json: bytes that are not UTF-8 become U+FFFD rather
// than an exception.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dtrain {

// A string as a JSON string literal, for files in a layout of their own.
inline std::string json_string(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One line of a JSON-lines file: an object whose keys stay in the order given.
using JsonLine = nlohmann::ordered_json;

// The object compact on one line, then a newline.
inline std::string json_line(const JsonLine& object) {
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace dtrain
