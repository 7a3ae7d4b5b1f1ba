#include "bootstrap/rank_list.hpp"

#include <algorithm>

namespace dtrain::bootstrap {

std::string format_ranks(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string describe_ranks(const std::vector<int>& ranks, int size) {
  return std::string(ranks.size() == 1 ? "rank " : "ranks ") + format_ranks(ranks) + " (of " +
         std::to_string(size) + ")";
}

}  // namespace dtrain::bootstrap
