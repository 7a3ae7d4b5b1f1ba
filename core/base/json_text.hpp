// A string as a JSON string literal, for the files the library writes by
// hand (traces, flight records): quotes, backslashes and control
// characters escaped.
#pragma once

#include <cstdio>
#include <string>

namespace dtrain {

inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch));
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace dtrain
