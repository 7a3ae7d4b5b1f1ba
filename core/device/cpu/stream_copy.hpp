// A copy whose stores go around this core's caches: for data that another
// core reads next, and for data that would leave the caches before it is
// read anyway (an ordinary store first reads in the line it writes).
//
// When a core rewrites a line that another core has read, every store must
// first take the line back from that core's cache. Where the cores share no
// cache (different core complexes, or virtual CPUs the host moves between
// them), those round trips dominate: rewriting 64 KiB that a peer read the
// time before costs several times what streaming it to memory does, from
// which the peer then reads it. Small copies are better cached: the reader
// takes the lines straight from the writer's cache.
#pragma once

#include <cstddef>

namespace dtrain::device::cpu {

// memcpy(dst, src, bytes), with non-temporal stores where the CPU has them.
// The buffers must not overlap. The stores are ordered before any store
// after the call (a fence ends the streaming ones), so a flag released next
// covers them.
void stream_copy(void* dst, const void* src, std::size_t bytes);

}  // namespace dtrain::device::cpu
