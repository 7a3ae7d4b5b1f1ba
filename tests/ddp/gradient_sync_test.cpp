// The gradient reduction's bookkeeping that DDP and ZeRO share
// (common::GradientSync): collectives start in launch order whatever order
// gradients are marked in, on every rank; marks are checked; launching can
// be held back; finished groups are handed over in launch order, once; a
// launch that throws is tried again; a step can be abandoned and reset.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "comm/deadline.hpp"
#include "parallel/common/gradient_sync.hpp"
#include "ucx/harness.hpp"

namespace dtrain::test {
namespace {

using parallel::common::GradientSync;
using parallel::common::GroupState;

// Five gradients in three groups: {0, 1} in group 2, {2} in group 0 and
// {3, 4} in group 1; launched 2, 1, 0 (as ZeRO launches units last first).
const std::vector<std::size_t> kGroupOf{2, 2, 0, 1, 1};
const std::vector<std::size_t> kLaunchOrder{2, 1, 0};

// Records launches; each group's collective is an allreduce of the group's
// number plus one times the rank's, so a collective that met another
// group's on a peer would sum to something else.
struct Recorder {
  explicit Recorder(comm::Communicator& c) : comm(c) {}

  comm::Communicator& comm;
  std::vector<std::size_t> launched;
  std::vector<double> values = std::vector<double>(3);
  bool no_request = false;

