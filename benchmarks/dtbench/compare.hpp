#pragma once

#include <string>
#include <vector>

namespace dtbench {

// Prints the rows of two sides side by side with their ratios (first / second)
// and, when `merged_json` is not null, writes them there as one file. A side
// is one results file, or several rounds of the same sweep: then, for each
// operation and size, the round with the lowest time, and beside it the
// median, min and max over the rounds of second / first time within a round
// (round k of each side paired). Returns the exit status.
int compare_files(const std::vector<std::string>& first, const std::vector<std::string>& second,
                  const char* merged_json);

// `dtbench compare A.json B.json [--json MERGED]`: argv[0] is "compare".
int run_compare(int argc, char** argv);

}  // namespace dtbench
