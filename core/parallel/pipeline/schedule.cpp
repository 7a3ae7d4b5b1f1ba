#include "parallel/pipeline/schedule.hpp"

#include <string>

#include "base/error.hpp"
#include "dtrain/common.h"
#include "parallel/pipeline/communication.hpp"
#include "parallel/pipeline/compute_order.hpp"
#include "parallel/pipeline/metrics.hpp"

namespace dtrain::parallel::pipeline {

namespace {

[[noreturn]] void refuse(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

void require_positive(int value, const char* name) {
  if (value == DT_UNDEF) refuse(std::string(name) + " is unset (DT_UNDEF): it has no default");
  if (value < 1) refuse(std::string(name) + " = " + std::to_string(value) + " must be at least 1");
}

int checked_chunks(ScheduleKind kind, std::optional<int> chunks) {
  if (kind == ScheduleKind::interleaved_1f1b) {
    const int value = chunks.value_or(2);
    if (value < 2) {
      refuse("chunks = " + std::to_string(value) +
             ": an interleaved 1F1B schedule needs at least 2 chunks per rank (1F1B runs one)");
    }
    return value;
  }
  const int value = chunks.value_or(1);
  if (value != 1) {
    refuse("chunks = " + std::to_string(value) + ": only the interleaved 1F1B schedule runs several chunks per rank");
  }
  return value;
}

}  // namespace

ScheduleKind schedule_kind(int raw) {
  if (raw < static_cast<int>(ScheduleKind::gpipe) || raw > static_cast<int>(ScheduleKind::zb_h1)) {
    refuse("kind = " + std::to_string(raw) + " is not a pipeline schedule kind (0 to 3)");
  }
  return static_cast<ScheduleKind>(raw);
}

Shape make_shape(ScheduleKind kind, int stages, int microbatches, std::optional<int> chunks) {
  require_positive(stages, "stages");
  require_positive(microbatches, "microbatches");
  const Shape shape{stages, microbatches, checked_chunks(kind, chunks)};
  if (kind == ScheduleKind::interleaved_1f1b && microbatches % stages != 0) {
    refuse("microbatches = " + std::to_string(microbatches) +
           " is not a multiple of stages = " + std::to_string(stages) + ", as the interleaved 1F1B schedule needs");
  }
  const std::int64_t units = std::int64_t{stages} * microbatches * shape.chunks;
  if (units > kMaxUnits) {
    refuse("stages x microbatches x chunks = " + std::to_string(units) + " is more than the " +
           std::to_string(kMaxUnits) + " one schedule holds");
  }
  return shape;
}

Schedule::Schedule(ScheduleKind kind, const Shape& shape) : kind_(kind), shape_(shape) {
  ranks_.reserve(static_cast<std::size_t>(shape.stages));
  for (int rank = 0; rank < shape.stages; ++rank) {
    ranks_.push_back(with_communication(compute_order(kind, shape, rank), shape, rank));
  }
}

const std::vector<Action>& Schedule::actions(int rank) const {
  if (rank < 0 || rank >= shape_.stages) {
    refuse("rank = " + std::to_string(rank) + " is not a rank of this " + std::to_string(shape_.stages) +
           "-stage schedule (0 to " + std::to_string(shape_.stages - 1) + ")");
  }
  return ranks_[static_cast<std::size_t>(rank)];
}

int Schedule::peak_in_flight(int rank) const { return pipeline::peak_in_flight(actions(rank)); }

double Schedule::bubble_fraction() const { return ideal_bubble_fraction(kind_, shape_); }

}  // namespace dtrain::parallel::pipeline
