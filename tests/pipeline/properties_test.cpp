// What the header promises of every kind's action lists, for every shape
// with 1..16 stages and 1..64 micro-batches (interleaved: 2 and 3 chunks,
// micro-batches a multiple of stages).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "schedule_reader.hpp"
#include "simulation.hpp"

namespace dtrain_test::pipeline {
namespace {

// Runs `check` on the schedule of every case of every kind in `kinds`.
template <typename Check>
void for_every_schedule(std::initializer_list<dt_pipeline_schedule_kind> kinds, Check check) {
  for (dt_pipeline_schedule_kind kind : kinds) {
    for (const ScheduleCase& shape : every_case(kind)) {
      SCOPED_TRACE(shape.name());
      check(read_schedule(shape));
      if (::testing::Test::HasFailure()) return;  // one failing shape says enough
    }
  }
}

const std::initializer_list<dt_pipeline_schedule_kind> kEveryKind = {DT_PIPELINE_GPIPE, DT_PIPELINE_1F1B,
                                                                     DT_PIPELINE_INTERLEAVED_1F1B, DT_PIPELINE_ZB_H1};

bool splits_backward(dt_pipeline_schedule_kind kind) { return kind == DT_PIPELINE_ZB_H1; }

TEST(PipelineSchedule, EveryChunkRunsEveryMicrobatchOnce) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    const ScheduleCase& shape = s.shape;
    const std::vector<dt_pipeline_action_kind> expected =
        splits_backward(shape.kind)
            ? std::vector{DT_PIPELINE_FORWARD, DT_PIPELINE_BACKWARD_INPUT, DT_PIPELINE_BACKWARD_WEIGHT}
            : std::vector{DT_PIPELINE_FORWARD, DT_PIPELINE_BACKWARD};
    for (int rank = 0; rank < shape.stages; ++rank) {
      std::map<std::tuple<dt_pipeline_action_kind, int, int>, int> seen;
      for (const dt_pipeline_action& a : s.ranks[rank]) {
        if (!is_compute(a.kind)) continue;
        EXPECT_EQ(a.peer, -1);
        ASSERT_TRUE(a.chunk >= 0 && a.chunk < shape.chunks && a.microbatch >= 0 && a.microbatch < shape.microbatches);
        ++seen[{a.kind, a.chunk, a.microbatch}];
      }
      EXPECT_EQ(seen.size(), expected.size() * shape.chunks * shape.microbatches) << "rank " << rank;
      for (const auto& [key, count] : seen) {
        EXPECT_EQ(count, 1) << "rank " << rank;
        EXPECT_NE(std::find(expected.begin(), expected.end(), std::get<0>(key)), expected.end());
      }
    }
  });
}

TEST(PipelineSchedule, AllRanksTogetherFinishWithBlockingReceives) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    const Simulation run = simulate(s);
    for (size_t rank = 0; rank < s.ranks.size(); ++rank) {
      EXPECT_EQ(run.stopped_at[rank], s.ranks[rank].size()) << "rank " << rank << " stopped";
    }
    EXPECT_TRUE(run.finished);
  });
}

TEST(PipelineSchedule, ComputeFollowsTheDependencies) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    const Simulation run = simulate(s);
    const int last = s.shape.stages * s.shape.chunks - 1;
    const dt_pipeline_action_kind backward =
        splits_backward(s.shape.kind) ? DT_PIPELINE_BACKWARD_INPUT : DT_PIPELINE_BACKWARD;
    for (int stage = 0; stage <= last; ++stage) {
      for (int mb = 0; mb < s.shape.microbatches; ++mb) {
        const Interval& forward = run.compute.at({DT_PIPELINE_FORWARD, stage, mb});
        const Interval& input_grad = run.compute.at({backward, stage, mb});
        if (stage > 0) {
          EXPECT_GE(forward.start, run.compute.at({DT_PIPELINE_FORWARD, stage - 1, mb}).end);
        }
        if (stage < last) {
          EXPECT_GE(input_grad.start, run.compute.at({backward, stage + 1, mb}).end);
        }
        EXPECT_GE(input_grad.start, forward.end);
        if (splits_backward(s.shape.kind)) {
          EXPECT_GE(run.compute.at({DT_PIPELINE_BACKWARD_WEIGHT, stage, mb}).start, input_grad.end);
        }
      }
    }
  });
}

