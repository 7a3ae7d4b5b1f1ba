#include "schedule_reader.hpp"

#include <gtest/gtest.h>

namespace dtrain_test::pipeline {

std::string ScheduleCase::name() const {
  static const char* const kNames[] = {"gpipe", "1f1b", "interleaved_1f1b", "zb_h1"};
  return std::string(kNames[kind]) + " p=" + std::to_string(stages) + " m=" + std::to_string(microbatches) +
         " v=" + std::to_string(chunks);
}

ReadSchedule read_schedule(const ScheduleCase& shape) {
  ReadSchedule result{shape, {}, 0, {}};
  dt_pipeline_schedule_options opts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  opts.kind = shape.kind;
  opts.stages = shape.stages;
  opts.microbatches = shape.microbatches;
  opts.chunks = shape.chunks;
  dt_pipeline_schedule* schedule = nullptr;
  EXPECT_EQ(dt_pipeline_schedule_create(&schedule, &opts), DT_OK) << shape.name() << ": " << dt_error_last();
  if (schedule == nullptr) return result;
  EXPECT_EQ(dt_pipeline_schedule_bubble_fraction(schedule, &result.bubble_fraction), DT_OK);
  for (int rank = 0; rank < shape.stages; ++rank) {
    size_t length = 0;
    EXPECT_EQ(dt_pipeline_schedule_length(schedule, rank, &length), DT_OK);
    std::vector<dt_pipeline_action> actions(length);
    for (size_t i = 0; i < length; ++i) EXPECT_EQ(dt_pipeline_schedule_action(schedule, rank, i, &actions[i]), DT_OK);
    result.ranks.push_back(std::move(actions));
    int peak = -1;
    EXPECT_EQ(dt_pipeline_schedule_peak_in_flight(schedule, rank, &peak), DT_OK);
    result.peak_in_flight.push_back(peak);
  }
  EXPECT_EQ(dt_pipeline_schedule_destroy(schedule), DT_OK);
  return result;
}

std::vector<ScheduleCase> every_case(dt_pipeline_schedule_kind kind) {
  std::vector<ScheduleCase> cases;
  for (int stages = 1; stages <= 16; ++stages) {
    for (int microbatches = 1; microbatches <= 64; ++microbatches) {
      if (kind != DT_PIPELINE_INTERLEAVED_1F1B) {
        cases.push_back({kind, stages, microbatches, 1});
      } else if (microbatches % stages == 0) {
        for (int chunks : {2, 3}) cases.push_back({kind, stages, microbatches, chunks});
      }
    }
  }
  return cases;
}

bool is_compute(dt_pipeline_action_kind kind) {
  return kind == DT_PIPELINE_FORWARD || kind == DT_PIPELINE_BACKWARD || kind == DT_PIPELINE_BACKWARD_INPUT ||
         kind == DT_PIPELINE_BACKWARD_WEIGHT;
}

}  // namespace dtrain_test::pipeline
