// What dtbench's subcommands share around their options and results: usage
// errors, integer values, and the JSON results file.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace dtbench {

// A subcommand's name and help text, for --help and for usage errors.
struct Usage {
  const char* command;  // "ddp", "zero", "handoff"
  const char* text;

  [[noreturn]] void error(const std::string& message) const;
  // `value` as an integer in [lowest, highest], else a usage error for `arg`.
  int integer(const std::string& arg, const char* value, long lowest, long highest) const;
};

// A results document: its keys stay in the order they were set, as the
// readers of earlier results files saw them.
using Json = nlohmann::ordered_json;

// Writes `doc` to `path` and says where the results are; false after saying
// why it could not. Numbers that are not finite are written as null.
bool write_results(const char* command, const std::string& path, const Json& doc);

}  // namespace dtbench
