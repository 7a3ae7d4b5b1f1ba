#pragma once

#include <string>

namespace dtbench {

// Prints the rows of two results files side by side with their ratios (first /
// second) and, when `merged_json` is not null, writes them there as one file.
// Returns the exit status.
int compare_files(const std::string& first, const std::string& second, const char* merged_json);

// `dtbench compare A.json B.json [--json MERGED]`: argv[0] is "compare".
int run_compare(int argc, char** argv);

}  // namespace dtbench
