// The peak f32 FLOP rate of this machine's CPU cores: cores x GHz x f32
// FLOPs per cycle per core. FLOPs per cycle come from the widest fused
// multiply-add /proc/cpuinfo's flags name, assuming two FMA pipes per core
// (AVX-512: 2 x 16 lanes x 2 = 64; AVX2 with FMA: 2 x 8 x 2 = 32; otherwise
// SSE, a multiply and an add of 4 lanes each per cycle = 16). The clock is
// measured: a chain of dependent integer additions, one cycle each on every
// x86-64 core, timed while this thread runs (the best of 100 tries of about
// 3 ms, shorter than a scheduler's slice, since sharing the core only ever
// makes a try slower), so it
// is the clock the benchmark actually gets, boost included; /proc/cpuinfo's
// "cpu MHz" is often only the nominal clock on a virtual machine.
#pragma once

#include <string>

namespace dtbench {

struct CpuPeak {
  double ghz = 0;           // measured, or the caller's
  double reported_ghz = 0;  // /proc/cpuinfo's "cpu MHz", 0 when absent
  int flops_per_cycle = 0;  // f32, one core
  std::string units;        // "AVX2+FMA", ...

  double gflops(int cores) const { return cores * ghz * flops_per_cycle; }
};

// ghz_override > 0 replaces the measured clock.
CpuPeak cpu_peak(double ghz_override);

}  // namespace dtbench
