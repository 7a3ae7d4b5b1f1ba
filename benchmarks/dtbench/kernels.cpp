// dtbench kernels. The kernels are internal (libdtrain runs them inside the
// collectives and the optimizer), so this subcommand links the core library
// (dtrain_core) where every other one uses only the public C API.
//
// Each kernel is timed with CUDA events on one stream, the median of --iters
// runs after three warm-ups, on buffers from --min-mib to --max-mib doubling.
// GB/s counts the bytes a kernel reads plus the bytes it writes (a copy of N
// bytes moves 2N), so kernels and the device-to-device copy compare directly.
#include "kernels.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "command_line.hpp"
#include "device/probe.hpp"
#include "usage.hpp"

#ifdef DTRAIN_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "base/error.hpp"
#include "device/cuda/error.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/optim_kernels.hpp"
#include "device/cuda/runtime.hpp"
#endif

namespace dtbench {

namespace {

const Usage kCli{"kernels", "usage: dtbench kernels [options]",
                 "The bandwidth of libdtrain's CUDA kernels (fill, scale, divide, casts,\n"
                 "reductions, the optimizers' fused AdamW update) on CUDA device 0, next to\n"
                 "a device-to-device copy measured in the same run. Without a CUDA device it\n"
                 "says so and exits 0."};

struct Args {
  std::size_t min_mib = 1;
  std::size_t max_mib = 1024;
  int iters = 20;
  std::string json;
};

#ifdef DTRAIN_HAVE_CUDA

namespace cuda = dtrain::device::cuda;
using dtrain::DType;

struct Kernel {
  const char* name;
  double traffic;  // bytes moved per byte of the working size
  std::function<void(void* a, void* b, std::size_t bytes, cudaStream_t s)> run;
};

const char kCopy[] = "copy d2d";

// The optimizer's fused AdamW step over one tensor of n = bytes / 16
// elements: f32 param and grad in `a`, moments in `b` (bf16: param, grad and
// master in `a`). Either way the working size holds 16 bytes per element and
// a step moves 28 per element (f32: reads 16, writes 12; bf16: reads 14, the
// param coming from its master, and writes 14; grads are only read), so the
// traffic is 1.75. The chunk table is built when the buffers change, in the
// warm-up runs.
class FusedAdamw {
 public:
  explicit FusedAdamw(DType dtype) : dtype_(dtype) {
    constants_.lr_weight_decay = 1e-5f;
    constants_.beta1 = 0.9f;
    constants_.one_minus_beta1 = 0.1f;
    constants_.beta2 = 0.999f;
    constants_.one_minus_beta2 = 0.001f;
    constants_.step_size = 1e-3f;
    constants_.eps = 1e-8f;
  }

  void operator()(void* a, void* b, std::size_t bytes, cudaStream_t stream) {
    if (a != a_ || b != b_ || bytes != bytes_) build(a, b, bytes);
    cuda::optim::adamw_update(constants_, static_cast<const cuda::optim::Chunk*>(table_.data()), chunks_, stream);
  }

