// The CUDA kernels against the CPU kernels on random data (special values
// included): every element of a poisoned output must hold exactly what the
// CPU computes, and nothing past the end may change. Sizes cover the tail
// and unaligned paths as well as the 16-byte vector path. Also the runtime
// wrappers (cuBLAS GEMM is tested with the device layer, tests/device).
// Skipped, with a message, without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/cpu/convert.hpp"
#include "device/cpu/half.hpp"
#include "device/cpu/reduce.hpp"
#include "device/cuda/kernels.hpp"
#include "gpu.hpp"

namespace dtrain::test {
namespace {

namespace cuda = device::cuda;
namespace cpu = device::cpu;
using cpu::Reduction;

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 64;  // bytes after the end that must stay poisoned

const std::int64_t kCounts[] = {0, 1, 7, 8, 33, 1000, (1 << 20) + 3};

// Random bytes shaped like values of `dtype`, with NaN, infinities, signed
// zeros and subnormals sprinkled in for the floating types (16-bit NaNs with
// a sign and a payload among them, which no conversion makes).
std::vector<unsigned char> random_values(DType dtype, std::int64_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::size_t size = dtype_size(dtype);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(count) * size);
  std::uniform_real_distribution<float> real(-100.0f, 100.0f);
  std::uniform_int_distribution<int> pick(0, 63);
  for (std::int64_t i = 0; i < count; ++i) {
    unsigned char* at = bytes.data() + i * size;
    float f = real(rng);
    const int kind = pick(rng);
    switch (kind) {
      case 0: f = std::numeric_limits<float>::quiet_NaN(); break;
      case 1: f = std::numeric_limits<float>::infinity(); break;
      case 2: f = -std::numeric_limits<float>::infinity(); break;
      case 3: f = -0.0f; break;
      case 4: f = std::numeric_limits<float>::denorm_min() * 3; break;
      case 5: f = 6.1e-5f; break;  // near f16's smallest normal
      case 6: f = 70000.0f; break;  // beyond f16's range
      default: break;
    }
    switch (dtype) {
      case DType::f32: std::memcpy(at, &f, 4); break;
      case DType::f64: {
        const double d = static_cast<double>(f) * 1.000000123;
        std::memcpy(at, &d, 8);
        break;
      }
      case DType::f16: {
        const std::uint16_t h = kind == 7 ? 0xfd23 : cpu::float_to_half(f);
        std::memcpy(at, &h, 2);
        break;
      }
      case DType::bf16: {
        const std::uint16_t h = kind == 7 ? 0xff81 : cpu::float_to_bf16(f);
        std::memcpy(at, &h, 2);
        break;
      }
      default:
        for (std::size_t b = 0; b < size; ++b) at[b] = static_cast<unsigned char>(rng());
    }
  }
  return bytes;
}

double widen(DType dtype, const unsigned char* at) {
  switch (dtype) {
    case DType::f32: {
      float f;
      std::memcpy(&f, at, 4);
      return f;
    }
    case DType::f64: {
      double d;
      std::memcpy(&d, at, 8);
      return d;
    }
    case DType::f16: {
      std::uint16_t h;
      std::memcpy(&h, at, 2);
      return cpu::half_to_float(h);
    }
    case DType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, at, 2);
      return cpu::bf16_to_float(h);
    }
    default: return 0.0;
  }
}

// Element by element: bit for bit, except that any f32 or f64 NaN equals any
// other (the GPU's default NaN differs from the CPU's). f16 and bf16 results
// come out of a conversion, which gives the canonical NaN on both.
void expect_same(DType dtype, const std::vector<unsigned char>& want, const std::vector<unsigned char>& got,
                 std::int64_t count, const std::string& what) {
  const std::size_t size = dtype_size(dtype);
  int reported = 0;
  for (std::int64_t i = 0; i < count && reported < 5; ++i) {
    const unsigned char* w = want.data() + i * size;
    const unsigned char* g = got.data() + i * size;
    if (std::memcmp(w, g, size) == 0) continue;
    const bool wide = dtype == DType::f32 || dtype == DType::f64;
    if (wide && std::isnan(widen(dtype, w)) && std::isnan(widen(dtype, g))) continue;
    ADD_FAILURE() << what << ": element " << i << " of " << count << " differs (want " << widen(dtype, w)
                  << ", got " << widen(dtype, g) << ")";
    ++reported;
  }
}

