#include "cpu_peak.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace dtbench {

namespace {

bool has_flag(const std::string& flags, const char* flag) {
  std::istringstream words(flags);
  for (std::string word; words >> word;) {
    if (word == flag) return true;
  }
  return false;
}

// The value after "name<tabs>: " on the first line that starts with name.
std::string field(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(colon + 1);
  }
  return {};
}

// Cycles per second of this thread's core: `rounds` x 8 dependent additions
// take that many cycles (the loop's own counter and branch run beside them).
// The empty asm after each addition keeps the compiler from folding them.
// The addend is a register, not an immediate: some newer cores (Intel's
// from Golden Cove) fold additions of immediates at renaming, and a chain of
// them read as 6.3-6.8 GHz on a 2.1 GHz AVX-512 host.
double measured_ghz() {
  constexpr std::int64_t rounds = 1'000'000;
  volatile std::uint64_t one_in_memory = 1;
  const std::uint64_t one = one_in_memory;
  double best = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint64_t x = 0;
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < rounds; ++i) {
      for (int j = 0; j < 8; ++j) {
        x += one;
        asm volatile("" : "+r"(x) : "r"(one));
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(rounds) * 8 / seconds / 1e9);
  }
  return best;
}

}  // namespace

CpuPeak cpu_peak(double ghz_override) {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  const std::string flags = field(text.str(), "flags");
  CpuPeak peak;
  if (has_flag(flags, "avx512f")) {
    peak.flops_per_cycle = 64;
    peak.units = "AVX-512 FMA";
  } else if (has_flag(flags, "avx2") && has_flag(flags, "fma")) {
    peak.flops_per_cycle = 32;
    peak.units = "AVX2+FMA";
  } else {
    peak.flops_per_cycle = 16;
    peak.units = "SSE";
  }
  const std::string mhz = field(text.str(), "cpu MHz");
  peak.reported_ghz = mhz.empty() ? 0.0 : std::stod(mhz) / 1000.0;
  peak.ghz = ghz_override > 0 ? ghz_override : measured_ghz();
  return peak;
}

}  // namespace dtbench
