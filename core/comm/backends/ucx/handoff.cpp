#include "comm/backends/ucx/handoff.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "device/cpu/stream_copy.hpp"

namespace dtrain::comm::ucx {

bool Handoff::streams(std::size_t piece) const {
  // Fixed ways: small pieces cached, mid-sized ones (CPUs apart) streamed.
  if (!adaptive(piece)) return piece >= kStreamFrom;
  // Streaming is measured first of all, then now and then the way not taken.
  const bool probe = streamed_ns_per_byte_ == 0 || adaptive_copies_ % kProbeEvery == kProbeEvery - 1;
  return far_ != probe;
}

void Handoff::copy(void* dst, const void* src, std::size_t bytes, std::size_t piece) {
  const bool stream = streams(piece);
  const bool timed = adaptive(piece);
  const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (stream) {
    device::cpu::stream_copy(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
  if (timed && bytes > 0) {
    ++adaptive_copies_;
    record(stream, bytes, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
  }
}

void Handoff::record(bool streamed, std::size_t bytes, double ns) {
  double& cost = streamed ? streamed_ns_per_byte_ : cached_ns_per_byte_;
  const double sample = ns / static_cast<double>(bytes);
  // Half the weight to the newest, which counts as at most kMaxStep times
  // the estimate: a phase change shows within a few copies, and a copy that
  // was preempted does not decide alone.
  cost = cost == 0 ? sample : (cost + std::min(sample, kMaxStep * cost)) / 2;
  far_ =
      cached_ns_per_byte_ > 0 && streamed_ns_per_byte_ > 0 && cached_ns_per_byte_ > kFarRatio * streamed_ns_per_byte_;
}

}  // namespace dtrain::comm::ucx
