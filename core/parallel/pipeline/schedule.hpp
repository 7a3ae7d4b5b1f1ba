// A whole pipeline schedule: every rank's actions, built once from the
// kind and shape. Pure computation; no communicator is involved.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "parallel/pipeline/action.hpp"

namespace dtrain::parallel::pipeline {

// The most stages × microbatches × chunks one schedule is built for: the
// action lists of all ranks take up to about 100 bytes per unit, so this
// keeps a schedule near 100 MiB at most.
inline constexpr std::int64_t kMaxUnits = std::int64_t{1} << 20;

// The schedule kind `raw` names; DT_ERR_INVALID_ARGUMENT naming `kind`
// otherwise.
ScheduleKind schedule_kind(int raw);

// The shape of a `kind` schedule, with `chunks` unset meaning 2 for
// interleaved_1f1b and 1 otherwise. Throws DT_ERR_INVALID_ARGUMENT naming
// the field: stages or microbatches below 1; chunks other than 1 for
// gpipe, 1f1b and zb_h1, or below 2 for interleaved_1f1b; microbatches not
// a multiple of stages for interleaved_1f1b; more than kMaxUnits units.
Shape make_shape(ScheduleKind kind, int stages, int microbatches, std::optional<int> chunks);

class Schedule {
 public:
  Schedule(ScheduleKind kind, const Shape& shape);

  ScheduleKind kind() const { return kind_; }
  const Shape& shape() const { return shape_; }
  // DT_ERR_INVALID_ARGUMENT for a rank outside 0..stages-1.
  const std::vector<Action>& actions(int rank) const;
  int peak_in_flight(int rank) const;
  double bubble_fraction() const;

 private:
  ScheduleKind kind_;
  Shape shape_;
  std::vector<std::vector<Action>> ranks_;
};

}  // namespace dtrain::parallel::pipeline
