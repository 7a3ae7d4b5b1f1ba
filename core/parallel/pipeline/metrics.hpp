// Figures of a schedule a caller plans with.
#pragma once

#include <vector>

#include "parallel/pipeline/action.hpp"

namespace dtrain::parallel::pipeline {

// The fraction of a step each rank spends idle, from the schedule's closed
// form, exact when every chunk's forward takes one unit and its backward two
// (zero-bubble: forward, input and weight gradient one unit each) and
// communication is free:
//   gpipe, 1f1b        (p - 1) / (m + p - 1)
//   interleaved_1f1b   (p - 1) / (v m + p - 1)
//   zb_h1              (p - 1 + e) / (3 m + p - 1 + e), e = max(0, p - m)
double ideal_bubble_fraction(ScheduleKind kind, const Shape& shape);

// The most (chunk, micro-batch) pairs of `actions` whose forward has run and
// whose last backward action (backward, or backward_weight, which still
// reads the saved inputs) has not: how many micro-batches' activations a
// rank keeps at once, per chunk.
int peak_in_flight(const std::vector<Action>& actions);

}  // namespace dtrain::parallel::pipeline