TEST(PipelineSchedule, EverySendHasOneMatchingReceiveFromItsPeer) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    const ScheduleCase& shape = s.shape;
    std::map<MessageKey, int> sends, receives;
    for (int rank = 0; rank < shape.stages; ++rank) {
      for (const dt_pipeline_action& a : s.ranks[rank]) {
        if (is_compute(a.kind)) continue;
        const MessageKey message = message_of(shape, rank, a);
        const auto [gradient, sender_stage, mb] = message;
        const int receiver_stage = gradient ? sender_stage - 1 : sender_stage + 1;
        ASSERT_TRUE(receiver_stage >= 0 && receiver_stage < shape.stages * shape.chunks);
        const int other = (is_send(a.kind) ? receiver_stage : sender_stage) % shape.stages;
        EXPECT_EQ(a.peer, other);
        EXPECT_NE(a.peer, rank);
        ++(is_send(a.kind) ? sends : receives)[message];
      }
    }
    EXPECT_EQ(sends, receives);
    for (const auto& [message, count] : sends) EXPECT_EQ(count, 1);
    // Every hop between global stages on different ranks carries one
    // activation and one gradient per micro-batch.
    const size_t hops = shape.stages == 1 ? 0 : static_cast<size_t>(shape.stages * shape.chunks - 1);
    EXPECT_EQ(sends.size(), 2 * hops * static_cast<size_t>(shape.microbatches));
  });
}

TEST(PipelineSchedule, SendsAndReceivesOfAPairComeInTheSameOrder) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    // (sender, receiver, gradient) -> messages in list order.
    std::map<std::tuple<int, int, bool>, std::vector<MessageKey>> sent, received;
    for (int rank = 0; rank < s.shape.stages; ++rank) {
      for (const dt_pipeline_action& a : s.ranks[rank]) {
        if (is_compute(a.kind)) continue;
        const MessageKey message = message_of(s.shape, rank, a);
        if (is_send(a.kind)) {
          sent[{rank, a.peer, std::get<0>(message)}].push_back(message);
        } else {
          received[{a.peer, rank, std::get<0>(message)}].push_back(message);
        }
      }
    }
    EXPECT_EQ(sent, received);
  });
}

TEST(PipelineSchedule, OneFOneBKeepsAtMostStagesInFlightOnStageZero) {
  for_every_schedule({DT_PIPELINE_1F1B}, [](const ReadSchedule& s) {
    for (int rank = 0; rank < s.shape.stages; ++rank) {
      EXPECT_EQ(s.peak_in_flight[rank], std::min(s.shape.stages - rank, s.shape.microbatches)) << "rank " << rank;
    }
    EXPECT_LE(s.peak_in_flight[0], s.shape.stages);
  });
}

// Counted here from the list, independently of the library's count.
int counted_peak(const std::vector<dt_pipeline_action>& actions) {
  std::set<std::pair<int, int>> alive;
  size_t peak = 0;
  for (const dt_pipeline_action& a : actions) {
    if (a.kind == DT_PIPELINE_FORWARD) alive.insert({a.chunk, a.microbatch});
    if (a.kind == DT_PIPELINE_BACKWARD || a.kind == DT_PIPELINE_BACKWARD_WEIGHT) alive.erase({a.chunk, a.microbatch});
    peak = std::max(peak, alive.size());
  }
  return static_cast<int>(peak);
}

