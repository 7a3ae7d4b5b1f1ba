#include "parallel/moe/options.hpp"

#include <string>

#include "base/error.hpp"

namespace dtrain::parallel::moe {

void check_options(const Options& options) {
  if (options.experts < 1) {
    raise(DT_ERR_INVALID_ARGUMENT, "num_experts is " + std::to_string(options.experts) + "; it must be at least 1");
  }
  if (options.k < 1 || options.k > options.experts) {
    raise(DT_ERR_INVALID_ARGUMENT, "top_k is " + std::to_string(options.k) + "; it must be in 1.." +
                                       std::to_string(options.experts) + " (num_experts)");
  }
  if (options.scoring != Scoring::softmax && options.scoring != Scoring::sigmoid) {
    raise(DT_ERR_INVALID_ARGUMENT, "scoring is " + std::to_string(static_cast<int>(options.scoring)) +
                                       "; it must be DT_MOE_SOFTMAX (0) or DT_MOE_SIGMOID (1)");
  }
  if (options.drop_policy != DropPolicy::by_position && options.drop_policy != DropPolicy::by_score) {
    raise(DT_ERR_INVALID_ARGUMENT, "drop_policy is " + std::to_string(static_cast<int>(options.drop_policy)) +
                                       "; it must be DT_MOE_DROP_BY_POSITION (0) or DT_MOE_DROP_BY_SCORE (1)");
  }
}

}  // namespace dtrain::parallel::moe
