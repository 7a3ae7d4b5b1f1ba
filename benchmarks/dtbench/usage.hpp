// What dtbench's subcommands share around their options and results: the
// command line (CLI11), usage errors, and the JSON results file.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace dtbench {

// A subcommand's name, usage line and description, for its command line and
// its usage errors.
struct Usage {
  const char* command;      // "ddp", "zero", "handoff"
  const char* line;         // "usage: dtrun -n N dtbench ddp [options]"
  const char* description;  // what it measures

  // A command line named "dtbench COMMAND" whose help opens with the usage
  // line and the description; the caller adds the options, and reads argv
  // with dtrain::command_line::parse. An option given twice takes its last
  // value.
  std::unique_ptr<CLI::App> app() const;
  // A usage error found after parsing: says what, exits 2.
  [[noreturn]] void error(const std::string& message) const;
};

// An option whose value is a size in bytes ("8", "64K", "256M", "1G": binary
// multiples), at least `lowest`.
CLI::Option* add_bytes(CLI::App& app, const std::string& flag, std::int64_t& bytes, std::int64_t lowest,
                       const std::string& help);

// A results document: its keys stay in the order they were set, as the
// readers of earlier results files saw them.
using Json = nlohmann::ordered_json;

// Writes `doc` to `path` and says where the results are; false after saying
// why it could not. Numbers that are not finite are written as null.
bool write_results(const char* command, const std::string& path, const Json& doc);

}  // namespace dtbench
