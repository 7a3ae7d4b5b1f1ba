// Rate-limited warnings about the connections a store refuses or drops.
//
// Without a limit, anything that opens connections without the token (a
// port scanner, a stale launcher, a process squatting on the store) would
// write one WARN line per connection into the job's log. Instead the first
// refusal of each kind in a spell is logged in full, later ones are counted,
// and each time `period` passes one line sums them up:
//
//   rendezvous store at 127.0.0.1:29500: refused or dropped 1022 more
//   connections in the last 10.0 s: 1000 dropped to make room for newer
//   handshakes, 22 did not authenticate within 10000 ms
//
// A spell ends when a whole period passes without a refusal; the next one
// is logged in full again.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace dtrain::bootstrap {

class RefusalLog {
 public:
  using Clock = std::chrono::steady_clock;

  // `where` names the store in every line.
  RefusalLog(std::string where, std::chrono::milliseconds period);

  // Records one refused or dropped connection. `kind` is how the summary
  // counts it ("did not authenticate within 500 ms"); `detail` is the full
  // line written when it is the first of its kind in the spell.
  void record(const std::string& kind, const std::string& detail, Clock::time_point now);

  // Writes the summary once the period has passed; the owner calls it no
  // later than next_due().
  void tick(Clock::time_point now);
  // When tick() has work next; Clock::time_point::max() when none.
  Clock::time_point next_due() const;

  // Writes the summary of what has been counted so far, whatever the time
  // (when the store stops, so that nothing counted goes unsaid).
  void flush(Clock::time_point now);

 private:
  void summarise(Clock::time_point now);

  const std::string where_;
  const std::chrono::milliseconds period_;
  bool in_spell_ = false;
  Clock::time_point period_start_{};
  // Kinds seen in this spell, in the order first seen, with what has been
  // counted of each since the last summary.
  std::vector<std::pair<std::string, std::size_t>> kinds_;
  std::size_t counted_ = 0;
};

}  // namespace dtrain::bootstrap
