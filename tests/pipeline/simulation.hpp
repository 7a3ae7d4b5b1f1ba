// Runs every rank's list at once, as the header's executor does: sends are
// posted without waiting, receives block until the matching send is posted.
// Compute actions take unit times (forward 1, backward 2; backward_input
// and backward_weight 1 each), communication takes none, and each rank
// starts at time 0.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "schedule_reader.hpp"

namespace dtrain_test::pipeline {

// A message: (true for a gradient, the sending global stage, micro-batch).
using MessageKey = std::tuple<bool, int, int>;
// A compute action: (kind, global stage, micro-batch).
using ComputeKey = std::tuple<dt_pipeline_action_kind, int, int>;

struct Interval {
  double start;
  double end;
};

struct Simulation {
  bool finished = false;           // every rank ran its whole list
  std::vector<size_t> stopped_at;  // per rank, the index it could not get past
  std::map<ComputeKey, Interval> compute;
  std::vector<double> busy;  // per rank, time spent computing
  double makespan = 0;

  // (makespan - busy) / makespan, the share of the step a rank idles; the
  // same for every rank since each does the same work.
  double bubble_fraction() const;
};

int global_stage(const ScheduleCase& shape, int rank, int chunk);
// The message a send or receive action on `rank` moves.
MessageKey message_of(const ScheduleCase& shape, int rank, const dt_pipeline_action& action);
bool is_send(dt_pipeline_action_kind kind);
bool is_receive(dt_pipeline_action_kind kind);

Simulation simulate(const ReadSchedule& schedule);

}  // namespace dtrain_test::pipeline
