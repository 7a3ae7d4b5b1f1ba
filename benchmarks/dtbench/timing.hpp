// Wall-clock timing of calls that every rank makes together.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "comm.hpp"

namespace dtbench {

using Clock = std::chrono::steady_clock;

// The middle value (the mean of the two middle ones for an even count); 0
// for none.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : 0.5 * (values[half - 1] + values[half]);
}

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The mean time of `iters` calls of `body`, each started after a barrier, so
// that no rank's figure includes waiting for a late peer to arrive.
template <typename Body>
double mean_ms(Comm& comm, int iters, Body&& body) {
  double total = 0;
  for (int i = 0; i < iters; ++i) {
    comm.barrier();
    const auto start = Clock::now();
    body();
    total += ms_since(start);
  }
  return total / iters;
}

}  // namespace dtbench
