// The orders dtrain/pipeline.h documents, rebuilt here from its formulas and
// compared with the library's lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "schedule_reader.hpp"

namespace dtrain_test::pipeline {
namespace {

struct Step {
  dt_pipeline_action_kind kind;
  int chunk;
  int microbatch;
  int peer;

  friend bool operator==(const Step&, const Step&) = default;
};

void PrintTo(const Step& s, std::ostream* os) {
  *os << "{kind " << s.kind << ", chunk " << s.chunk << ", mb " << s.microbatch << ", peer " << s.peer << "}";
}

std::vector<Step> steps(const std::vector<dt_pipeline_action>& actions, bool compute_only) {
  std::vector<Step> result;
  for (const dt_pipeline_action& a : actions) {
    if (!compute_only || is_compute(a.kind)) result.push_back({a.kind, a.chunk, a.microbatch, a.peer});
  }
  return result;
}

// The header's k-th forward of a rank: chunk (k / p) mod v, micro-batch
// (k / (p v)) p + k mod p; the k-th backward runs the chunks from the last.
Step forward_k(const ScheduleCase& s, int k) {
  return {DT_PIPELINE_FORWARD, (k / s.stages) % s.chunks, (k / (s.stages * s.chunks)) * s.stages + k % s.stages, -1};
}

Step backward_k(const ScheduleCase& s, int k, dt_pipeline_action_kind kind) {
  const Step forward = forward_k(s, k);
  return {kind, s.chunks - 1 - forward.chunk, forward.microbatch, -1};
}

// Warm-up forwards, one forward and one backward at a time, the remaining
// backwards; zero-bubble Ws `delay` backwards behind their Bs.
std::vector<Step> documented(const ScheduleCase& s, int warmup, int delay) {
  const int total = s.chunks * s.microbatches;
  const bool split = s.kind == DT_PIPELINE_ZB_H1;
  std::vector<Step> order;
  int backwards = 0;
  auto backward = [&] {
    order.push_back(backward_k(s, backwards, split ? DT_PIPELINE_BACKWARD_INPUT : DT_PIPELINE_BACKWARD));
    if (split && backwards >= delay) order.push_back(backward_k(s, backwards - delay, DT_PIPELINE_BACKWARD_WEIGHT));
    ++backwards;
  };
  for (int k = 0; k < total; ++k) {
    order.push_back(forward_k(s, k));
    if (k >= warmup) backward();
  }
  while (backwards < total) backward();
  if (split) {
    for (int j = std::max(0, total - delay); j < total; ++j)
      order.push_back(backward_k(s, j, DT_PIPELINE_BACKWARD_WEIGHT));
  }
  return order;
}

int documented_warmup(const ScheduleCase& s, int rank) {
  const int downstream = s.stages - rank - 1;
  switch (s.kind) {
    case DT_PIPELINE_GPIPE:
      return s.microbatches;
    case DT_PIPELINE_INTERLEAVED_1F1B:
      return std::min((s.chunks - 1) * s.stages + 2 * downstream, s.chunks * s.microbatches);
    default:
      return std::min(downstream, s.microbatches);
  }
}

TEST(PipelineScheduleOrder, ComputeOrderIsTheDocumentedOne) {
  for (dt_pipeline_schedule_kind kind : kAllKinds) {
    for (int stages : {1, 2, 4, 5}) {
      for (int microbatches : {1, 3, 8, 20}) {
        if (kind == DT_PIPELINE_INTERLEAVED_1F1B && microbatches % stages != 0) continue;
        const ScheduleCase shape{kind, stages, microbatches, kind == DT_PIPELINE_INTERLEAVED_1F1B ? 3 : 1};
        SCOPED_TRACE(shape.name());
        const ReadSchedule s = read_schedule(shape);
        for (int rank = 0; rank < stages; ++rank) {
          const int delay = kind == DT_PIPELINE_ZB_H1 ? rank : 0;
          EXPECT_EQ(steps(s.ranks[rank], true), documented(shape, documented_warmup(shape, rank), delay))
              << "rank " << rank;
        }
      }
    }
  }
}

TEST(PipelineScheduleOrder, MessagesSitRightAroundTheirCompute) {
  for (dt_pipeline_schedule_kind kind : kAllKinds) {
    const ScheduleCase shape{kind, 4, 8, kind == DT_PIPELINE_INTERLEAVED_1F1B ? 2 : 1};
    SCOPED_TRACE(shape.name());
    const ReadSchedule s = read_schedule(shape);
    const int last = shape.stages * shape.chunks - 1;
    for (int rank = 0; rank < shape.stages; ++rank) {
      const std::vector<Step> list = steps(s.ranks[rank], false);
      const int previous = (rank + shape.stages - 1) % shape.stages, next = (rank + 1) % shape.stages;
      size_t messages = 0;
      for (size_t i = 0; i < list.size(); ++i) {
        const Step& a = list[i];
        const int stage = a.chunk * shape.stages + rank;
        auto expect_at = [&](size_t at, dt_pipeline_action_kind message, int peer) {
          ASSERT_LT(at, list.size());
          EXPECT_EQ(list[at], (Step{message, a.chunk, a.microbatch, peer})) << "around action " << i;
          ++messages;
        };
        if (a.kind == DT_PIPELINE_FORWARD) {
          if (stage > 0) expect_at(i - 1, DT_PIPELINE_RECV_ACTIVATION, previous);
          if (stage < last) expect_at(i + 1, DT_PIPELINE_SEND_ACTIVATION, next);
        } else if (a.kind == DT_PIPELINE_BACKWARD || a.kind == DT_PIPELINE_BACKWARD_INPUT) {
          if (stage < last) expect_at(i - 1, DT_PIPELINE_RECV_GRAD, next);
          if (stage > 0) expect_at(i + 1, DT_PIPELINE_SEND_GRAD, previous);
        }
      }
      EXPECT_EQ(messages, list.size() - steps(s.ranks[rank], true).size()) << "rank " << rank << ": a stray message";
    }
  }
}

TEST(PipelineScheduleOrder, OneFOneBOnTwoRanksInFull) {
  const ReadSchedule s = read_schedule({DT_PIPELINE_1F1B, 2, 3, 1});
  constexpr auto F = DT_PIPELINE_FORWARD, B = DT_PIPELINE_BACKWARD, SA = DT_PIPELINE_SEND_ACTIVATION,
                 RA = DT_PIPELINE_RECV_ACTIVATION, SG = DT_PIPELINE_SEND_GRAD, RG = DT_PIPELINE_RECV_GRAD;
  const std::vector<Step> rank0 = {{F, 0, 0, -1}, {SA, 0, 0, 1}, {F, 0, 1, -1}, {SA, 0, 1, 1},
                                   {RG, 0, 0, 1}, {B, 0, 0, -1}, {F, 0, 2, -1}, {SA, 0, 2, 1},
                                   {RG, 0, 1, 1}, {B, 0, 1, -1}, {RG, 0, 2, 1}, {B, 0, 2, -1}};
  const std::vector<Step> rank1 = {{RA, 0, 0, 0}, {F, 0, 0, -1}, {B, 0, 0, -1}, {SG, 0, 0, 0},
                                   {RA, 0, 1, 0}, {F, 0, 1, -1}, {B, 0, 1, -1}, {SG, 0, 1, 0},
                                   {RA, 0, 2, 0}, {F, 0, 2, -1}, {B, 0, 2, -1}, {SG, 0, 2, 0}};
  EXPECT_EQ(steps(s.ranks[0], false), rank0);
  EXPECT_EQ(steps(s.ranks[1], false), rank1);
}

}  // namespace
}  // namespace dtrain_test::pipeline
