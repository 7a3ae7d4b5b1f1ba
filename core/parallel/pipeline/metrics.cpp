#include "parallel/pipeline/metrics.hpp"

#include <algorithm>

namespace dtrain::parallel::pipeline {

double ideal_bubble_fraction(ScheduleKind kind, const Shape& shape) {
  const double p = shape.stages;
  const double m = shape.microbatches;
  switch (kind) {
    case ScheduleKind::interleaved_1f1b:
      return (p - 1) / (shape.chunks * m + p - 1);
    case ScheduleKind::zb_h1: {
      // With fewer micro-batches than stages the last input gradient still
      // crosses every stage, and nothing is left to fill that wait.
      const double extra = std::max(0.0, p - m);
      return (p - 1 + extra) / (3 * m + p - 1 + extra);
    }
    case ScheduleKind::gpipe:
    case ScheduleKind::one_f_one_b:
      break;
  }
  return (p - 1) / (m + p - 1);
}

int peak_in_flight(const std::vector<Action>& actions) {
  int alive = 0;
  int peak = 0;
  for (const Action& action : actions) {
    if (action.kind == ActionKind::forward) {
      peak = std::max(peak, ++alive);
    } else if (action.kind == ActionKind::backward || action.kind == ActionKind::backward_weight) {
      --alive;
    }
  }
  return peak;
}

}  // namespace dtrain::parallel::pipeline
