// What dtbench's subcommands share around their options and results: usage
// errors, integer values, and the JSON results file.
#pragma once

#include <cstdio>
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

// The JSON results file opened for writing, or null after saying why not.
FILE* open_results(const Usage& usage, const std::string& path);
// Closes it and says where the results are.
void close_results(FILE* out, const std::string& path);

}  // namespace dtbench