  GradientSync::Launch launch() {
    return [this](std::size_t group) -> comm::RequestPtr {
      launched.push_back(group);
      if (no_request) return nullptr;
      values[group] = static_cast<double>((group + 1) * (comm.rank() + 1));
      const TensorView value = host_view(&values[group], 1, DType::f64);
      return comm.allreduce(value, value, DT_SUM);
    };
  }
};

TEST(GradientSync, LaunchesInLaunchOrderWhateverTheMarkingOrderOnEveryRank) {
  run_world(2, [](comm::Communicator& comm) {
    Recorder recorder(comm);
    GradientSync sync(comm, kGroupOf, kLaunchOrder, recorder.launch(), "step");
    // Rank 0 marks first to last, rank 1 last to first.
    std::vector<std::size_t> order{0, 1, 2, 3, 4};
    if (comm.rank() == 1) order = {4, 3, 2, 1, 0};
    for (std::size_t gradient : order) sync.mark(gradient);
    EXPECT_EQ(recorder.launched, kLaunchOrder);
    std::vector<std::size_t> finished;
    sync.finish_all(comm::deadline_after(comm, -1), [&](std::size_t group) { finished.push_back(group); });
    EXPECT_EQ(finished, kLaunchOrder);
    // Each group met its own collective on the peer: (g + 1) * (1 + 2).
    EXPECT_EQ(recorder.values, (std::vector<double>{3.0, 6.0, 9.0}));
    for (std::size_t group = 0; group < 3; ++group) EXPECT_EQ(sync.state(group), GroupState::reduced);
    sync.reset();
    for (std::size_t group = 0; group < 3; ++group) EXPECT_EQ(sync.state(group), GroupState::waiting);
  });
}

TEST(GradientSync, AGroupWaitsForTheGroupsBeforeItInLaunchOrder) {
  run_world(1, [](comm::Communicator& comm) {
    Recorder recorder(comm);
    recorder.no_request = true;
    GradientSync sync(comm, kGroupOf, kLaunchOrder, recorder.launch(), "step");
    EXPECT_TRUE(sync.mark(2));  // group 0 is complete but last in line
    EXPECT_TRUE(recorder.launched.empty());
    EXPECT_EQ(sync.state(0), GroupState::waiting);
    EXPECT_FALSE(sync.mark(3));
    EXPECT_TRUE(sync.mark(4));  // group 1: still behind group 2
    EXPECT_TRUE(recorder.launched.empty());
    sync.mark(0);
    EXPECT_TRUE(sync.mark(1));  // group 2 opens the way for 1 and 0
    EXPECT_EQ(recorder.launched, kLaunchOrder);
    EXPECT_EQ(sync.state(0), GroupState::reduced);  // no request: nothing to wait for
  });
}

TEST(GradientSync, MarksAreCheckedAndTheUnmarkedNamed) {
  run_world(1, [](comm::Communicator& comm) {
    Recorder recorder(comm);
    GradientSync sync(comm, kGroupOf, kLaunchOrder, recorder.launch(), "micro-step");
    sync.mark(3);
    expect_error(DT_ERR_INVALID_USAGE, [&] { sync.mark(3); });
    EXPECT_EQ(sync.marked_count(), 1u);
    EXPECT_EQ(expect_error(DT_ERR_INVALID_USAGE, [&] { sync.check_unmarked(3, "is"); }),
              "gradient 3 is already marked ready in this micro-step; wait() ends the micro-step");
    EXPECT_NO_THROW(sync.check_unmarked(4, "is"));
    EXPECT_EQ(sync.unmarked(), (std::vector<std::size_t>{0, 1, 2, 4}));
    EXPECT_EQ(sync.unmarked_message({2}), "rank 0: gradient 2 was never marked ready in this micro-step");
    EXPECT_EQ(sync.unmarked_message({0, 1, 4}),
              "rank 0: gradients 0, 1, 4 were never marked ready in this micro-step");
    sync.abandon(comm::deadline_after(comm, -1));
    EXPECT_EQ(sync.marked_count(), 0u);
    EXPECT_NO_THROW(sync.mark(3));
  });
}

TEST(GradientSync, WithLaunchingOffMarksAreKeptAndNothingStarts) {
  run_world(1, [](comm::Communicator& comm) {
    Recorder recorder(comm);
    GradientSync sync(comm, kGroupOf, kLaunchOrder, recorder.launch(), "step");
    sync.set_launching(false);
    for (std::size_t gradient = 0; gradient < 5; ++gradient) sync.mark(gradient);
    EXPECT_TRUE(recorder.launched.empty());
    EXPECT_EQ(sync.marked_count(), 5u);
    int finished = 0;
    sync.finish_all(comm::deadline_after(comm, -1), [&](std::size_t) { ++finished; });
    EXPECT_EQ(finished, 0);
    sync.set_launching(true);
    sync.launch_ready();
    EXPECT_EQ(recorder.launched, kLaunchOrder);
  });
}

TEST(GradientSync, FinishedGroupsAreHandedOverInLaunchOrderOnce) {
  run_world(1, [](comm::Communicator& comm) {
    Recorder recorder(comm);
    GradientSync sync(comm, kGroupOf, kLaunchOrder, recorder.launch(), "step");
    std::vector<std::size_t> finished;
    const auto record = [&](std::size_t group) { finished.push_back(group); };
    sync.take_finished(record);  // nothing launched
    EXPECT_TRUE(finished.empty());
    sync.mark(0);
    sync.mark(1);
    // One rank: the allreduce completes at once or after progress; wait for it.
    sync.finish_all(comm::deadline_after(comm, -1), record);
    EXPECT_EQ(finished, (std::vector<std::size_t>{2}));
    sync.take_finished(record);
    sync.finish_all(comm::deadline_after(comm, -1), record);
    EXPECT_EQ(finished, (std::vector<std::size_t>{2}));  // not twice
    for (std::size_t gradient : {2, 3, 4}) sync.mark(gradient);
    sync.finish_all(comm::deadline_after(comm, -1), record);
    EXPECT_EQ(finished, kLaunchOrder);
  });
}

TEST(GradientSync, ALaunchThatThrowsIsTriedAgain) {
  run_world(1, [](comm::Communicator& comm) {
    std::vector<std::size_t> launched;
    bool fail = true;
    GradientSync sync(
        comm, kGroupOf, kLaunchOrder,
        [&](std::size_t group) -> comm::RequestPtr {
          if (fail) raise(DT_ERR_ABORTED, "the communicator is gone");
          launched.push_back(group);
          return nullptr;
        },
        "step");
    sync.mark(0);
    expect_error(DT_ERR_ABORTED, [&] { sync.mark(1); });
    EXPECT_EQ(sync.state(2), GroupState::waiting);
    EXPECT_EQ(sync.marked_count(), 2u);  // the mark stands
    fail = false;
    sync.launch_ready();
    EXPECT_EQ(launched, (std::vector<std::size_t>{2}));
  });
}

}  // namespace
}  // namespace dtrain::test
