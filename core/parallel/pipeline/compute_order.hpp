// The compute actions of one rank (forwards and backwards, no
// communication) in the order the schedule runs them.
#pragma once

#include <vector>

#include "parallel/pipeline/action.hpp"

namespace dtrain::parallel::pipeline {

// `shape` must have passed make_shape() for `kind`; 0 <= rank < stages.
std::vector<Action> compute_order(ScheduleKind kind, const Shape& shape, int rank);

}  // namespace dtrain::parallel::pipeline
