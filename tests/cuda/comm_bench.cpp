// dtrain_cuda_comm_bench: collectives on CUDA tensors, one process per rank
// (dtrun -n N dtrain_cuda_comm_bench [--backend auto|ucx]): with auto, NCCL
// when every rank has its own GPU; with ucx (or ranks sharing a GPU), the
// staged path over UCX. Rank 0 prints nccl-tests' columns: size, time, algbw
// = bytes / time, busbw = algbw x (allreduce 2(n-1)/n; allgather,
// reduce_scatter, alltoall (n-1)/n; broadcast 1). Each time is the slowest
// rank's median. Exits 77 without a device. Not a test.
//
//   dtrain_cuda_comm_bench [--backend auto|ucx] [--max-mib N] [--iters N]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dtrain.h"

namespace {

bool ok(dt_status status, const char* what) {
  if (status == DT_OK) return true;
  std::fprintf(stderr, "%s: %s: %s\n", what, dt_status_string(status), dt_error_last());
  return false;
}

struct Tensor {
  std::int64_t shape;
  DLTensor t{};
  Tensor(void* data, std::int64_t count, int device) : shape(count) {
    t.data = data;
    t.device = {kDLCUDA, device};
    t.ndim = 1;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = &shape;
  }
};

double slowest(dt_comm* comm, double seconds) {
  std::int64_t shape = 1;
  DLTensor t{};
  t.data = &seconds;
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 64, 1};
  t.shape = &shape;
  ok(dt_allreduce(comm, &t, &t, DT_MAX, nullptr, nullptr), "allreduce of times");
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  dt_backend backend = DT_BACKEND_AUTO;
  std::size_t max_mib = 256;
  int iters = 10;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (std::strcmp(argv[i], "--backend") == 0 && more) {
      backend = std::strcmp(argv[++i], "ucx") == 0 ? DT_BACKEND_UCX : DT_BACKEND_AUTO;
    } else if (std::strcmp(argv[i], "--max-mib") == 0 && more) {
      max_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--iters") == 0 && more) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: dtrun -n N %s [--backend auto|ucx] [--max-mib N] [--iters N]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", dt_build_info());
    return 77;
  }
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.backend = backend;
  dt_comm* comm = nullptr;
  if (!ok(dt_comm_create(&comm, &opts), "dt_comm_create")) return 1;
  int rank = 0, n = 1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &n);
  const char* local = std::getenv("DTRAIN_LOCAL_RANK");
  const int device = (local ? std::atoi(local) : 0) % devices;
  cudaSetDevice(device);
  const std::size_t max_bytes = max_mib << 20;
  void* a = nullptr;
  void* b = nullptr;
  if (cudaMalloc(&a, max_bytes * n) != cudaSuccess || cudaMalloc(&b, max_bytes * n) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc of %zu bytes failed\n", max_bytes * n);
    return 1;
  }
  cudaMemset(a, 0, max_bytes * n);
  cudaMemset(b, 0, max_bytes * n);
  const double ring = n > 1 ? static_cast<double>(n - 1) / n : 1.0;
  struct Op {
    const char* name;
    double factor;
    std::function<dt_status(std::int64_t)> run;  // count: elements per rank's buffer
  };
  const std::vector<Op> ops = {
      {"allreduce", 2 * ring,
       [&](std::int64_t c) {
         Tensor s(a, c, device), r(b, c, device);
         return dt_allreduce(comm, &s.t, &r.t, DT_SUM, nullptr, nullptr);
       }},
      {"allgather", ring,
       [&](std::int64_t c) {
         Tensor s(a, c / n, device), r(b, (c / n) * n, device);
         return dt_allgather(comm, &s.t, &r.t, nullptr, nullptr);
       }},
      {"reduce_scatter", ring,
       [&](std::int64_t c) {
         Tensor s(a, (c / n) * n, device), r(b, c / n, device);
         return dt_reduce_scatter(comm, &s.t, &r.t, DT_SUM, nullptr, nullptr);
       }},
      {"alltoall", ring,
       [&](std::int64_t c) {
         Tensor s(a, (c / n) * n, device), r(b, (c / n) * n, device);
         return dt_alltoall(comm, &s.t, &r.t, nullptr, nullptr);
       }},
      {"broadcast", 1.0,
       [&](std::int64_t c) {
         Tensor s(a, c, device);
         return dt_broadcast(comm, &s.t, 0, nullptr, nullptr);
       }},
  };
  if (rank == 0) {
    std::printf("# %d ranks, %d CUDA devices here, backend option %s (%s), f32, sizes are the full buffer\n", n,
                devices, backend == DT_BACKEND_UCX ? "ucx (staged)" : "auto",
                devices >= n ? "NCCL when it loads" : "ranks share GPUs: staged");
  }
  for (const Op& op : ops) {
    if (rank == 0) std::printf("\n# %s\n%12s %12s %10s %10s\n", op.name, "bytes", "time(us)", "algbw", "busbw");
    for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      const std::int64_t count = static_cast<std::int64_t>(bytes / 4);
      for (int i = 0; i < 2; ++i) {
        if (!ok(op.run(count), op.name)) return 1;
      }
      std::vector<double> seconds;
      for (int i = 0; i < iters; ++i) {
        const auto start = std::chrono::steady_clock::now();
        if (!ok(op.run(count), op.name)) return 1;
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(seconds.begin(), seconds.end());
      const double t = slowest(comm, seconds[seconds.size() / 2]);
      const double algbw = static_cast<double>(bytes) / t / 1e9;
      if (rank == 0) std::printf("%12zu %12.1f %10.2f %10.2f\n", bytes, t * 1e6, algbw, algbw * op.factor);
    }
  }
  cudaFree(a);
  cudaFree(b);
  dt_comm_destroy(comm);
  return 0;
}