 private:
  void build(void* a, void* b, std::size_t bytes) {
    const std::size_t n = bytes / 16;
    const std::size_t size = dtype_ == DType::f32 ? 4 : 2;
    char* left = static_cast<char*>(a);
    char* right = static_cast<char*>(b);
    cuda::optim::Tensor t;
    t.dtype = dtype_;
    t.count = static_cast<std::int64_t>(n);
    t.param = left;
    t.grad = left + n * size;
    if (dtype_ != DType::f32) t.master = reinterpret_cast<float*>(left + 2 * n * size);
    t.state[0] = reinterpret_cast<float*>(right);
    t.state[1] = reinterpret_cast<float*>(right + 4 * n);
    const std::vector<cuda::optim::Chunk> chunks = cuda::optim::make_chunks({t});
    table_ = cuda::DeviceBuffer(0, chunks.size() * sizeof(cuda::optim::Chunk));
    if (!chunks.empty()) {
      cuda::check(cudaMemcpy(table_.data(), chunks.data(), table_.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    chunks_ = static_cast<std::int64_t>(chunks.size());
    a_ = a;
    b_ = b;
    bytes_ = bytes;
  }

  DType dtype_;
  cuda::optim::AdamwConstants constants_;
  void* a_ = nullptr;
  void* b_ = nullptr;
  std::size_t bytes_ = 0;
  cuda::DeviceBuffer table_;
  std::int64_t chunks_ = 0;
};

std::vector<Kernel> kernels() {
  using cuda::Reduction;
  return {
      {kCopy, 2.0,
       [](void* a, void* b, std::size_t n, cudaStream_t s) {
         cuda::check(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
       }},
      {"fill f32", 1.0, [](void* a, void*, std::size_t n, cudaStream_t s) { cuda::fill(DType::f32, a, n / 4, 1.0, s); }},
      {"scale f32", 2.0,
       [](void* a, void* b, std::size_t n, cudaStream_t s) { cuda::scale(DType::f32, b, a, n / 4, 0.5, s); }},
      {"scale bf16", 2.0,
       [](void* a, void* b, std::size_t n, cudaStream_t s) { cuda::scale(DType::bf16, b, a, n / 2, 0.5, s); }},
      {"divide f32", 2.0,
       [](void* a, void*, std::size_t n, cudaStream_t s) { cuda::divide(DType::f32, a, n / 4, 3.0, s); }},
      // Casts: the working size is the f32 side; the 16-bit side is half.
      {"cast f32->bf16", 1.5,
       [](void* a, void* b, std::size_t n, cudaStream_t s) { cuda::cast(DType::bf16, b, DType::f32, a, n / 4, s); }},
      {"cast bf16->f32", 1.5,
       [](void* a, void* b, std::size_t n, cudaStream_t s) { cuda::cast(DType::f32, b, DType::bf16, a, n / 4, s); }},
      {"cast f32->f16", 1.5,
       [](void* a, void* b, std::size_t n, cudaStream_t s) { cuda::cast(DType::f16, b, DType::f32, a, n / 4, s); }},
      {"reduce sum f32", 3.0,
       [](void* a, void* b, std::size_t n, cudaStream_t s) {
         cuda::reduce(Reduction::sum, DType::f32, b, a, n / 4, s);
       }},
      {"reduce sum bf16", 3.0,
       [](void* a, void* b, std::size_t n, cudaStream_t s) {
         cuda::reduce(Reduction::sum, DType::bf16, b, a, n / 2, s);
       }},
      {"reduce max i32", 3.0,
       [](void* a, void* b, std::size_t n, cudaStream_t s) {
         cuda::reduce(Reduction::max, DType::i32, b, a, n / 4, s);
       }},
      {"adamw f32", 1.75,
       [adamw = std::make_shared<FusedAdamw>(DType::f32)](void* a, void* b, std::size_t n, cudaStream_t s) {
         (*adamw)(a, b, n, s);
       }},
      {"adamw bf16", 1.75,
       [adamw = std::make_shared<FusedAdamw>(DType::bf16)](void* a, void* b, std::size_t n, cudaStream_t s) {
         (*adamw)(a, b, n, s);
       }},
  };
}

// Seconds per run of `kernel` on `bytes`, the median of `iters` timed runs.
double time_kernel(const Kernel& kernel, void* a, void* b, std::size_t bytes, int iters, cudaStream_t stream) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  // Timing events (cuda::Event has none, for cheap completion tracking).
  cuda::check(cudaEventCreate(&start), "cudaEventCreate");
  cuda::check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 3; ++i) kernel.run(a, b, bytes, stream);
  std::vector<double> seconds;
  for (int i = 0; i < iters; ++i) {
    cuda::check(cudaEventRecord(start, stream), "cudaEventRecord");
    kernel.run(a, b, bytes, stream);
    cuda::check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    cuda::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    seconds.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

struct Row {
  const char* kernel;
  std::size_t mib;
  double gbs;
  double of_copy;  // percent of the copy's GB/s at the same size
};

Json json_doc(const char* device, const Args& a, const std::vector<Row>& rows) {
  Json results = Json::array();
  for (const Row& r : rows) {
    results.push_back({{"kernel", r.kernel}, {"mib", r.mib}, {"GBps", r.gbs}, {"vs_copy", r.of_copy / 100.0}});
  }
  return {{"benchmark", "kernels"}, {"device", device}, {"iters", a.iters}, {"results", results}};
}

int measure(const Args& a) {
  cudaDeviceProp props{};
  cuda::check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  std::printf("# device 0: %s (%d SMs); GB/s = (bytes read + bytes written) / time, median of %d runs\n",
              props.name, props.multiProcessorCount, a.iters);
  const auto list = kernels();
  cuda::Stream stream(0);
  const std::size_t capacity = a.max_mib << 20;
  cuda::DeviceBuffer first(0, capacity);
  cuda::DeviceBuffer second(0, capacity);
  cuda::fill(DType::u8, first.data(), static_cast<std::int64_t>(capacity), 0.0, stream.get());
  cuda::fill(DType::u8, second.data(), static_cast<std::int64_t>(capacity), 0.0, stream.get());
  std::printf("%-16s %10s %12s %10s\n", "kernel", "MiB", "GB/s", "% of copy");
  std::vector<Row> rows;
  double worst = 1e9;
  const char* worst_name = "";
  for (std::size_t mib = a.min_mib; mib <= a.max_mib; mib *= 2) {
    const std::size_t bytes = mib << 20;
    double copy_gbs = 0.0;
    for (const Kernel& k : list) {
      const double seconds = time_kernel(k, first.data(), second.data(), bytes, a.iters, stream.get());
      const double gbs = k.traffic * static_cast<double>(bytes) / seconds / 1e9;
      if (k.name == kCopy) copy_gbs = gbs;
      const double share = 100.0 * gbs / copy_gbs;
      rows.push_back({k.name, mib, gbs, share});
      std::printf("%-16s %10zu %12.1f %9.0f%%\n", k.name, mib, gbs, share);
      if (mib >= 64 && k.name != kCopy && share < worst) {
        worst = share;
        worst_name = k.name;
      }
    }
  }
  if (worst < 1e9) {
    std::printf("# from 64 MiB: slowest kernel %s at %.0f%% of the copy (target >= 80%%): %s\n", worst_name, worst,
                worst >= 80.0 ? "met" : "NOT met");
  }
  if (!a.json.empty()) {
    if (!write_results(kCli.command, a.json, json_doc(props.name, a, rows))) return 1;
  }
  return 0;
}

#endif  // DTRAIN_HAVE_CUDA

}  // namespace

int run_kernels(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  // Up to 64 GiB, so that the byte counts below cannot overflow.
  app->add_option("--min-mib", a.min_mib, "smallest working size in MiB (default 1)")
      ->type_name("N")
      ->check(CLI::Range(1, 65536));
  app->add_option("--max-mib", a.max_mib, "largest working size in MiB; sizes double (default 1024)")
      ->type_name("N")
      ->check(CLI::Range(1, 65536));
  app->add_option("--iters", a.iters, "timed runs per kernel and size, the median is kept (default 20)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  if (a.min_mib > a.max_mib) kCli.error("--min-mib is above --max-mib");
#ifdef DTRAIN_HAVE_CUDA
  if (dtrain::device::cuda_device_count() > 0) {
    try {
      return measure(a);
    } catch (const dtrain::Error& e) {
      std::fprintf(stderr, "dtbench kernels: %s\n", e.what());
      return 1;
    }
  }
#endif
  std::printf("skipped: no CUDA device to measure (%s)\n", dtrain::device::cuda_unavailable_reason().c_str());
  return 0;
}

}  // namespace dtbench
