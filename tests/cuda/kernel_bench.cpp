// dtrain_cuda_kernel_bench: the achieved bandwidth of each CUDA kernel next
// to a device-to-device copy measured in the same run, as a table (and
// optionally JSON). Bandwidth counts the bytes a kernel reads plus the bytes
// it writes (a copy of N bytes moves 2N). The target is >= 80% of the copy's
// bandwidth from 64 MiB up. Not a test: it exits 77 without a device, and 0
// otherwise whatever it measures. Written so that `dtbench kernels` can call
// run_kernel_bench() once benchmarks/ links this file.
//
//   dtrain_cuda_kernel_bench [--min-mib N] [--max-mib N] [--iters N] [--json FILE]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/cuda/error.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/runtime.hpp"
#include "device/probe.hpp"

namespace {

namespace cuda = dtrain::device::cuda;
using dtrain::DType;

struct Kernel {
  const char* name;
  double traffic;  // bytes moved per byte of the working size
  std::function<void(void* a, void* b, std::size_t bytes, cudaStream_t s)> run;
};

std::vector<Kernel> kernels() {
  using cuda::Reduction;
  return {
      {"copy d2d", 2.0,
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
  };
}

// Seconds per run of `kernel` on `bytes`, the median of `iters` timed runs.
double time_kernel(const Kernel& kernel, void* a, void* b, std::size_t bytes, int iters, cudaStream_t stream) {
  cudaEvent_t start, stop;
  cuda::check(cudaEventCreate(&start), "cudaEventCreate");
  cuda::check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 3; ++i) kernel.run(a, b, bytes, stream);  // warm-up
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

}  // namespace

int run_kernel_bench(int argc, char** argv) {
  std::size_t min_mib = 1, max_mib = 1024;
  int iters = 20;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (std::strcmp(argv[i], "--min-mib") == 0 && more) {
      min_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--max-mib") == 0 && more) {
      max_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--iters") == 0 && more) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--json") == 0 && more) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--min-mib N] [--max-mib N] [--iters N] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  if (dtrain::device::cuda_device_count() == 0) {
    std::printf("skipped: %s\n", dtrain::device::cuda_unavailable_reason().c_str());
    return 77;
  }
  try {
    cudaDeviceProp props{};
    cuda::check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    std::printf("# device 0: %s (%d SMs); GB/s = (bytes read + bytes written) / time; %% of copy in brackets\n",
                props.name, props.multiProcessorCount);
    const auto list = kernels();
    cuda::Stream stream(0);
    cuda::DeviceBuffer a(0, max_mib << 20), b(0, max_mib << 20);
    cuda::fill(DType::u8, a.data(), static_cast<std::int64_t>(max_mib << 20), 0.0, stream.get());
    cuda::fill(DType::u8, b.data(), static_cast<std::int64_t>(max_mib << 20), 0.0, stream.get());
    std::printf("%10s", "MiB");
    for (const Kernel& k : list) std::printf(" %22s", k.name);
    std::printf("\n");
    std::string json = "{\"device\": \"" + std::string(props.name) + "\", \"rows\": [";
    double worst_large = 1e9;
    const char* worst_name = "";
    for (std::size_t mib = min_mib; mib <= max_mib; mib *= 2) {
      const std::size_t bytes = mib << 20;
      std::printf("%10zu", mib);
      double copy_gbs = 0.0;
      json += std::string(mib == min_mib ? "" : ", ") + "{\"mib\": " + std::to_string(mib);
      for (const Kernel& k : list) {
        const double seconds = time_kernel(k, a.data(), b.data(), bytes, iters, stream.get());
        const double gbs = k.traffic * static_cast<double>(bytes) / seconds / 1e9;
        if (&k == &list.front()) copy_gbs = gbs;
        const double share = 100.0 * gbs / copy_gbs;
        std::printf(" %15.1f [%3.0f%%]", gbs, share);
        json += ", \"" + std::string(k.name) + "\": " + std::to_string(gbs);
        if (mib >= 64 && &k != &list.front() && share < worst_large) {
          worst_large = share;
          worst_name = k.name;
        }
      }
      json += "}";
      std::printf("\n");
    }
    json += "]}\n";
    if (worst_large < 1e9) {
      std::printf("# from 64 MiB: slowest kernel %s at %.0f%% of the copy (target >= 80%%): %s\n", worst_name,
                  worst_large, worst_large >= 80.0 ? "met" : "NOT met");
    }
    if (json_path != nullptr) {
      FILE* out = std::fopen(json_path, "w");
      if (out == nullptr) {
        std::perror(json_path);
        return 1;
      }
      std::fputs(json.c_str(), out);
      std::fclose(out);
    }
  } catch (const dtrain::Error& e) {
    std::fprintf(stderr, "dtrain_cuda_kernel_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) { return run_kernel_bench(argc, argv); }
