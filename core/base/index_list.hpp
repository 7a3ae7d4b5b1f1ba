// Indices in a message: the first few of them, and how many in all.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dtrain {

inline std::string list_indices(const std::vector<std::size_t>& indices) {
  constexpr std::size_t kShown = 16;
  std::string text;
  for (std::size_t k = 0; k < indices.size() && k < kShown; ++k) {
    text += (k ? ", " : "") + std::to_string(indices[k]);
  }
  if (indices.size() > kShown) text += ", ... (" + std::to_string(indices.size()) + " in all)";
  return text;
}

}  // namespace dtrain
