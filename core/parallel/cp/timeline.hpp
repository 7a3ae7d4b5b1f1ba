// A rank's ring attention on the timeline (comm/trace_file.hpp): with
// DTRAIN_TRACE_FILE set, the attention on each key/value block and each
// wait for the next block (or, backward, for the gradient accumulator that
// travels with it) become spans on the thread "cp ring <label> (rank r of
// n)", beside the communicator's own sends and receives. The waits are the
// communication that compute did not hide, measured where it happens:
// benchmarks/cp_hidden.py sums them against the transfers' time alone.
// Without the variable nothing is recorded.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.hpp"
#include "parallel/cp/layout.hpp"

namespace dtrain::parallel::cp {

class RingTimeline {
 public:
  enum class Pass { forward, backward };
  enum class Wait { keys_values, accumulator };

  RingTimeline(const comm::Communicator& comm, SequenceLayout layout, Pass pass);

  // A clock reading for the spans below (steady_ns()).
  static std::int64_t now();
  // The attention on the block of rank `owner` (ring step `step`) ran from `start` until now.
  void block(int step, int owner, std::int64_t start) const;
  // Runs `wait_for` (a wait for `what` of ring step `step`) as a span.
  template <typename WaitFor>
  void wait(Wait what, int step, WaitFor&& wait_for) const {
    const std::int64_t start = now();
    wait_for();
    waited(what, step, start);
  }

 private:
  std::string args(int step) const;
  void waited(Wait what, int step, std::int64_t start) const;

  const bool on_;
  const int world_rank_;
  const Pass pass_;
  const SequenceLayout layout_;
  std::string thread_;
};

}  // namespace dtrain::parallel::cp
