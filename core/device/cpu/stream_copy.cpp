#include "device/cpu/stream_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dtrain::device::cpu {

void stream_copy(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  // Streaming stores need 16-byte alignment: the bytes up to it go the
  // ordinary way, as do those after the last whole 16.
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(out) % 16) % 16);
  std::memcpy(out, in, head);
  out += head;
  in += head;
  bytes -= head;
  const std::size_t body = bytes / 16 * 16;
  for (std::size_t i = 0; i < body; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
  }
  std::memcpy(out + body, in + body, bytes - body);
  // Streaming stores are weakly ordered: without the fence, a release store
  // after them could be seen first.
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace dtrain::device::cpu
