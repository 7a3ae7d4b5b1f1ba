// Reads a whole dt_pipeline_schedule through the C API, as an executor
// would, and names the shapes the tests sweep.
#pragma once

#include <string>
#include <vector>

#include "dtrain.h"

namespace dtrain_test::pipeline {

struct ScheduleCase {
  dt_pipeline_schedule_kind kind;
  int stages;
  int microbatches;
  int chunks;

  std::string name() const;
};

struct ReadSchedule {
  ScheduleCase shape;
  std::vector<std::vector<dt_pipeline_action>> ranks;
  double bubble_fraction = 0;
  std::vector<int> peak_in_flight;
};

// Creates the schedule (failing the test on an error), reads every rank's
// actions and figures, and destroys it.
ReadSchedule read_schedule(const ScheduleCase& shape);

// Every valid shape of `kind` with 1..16 stages and 1..64 micro-batches,
// interleaved with 2 and 3 chunks.
std::vector<ScheduleCase> every_case(dt_pipeline_schedule_kind kind);

inline const dt_pipeline_schedule_kind kAllKinds[] = {DT_PIPELINE_GPIPE, DT_PIPELINE_1F1B, DT_PIPELINE_INTERLEAVED_1F1B,
                                                      DT_PIPELINE_ZB_H1};

bool is_compute(dt_pipeline_action_kind kind);

}  // namespace dtrain_test::pipeline
