// How a rank writes what its peers read next from its mailbox: through its
// cache, or streamed around it (device/cpu/stream_copy.hpp).
//
// Rewriting a line that a peer on another core has read first takes it back
// from that core's cache, and what that costs depends on where the host
// runs the cores. On this project's 2-core virtual machines, rewriting
// 64 KiB that the peer has read takes about 7 us in phases where the two
// cores are close and 28 us where the host has put them far apart; streaming
// takes 2 us either way, and the peer then reads from memory (`dtbench
// handoff` measures both ways on a machine). So:
//  - small pieces (below kStreamFrom) are cached: the reader takes the lines
//    straight from the writer's cache, and the round trip is short anyway;
//  - mid-sized pieces are streamed where every rank has a CPU of its own;
//  - larger ones (the peer's copies have mostly left its cache by their
//    next use, and streaming would send the reads of a piece that would
//    have stayed in cache to memory), and mid-sized ones where ranks share
//    cores, are cached while that costs less than kFarRatio times
//    streaming. The rank times these copies, and every kProbeEvery-th goes
//    the other way, to notice when the phase changes. Measured there, a
//    cached copy costs 0.2-0.5 times a streamed one with the cores close
//    (1.4-2.2 times for 64-128 KiB pieces at 4 ranks on 2 cores, where
//    streaming them is still slower), and 4-12 times with them far apart.
// Whatever is chosen, the bytes are the same: each rank chooses for itself.
#pragma once

#include <cstddef>

namespace dtrain::comm::ucx {

class Handoff {
 public:
  static constexpr std::size_t kStreamFrom = 32 * 1024;
  static constexpr std::size_t kStreamBelow = 256 * 1024;
  static constexpr double kFarRatio = 3;
  static constexpr unsigned kProbeEvery = 64;
  static constexpr double kMaxStep = 4;

  // `cores_apart`: the ranks do not outnumber the CPUs they may run on
  // (outnumber_their_cores(), liveness.hpp), so each has one of its own.
  explicit Handoff(bool cores_apart) : cores_apart_(cores_apart) {}

  // memcpy(dst, src, bytes), for `bytes` of a piece of `piece` bytes that
  // peers read next. The copy is complete and ordered before any later store.
  void copy(void* dst, const void* src, std::size_t bytes, std::size_t piece);

  // Whether cached copies cost more than kFarRatio times streamed ones now:
  // the peers' cores are far from this one's.
  bool far() const { return far_; }
  // Whether a piece of `piece` bytes is timed and its way chosen by the
  // costs measured; the others' way is fixed.
  bool adaptive(std::size_t piece) const { return piece >= kStreamFrom && !(cores_apart_ && piece < kStreamBelow); }
  // How the next copy of a piece of `piece` bytes goes.
  bool streams(std::size_t piece) const;
  // Records that a copy of `bytes`, streamed or not, took `ns` nanoseconds.
  void record(bool streamed, std::size_t bytes, double ns);

 private:
  const bool cores_apart_;
  double cached_ns_per_byte_ = 0;  // 0: not measured yet
  double streamed_ns_per_byte_ = 0;
  unsigned adaptive_copies_ = 0;
  bool far_ = false;
};

}  // namespace dtrain::comm::ucx
