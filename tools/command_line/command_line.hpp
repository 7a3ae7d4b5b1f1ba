// How libdtrain's programs read their command lines with CLI11: the help
// opens with the program's usage line, --help prints it and exits 0, and a
// bad argument prints what is wrong, then the help, on stderr and exits 2
// (the status scripts and tests take for a usage error).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace dtrain::command_line {

// CLI11's help with the program's own usage line ("usage: dtrun -n N
// [options] PROGRAM [ARGS...]") first and the description after it.
class Formatter : public CLI::Formatter {
 public:
  explicit Formatter(std::string usage) : usage_(std::move(usage)) {}

  std::string make_usage(const CLI::App* app, std::string) const override {
    const std::string& text = app->get_description();
    return usage_ + "\n" + (text.empty() ? "" : "\n" + text + "\n");
  }
  std::string make_description(const CLI::App*) const override { return ""; }

 private:
  std::string usage_;
};

// Gives `app` the usage line its help starts with.
inline void set_usage(CLI::App& app, std::string usage) {
  auto formatter = std::make_shared<Formatter>(std::move(usage));
  formatter->column_width(26);
  app.formatter(formatter);
}

// A usage error: "NAME: WHAT", the help, exit status 2.
[[noreturn]] inline void fail(const CLI::App& app, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n\n%s", app.get_name().c_str(), what.c_str(), app.help().c_str());
  std::exit(2);
}

// Reads argv[1..argc) into `app`'s options; exits on --help or a bad argument.
inline void parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    fail(app, e.what());
  }
}

}  // namespace dtrain::command_line
