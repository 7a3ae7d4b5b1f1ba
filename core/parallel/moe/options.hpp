// The settings of an MoE layer as the core sees them, read from
// dt_moe_options by the C API. The enums keep the C values.
#pragma once

#include <cstdint>

namespace dtrain::parallel::moe {

enum class Scoring : int { softmax = 0, sigmoid = 1 };
enum class DropPolicy : int { by_position = 0, by_score = 1 };

struct Options {
  int experts = 0;  // E
  int k = 0;
  Scoring scoring = Scoring::softmax;
  bool normalize = false;
  double capacity_factor = 0.0;  // <= 0: dropless
  DropPolicy drop_policy = DropPolicy::by_position;
};

// Throws DT_ERR_INVALID_ARGUMENT for E < 1, k outside 1..E, or an enum value
// with no meaning.
void check_options(const Options& options);

}  // namespace dtrain::parallel::moe
