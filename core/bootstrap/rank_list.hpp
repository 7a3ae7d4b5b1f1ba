// Lists of ranks in error messages ("ranks 1, 4-7 (of 8)").
#pragma once

#include <string>
#include <vector>

namespace dtrain::bootstrap {

// "1, 4-7, 9" for {9, 1, 4, 5, 6, 7}: sorted, runs collapsed.
std::string format_ranks(std::vector<int> ranks);

// "rank 3" or "ranks 1, 4-7", followed by " (of <size>)".
std::string describe_ranks(const std::vector<int>& ranks, int size);

}  // namespace dtrain::bootstrap