// A poisoned device output of `bytes` plus the guard, starting `offset`
// bytes into the allocation (for unaligned runs).
struct Output {
  cuda::DeviceBuffer buffer;
  std::size_t offset;
  std::size_t bytes;
  Output(std::size_t n, std::size_t off) : buffer(0, off + n + kGuard), offset(off), bytes(n) {
    cuda::check(cudaMemset(buffer.data(), kPoison, off + n + kGuard), "cudaMemset");
  }
  void* data() const { return static_cast<unsigned char*>(buffer.data()) + offset; }
  std::vector<unsigned char> read() const { return to_host<unsigned char>(data(), bytes); }
  void expect_guard(const std::string& what) const {
    auto guard = to_host<unsigned char>(static_cast<unsigned char*>(data()) + bytes, kGuard);
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(guard[i], kPoison) << what << ": byte " << i << " past the end was written";
    }
  }
};

struct Input {
  cuda::DeviceBuffer buffer;
  std::size_t offset;
  Input(const std::vector<unsigned char>& bytes, std::size_t off) : buffer(0, off + bytes.size() + 1), offset(off) {
    if (!bytes.empty()) {
      cuda::check(cudaMemcpy(data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
  }
  void* data() const { return static_cast<unsigned char*>(buffer.data()) + offset; }
};

const DType kAll[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::i8, DType::u8};
const DType kFloating[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

std::string label(const char* kernel, DType dtype, std::int64_t count, std::size_t offset) {
  return std::string(kernel) + " " + dtype_name(dtype) + " x" + std::to_string(count) +
         (offset ? " unaligned" : "");
}

class Kernels : public ::testing::Test {
 protected:
  void SetUp() override { DT_REQUIRE_GPUS(1); }
};

TEST_F(Kernels, ReduceMatchesTheCpu) {
  const Reduction ops[] = {Reduction::sum, Reduction::prod, Reduction::max, Reduction::min};
  std::uint32_t seed = 1;
  for (DType dtype : kAll) {
    const std::size_t size = dtype_size(dtype);
    for (std::int64_t count : kCounts) {
      for (std::size_t offset : {std::size_t{0}, size}) {
        for (Reduction op : ops) {
          auto dst = random_values(dtype, count, seed++);
          const auto src = random_values(dtype, count, seed++);
          Input src_dev(src, offset);
          // dst starts as random data; only its first `bytes` are compared,
          // the guard after it must stay poisoned.
          Output out(dst.size(), offset);
          if (!dst.empty()) cuda::check(cudaMemcpy(out.data(), dst.data(), dst.size(), cudaMemcpyHostToDevice), "copy");
          cuda::reduce(op, dtype, out.data(), src_dev.data(), count, nullptr);
          synchronize();
          cpu::reduce(op, dtype, dst.data(), src.data(), count);
          const std::string what = label("reduce", dtype, count, offset) + " op " + std::to_string(int(op));
          expect_same(dtype, dst, out.read(), count, what);
          out.expect_guard(what);
        }
      }
    }
  }
}

TEST_F(Kernels, ReduceInPlace) {
  for (DType dtype : kAll) {
    auto data = random_values(dtype, 1001, 99);
    Input dev(data, 0);
    cuda::reduce(Reduction::sum, dtype, dev.data(), dev.data(), 1001, nullptr);
    synchronize();
    cpu::reduce(Reduction::sum, dtype, data.data(), data.data(), 1001);
    expect_same(dtype, data, to_host<unsigned char>(dev.data(), data.size()), 1001,
                label("reduce in place", dtype, 1001, 0));
  }
}

TEST_F(Kernels, DivideMatchesTheCpu) {
  std::uint32_t seed = 500;
  for (DType dtype : kFloating) {
    for (std::int64_t count : kCounts) {
      for (std::size_t offset : {std::size_t{0}, dtype_size(dtype)}) {
        for (double divisor : {3.0, 8.0, 0.1}) {
          auto data = random_values(dtype, count, seed++);
          Output out(data.size(), offset);
          if (!data.empty()) cuda::check(cudaMemcpy(out.data(), data.data(), data.size(), cudaMemcpyHostToDevice), "copy");
          cuda::divide(dtype, out.data(), count, divisor, nullptr);
          synchronize();
          cpu::divide(dtype, data.data(), count, divisor);
          const std::string what = label("divide", dtype, count, offset);
          expect_same(dtype, data, out.read(), count, what);
          out.expect_guard(what);
        }
      }
    }
  }
}

// scale's CPU reference: x * factor in the dtype's arithmetic (f32 for the
// 16-bit types), rounded once.
std::vector<unsigned char> scaled(DType dtype, const std::vector<unsigned char>& in, std::int64_t count, double factor) {
  std::vector<unsigned char> out(in.size());
  const float f = static_cast<float>(factor);
  for (std::int64_t i = 0; i < count; ++i) {
    const unsigned char* a = in.data() + i * dtype_size(dtype);
    unsigned char* b = out.data() + i * dtype_size(dtype);
    switch (dtype) {
      case DType::f32: {
        float x;
        std::memcpy(&x, a, 4);
        x = x * f;
        std::memcpy(b, &x, 4);
        break;
      }
      case DType::f64: {
        double x;
        std::memcpy(&x, a, 8);
        x = x * factor;
        std::memcpy(b, &x, 8);
        break;
      }
      case DType::f16:
      case DType::bf16: {
        std::uint16_t h;
        std::memcpy(&h, a, 2);
        const bool bf = dtype == DType::bf16;
        const float x = (bf ? cpu::bf16_to_float(h) : cpu::half_to_float(h)) * f;
        h = bf ? cpu::float_to_bf16(x) : cpu::float_to_half(x);
        std::memcpy(b, &h, 2);
        break;
      }
      default: break;
    }
  }
  return out;
}

TEST_F(Kernels, ScaleMatchesTheCpu) {
  std::uint32_t seed = 900;
  for (DType dtype : kFloating) {
    for (std::int64_t count : kCounts) {
      for (std::size_t offset : {std::size_t{0}, dtype_size(dtype)}) {
        const auto in = random_values(dtype, count, seed++);
        Input src(in, 0);
        Output out(in.size(), offset);
        cuda::scale(dtype, out.data(), src.data(), count, 0.37, nullptr);
        synchronize();
        const std::string what = label("scale", dtype, count, offset);
        expect_same(dtype, scaled(dtype, in, count, 0.37), out.read(), count, what);
        out.expect_guard(what);
      }
    }
  }
  // In place, and a refusal for integers before anything is queued.
  auto in = random_values(DType::f32, 100, 7);
  Input dev(in, 0);
  cuda::scale(DType::f32, dev.data(), dev.data(), 100, 2.0, nullptr);
  synchronize();
  expect_same(DType::f32, scaled(DType::f32, in, 100, 2.0), to_host<unsigned char>(dev.data(), in.size()), 100,
              "scale in place");
  try {
    cuda::scale(DType::i32, dev.data(), dev.data(), 10, 2.0, nullptr);
    ADD_FAILURE() << "scale of i32 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
  }
}

TEST_F(Kernels, CastsMatchTheCpu) {
  struct Pair {
    DType from, to;
  };
  const Pair pairs[] = {{DType::f32, DType::f16}, {DType::f32, DType::bf16}, {DType::f16, DType::f32},
                        {DType::bf16, DType::f32}, {DType::f32, DType::f32}, {DType::bf16, DType::bf16}};
  std::uint32_t seed = 1300;
  for (const Pair& p : pairs) {
    for (std::int64_t count : kCounts) {
      // Unaligned for the vector path, aligned for the elements.
      const std::size_t element = std::max(dtype_size(p.from), dtype_size(p.to));
      for (std::size_t offset : {std::size_t{0}, element}) {
        const auto in = random_values(p.from, count, seed++);
        Input src(in, offset);
        Output out(static_cast<std::size_t>(count) * dtype_size(p.to), offset);
        cuda::cast(p.to, out.data(), p.from, src.data(), count, nullptr);
        synchronize();
        std::vector<unsigned char> want(static_cast<std::size_t>(count) * dtype_size(p.to));
        for (std::int64_t i = 0; i < count; ++i) {
          const float x = static_cast<float>(widen(p.from, in.data() + i * dtype_size(p.from)));
          unsigned char* w = want.data() + i * dtype_size(p.to);
          if (p.to == p.from) {
            std::memcpy(w, in.data() + i * dtype_size(p.from), dtype_size(p.to));
          } else if (p.to == DType::f32) {
            std::memcpy(w, &x, 4);
          } else {
            const std::uint16_t h = p.to == DType::f16 ? cpu::float_to_half(x) : cpu::float_to_bf16(x);
            std::memcpy(w, &h, 2);
          }
        }
        const std::string what = std::string("cast ") + dtype_name(p.from) + "->" + dtype_name(p.to) + " x" +
                                 std::to_string(count) + (offset ? " unaligned" : "");
        expect_same(p.to, want, out.read(), count, what);
        out.expect_guard(what);
      }
    }
  }
  try {
    cuda::cast(DType::i32, nullptr, DType::f32, nullptr, 0, nullptr);
    ADD_FAILURE() << "f32 -> i32 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_UNSUPPORTED);
  }
}

// What DDP buckets are packed and unpacked with: scaled and converted with
// one rounding, as cpu::scaled_copy does, bit for bit.
TEST_F(Kernels, ScaledCastsMatchTheCpu) {
  struct Pair {
    DType from, to;
  };
  const Pair pairs[] = {{DType::f32, DType::f16},  {DType::f32, DType::bf16}, {DType::f16, DType::f32},
                        {DType::bf16, DType::f32}, {DType::f32, DType::f32},  {DType::f64, DType::f64}};
  std::uint32_t seed = 1700;
  for (const Pair& p : pairs) {
    for (double factor : {0.25, 1.0 / 3.0}) {
      for (std::int64_t count : kCounts) {
        const auto in = random_values(p.from, count, seed++);
        Input src(in, 0);
        Output out(static_cast<std::size_t>(count) * dtype_size(p.to), 0);
        cuda::scaled_cast(p.to, out.data(), p.from, src.data(), count, factor, nullptr);
        synchronize();
        std::vector<unsigned char> want(static_cast<std::size_t>(count) * dtype_size(p.to) + 1);
        cpu::scaled_copy(p.from, in.data(), p.to, want.data(), count, factor);
        const std::string what = std::string("scaled_cast ") + dtype_name(p.from) + "->" + dtype_name(p.to) +
                                 " x" + std::to_string(count) + " by " + std::to_string(factor);
        expect_same(p.to, want, out.read(), count, what);
        out.expect_guard(what);
      }
    }
  }
}

TEST_F(Kernels, FillWritesEveryElement) {
  for (DType dtype : kAll) {
    for (std::int64_t count : kCounts) {
      for (std::size_t offset : {std::size_t{0}, dtype_size(dtype)}) {
        const double value = dtype_is_floating(dtype) ? -1.5 : 7.0;
        Output out(static_cast<std::size_t>(count) * dtype_size(dtype), offset);
        cuda::fill(dtype, out.data(), count, value, nullptr);
        synchronize();
        const auto got = out.read();
        const std::string what = label("fill", dtype, count, offset);
        for (std::int64_t i = 0; i < count; ++i) {
          const unsigned char* at = got.data() + i * dtype_size(dtype);
          if (dtype_is_floating(dtype)) {
            ASSERT_EQ(widen(dtype, at), value) << what << " element " << i;
          } else {
            std::int64_t v = 0;
            std::memcpy(&v, at, dtype_size(dtype));
            ASSERT_EQ(v, 7) << what << " element " << i;
          }
        }
        out.expect_guard(what);
      }
    }
  }
  try {
    cuda::fill(DType::u8, nullptr, 0, 300.0, nullptr);
    ADD_FAILURE() << "300 accepted as a u8";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
  }
}

TEST_F(Kernels, MisalignedPointersAreRefusedBeforeLaunch) {
  cuda::DeviceBuffer buffer(0, 64);
  void* odd = static_cast<unsigned char*>(buffer.data()) + 2;
  try {
    cuda::reduce(Reduction::sum, DType::f32, odd, odd, 4, nullptr);
    ADD_FAILURE() << "a float at an address 2 mod 4 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("not aligned"), std::string::npos) << e.what();
  }
  synchronize();  // the context is still healthy
}

TEST_F(Kernels, QueueOnAStream) {
  cuda::Stream stream(0);
  const std::int64_t n = 1 << 22;
  cuda::DeviceBuffer a(0, n * 4), b(0, n * 4);
  cuda::fill(DType::f32, a.data(), n, 2.0, stream.get());
  cuda::fill(DType::f32, b.data(), n, 3.0, stream.get());
  cuda::reduce(Reduction::prod, DType::f32, a.data(), b.data(), n, stream.get());
  cuda::divide(DType::f32, a.data(), n, 4.0, stream.get());
  stream.synchronize();
  const auto out = to_host<float>(a.data(), n);
  for (std::int64_t i = 0; i < n; i += 4099) ASSERT_EQ(out[i], 1.5f) << i;
  EXPECT_EQ(out[n - 1], 1.5f);
}

TEST(CudaRuntime, GuardRestoresTheCurrentDevice) {
  DT_REQUIRE_GPUS(1);
  const int last = device::cuda_device_count() - 1;
  cuda::check(cudaSetDevice(0), "cudaSetDevice");
  {
    cuda::DeviceGuard guard(last);
    int now = -1;
    cudaGetDevice(&now);
    EXPECT_EQ(now, last);
  }
  int now = -1;
  cudaGetDevice(&now);
  EXPECT_EQ(now, 0);
}

TEST(CudaRuntime, PinnedMemoryEventsAndPointers) {
  DT_REQUIRE_GPUS(1);
  cuda::PinnedBuffer pinned(1 << 20);
  cuda::DeviceBuffer dev(0, 1 << 20);
  std::vector<float> host(256, 0.0f);
  EXPECT_EQ(cuda::pointer_info(pinned.data()).kind, cuda::PointerInfo::Kind::pinned_host);
  EXPECT_EQ(cuda::pointer_info(dev.data()).kind, cuda::PointerInfo::Kind::device);
  EXPECT_EQ(cuda::pointer_info(dev.data()).device, 0);
  EXPECT_EQ(cuda::pointer_info(host.data()).kind, cuda::PointerInfo::Kind::host);

  cuda::Stream stream(0);
  cuda::Event event(0);
  std::memset(pinned.data(), 0x11, 1 << 20);
  cuda::copy_async(dev.data(), pinned.data(), 1 << 20, stream.get());
  // A strided copy: 16 rows of 64 bytes out of rows of 256.
  cuda::PinnedBuffer back(16 * 64);
  cuda::copy_2d_async(back.data(), 64, dev.data(), 256, 64, 16, stream.get());
  event.record(stream.get());
  while (!event.query()) {
  }
  const auto* bytes = static_cast<const unsigned char*>(back.data());
  for (int i = 0; i < 16 * 64; ++i) ASSERT_EQ(bytes[i], 0x11);
  EXPECT_FALSE(cuda::pci_bus_id(0).empty());
}

TEST(CudaRuntime, ErrorsBecomeStatuses) {
  DT_REQUIRE_GPUS(1);
  try {
    cuda::DeviceBuffer huge(0, std::size_t{1} << 60);
    ADD_FAILURE() << "an exabyte was allocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos) << e.what();
  }
  // The failure is not sticky: the device still works.
  cuda::DeviceBuffer small(0, 64);
  cuda::fill(DType::i32, small.data(), 16, 1.0, nullptr);
  synchronize();
}

}  // namespace
}  // namespace dtrain::test