TEST(PipelineSchedule, PeakInFlightIsCountedFromTheList) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    for (int rank = 0; rank < s.shape.stages; ++rank) EXPECT_EQ(s.peak_in_flight[rank], counted_peak(s.ranks[rank]));
    if (s.shape.kind == DT_PIPELINE_GPIPE) {
      EXPECT_EQ(s.peak_in_flight[0], s.shape.microbatches);
    }
  });
}

TEST(PipelineSchedule, ZbH1PeaksLikeOneFOneB) {
  for_every_schedule({DT_PIPELINE_ZB_H1}, [](const ReadSchedule& zb) {
    const ReadSchedule one_f_one_b = read_schedule({DT_PIPELINE_1F1B, zb.shape.stages, zb.shape.microbatches, 1});
    EXPECT_EQ(zb.peak_in_flight[0], one_f_one_b.peak_in_flight[0]);
    EXPECT_EQ(*std::max_element(zb.peak_in_flight.begin(), zb.peak_in_flight.end()),
              *std::max_element(one_f_one_b.peak_in_flight.begin(), one_f_one_b.peak_in_flight.end()));
  });
}

// The simulation's bubble is the library's closed form, which for GPipe
// and 1F1B is (p - 1) / (m + p - 1).
TEST(PipelineSchedule, SimulatedBubbleIsTheClosedForm) {
  for_every_schedule(kEveryKind, [](const ReadSchedule& s) {
    const double simulated = simulate(s).bubble_fraction();
    EXPECT_NEAR(simulated, s.bubble_fraction, 1e-12);
    const double p = s.shape.stages, m = s.shape.microbatches;
    if (s.shape.kind == DT_PIPELINE_GPIPE || s.shape.kind == DT_PIPELINE_1F1B) {
      EXPECT_NEAR(simulated, (p - 1) / (m + p - 1), 1e-12);
    }
  });
}

double simulated_one_f_one_b_bubble(const ScheduleCase& shape) {
  return simulate(read_schedule({DT_PIPELINE_1F1B, shape.stages, shape.microbatches, 1})).bubble_fraction();
}

// 1F1B's bubble over interleaved's is v - (v - 1)(p - 1)/(m + p - 1): within
// v (p - 1)/(m + p - 1) of v, which shrinks as micro-batches grow.
TEST(PipelineSchedule, InterleavingDividesTheBubbleByAboutChunks) {
  for_every_schedule({DT_PIPELINE_INTERLEAVED_1F1B}, [](const ReadSchedule& s) {
    if (s.shape.stages == 1) return;  // no bubble to divide
    const double p = s.shape.stages, m = s.shape.microbatches, v = s.shape.chunks;
    const double ratio = simulated_one_f_one_b_bubble(s.shape) / simulate(s).bubble_fraction();
    EXPECT_LE(ratio, v + 1e-9);
    EXPECT_GE(ratio, v - v * (p - 1) / (m + p - 1) - 1e-9);
    if (m >= 8 * p) {
      EXPECT_GE(ratio, 0.85 * v);
    }
  });
}

// With m >= p, 1F1B's bubble over ZB-H1's is 3 - 2(p - 1)/(m + p - 1): a
// third of the bubble, up to 3 (p - 1)/(m + p - 1).
TEST(PipelineSchedule, ZbH1CutsTheBubbleToAboutAThird) {
  for_every_schedule({DT_PIPELINE_ZB_H1}, [](const ReadSchedule& s) {
    const double p = s.shape.stages, m = s.shape.microbatches;
    if (p == 1 || m < p) return;
    const double ratio = simulated_one_f_one_b_bubble(s.shape) / simulate(s).bubble_fraction();
    EXPECT_LE(ratio, 3 + 1e-9);
    EXPECT_GE(ratio, 3 - 3 * (p - 1) / (m + p - 1) - 1e-9);
    if (m >= 8 * p) {
      EXPECT_GE(ratio, 0.85 * 3);
    }
  });
}

}  // namespace
}  // namespace dtrain_test::pipeline
