// dtbench handoff. The shared-memory allreduce chooses, piece by piece, how a
// rank writes what its peers read next (comm/backends/ucx/handoff.hpp); this
// measures the two ways on their own, so that the choice can be checked on a
// machine. Like dtbench kernels, it links the core library for the copy.
//
// A writer and a reader thread, on the first two CPUs this process may run
// on, take turns over two slots: the writer rewrites the slot that the reader
// read two turns before, and the reader copies it out. Per size and way, the
// mean over --iters turns of the write alone and of the whole turn (write,
// hand-over, read). On a virtual machine the host may move the two CPUs
// closer or further apart between runs, which changes the cached figures
// several times over and the streamed ones hardly.
#include "handoff.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench.h"
#include "command_line.hpp"
#include "device/cpu/stream_copy.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"handoff", "usage: dtbench handoff [options]",
                 "Times handing bytes from one CPU to another through shared memory, written\n"
                 "through the cache (memcpy) or streamed around it (non-temporal stores), as\n"
                 "libdtrain's shared-memory allreduce may. One process, two threads."};

using Clock = std::chrono::steady_clock;

struct Args {
  std::int64_t min_bytes = 4 << 10;
  std::int64_t max_bytes = 1 << 20;
  long iters = 2000;
  std::string json;
};

struct Row {
  std::size_t bytes;
  double cached_write_us, cached_turn_us, streamed_write_us, streamed_turn_us;
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Waits until `flag` reaches `value`: spinning at first, as the allreduce
// does, then letting others run, in case the two threads share a CPU.
void await(const std::atomic<long>& flag, long value) {
  for (int looks = 0; flag.load(std::memory_order_acquire) < value; ++looks) {
    if (looks > 10000) std::this_thread::yield();
  }
}

// The mean write and turn times in microseconds, `iters` turns of `bytes`.
std::pair<double, double> time_turns(bool streamed, std::size_t bytes, long iters, int writer_cpu, int reader_cpu) {
  std::vector<std::byte> slots(2 * bytes), source(bytes, std::byte{1}), sink(bytes);
  std::atomic<long> written{0}, read{0};
  std::thread reader([&] {
    pin(reader_cpu);
    for (long turn = 1; turn <= iters; ++turn) {
      await(written, turn);
      std::memcpy(sink.data(), slots.data() + (turn % 2) * bytes, bytes);
      read.store(turn, std::memory_order_release);
    }
  });
  pin(writer_cpu);
  double writing = 0;
  const auto start = Clock::now();
  for (long turn = 1; turn <= iters; ++turn) {
    await(read, turn - 1);
    const auto before = Clock::now();
    std::byte* slot = slots.data() + (turn % 2) * bytes;
    if (streamed) {
      dtrain::device::cpu::stream_copy(slot, source.data(), bytes);
    } else {
      std::memcpy(slot, source.data(), bytes);
    }
    writing += std::chrono::duration<double, std::micro>(Clock::now() - before).count();
    written.store(turn, std::memory_order_release);
  }
  reader.join();
  const double total = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return {writing / static_cast<double>(iters), total / static_cast<double>(iters)};
}

int write_json(const Args& a, const std::vector<Row>& rows) {
  Json results = Json::array();
  for (const Row& r : rows) {
    results.push_back({{"bytes", r.bytes},
                       {"cached_write_us", r.cached_write_us},
                       {"cached_turn_us", r.cached_turn_us},
                       {"streamed_write_us", r.streamed_write_us},
                       {"streamed_turn_us", r.streamed_turn_us}});
  }
  const Json doc = {{"benchmark", "handoff"}, {"iters", a.iters}, {"results", results}};
  return write_results(kCli.command, a.json, doc) ? 0 : 1;
}

}  // namespace

int run_handoff(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  add_bytes(*app, "--min-bytes", a.min_bytes, 1, "smallest size (default 4K); sizes double (K, M, G: binary)");
  add_bytes(*app, "--max-bytes", a.max_bytes, 1, "largest size (default 1M)");
  app->add_option("--iters", a.iters, "turns per size and way (default 2000)")
      ->type_name("N")
      ->check(CLI::Range(1L, 1L << 30));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  if (a.min_bytes > a.max_bytes) kCli.error("--min-bytes is above --max-bytes");
  cpu_set_t allowed;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
    }
  }
  if (cpus.size() < 2) {
    std::printf("skipped: a handoff needs two CPUs, and this process may run on %zu\n", cpus.size());
    return 0;
  }
  std::printf("# writer on CPU %d, reader on CPU %d; mean of %ld turns; us\n", cpus[0], cpus[1], a.iters);
  std::printf("%10s %14s %13s %16s %15s\n", "bytes", "cached write", "cached turn", "streamed write", "streamed turn");
  std::vector<Row> rows;
  for (std::int64_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 2) {
    const auto size = static_cast<std::size_t>(bytes);
    const auto [cached_write, cached_turn] = time_turns(false, size, a.iters, cpus[0], cpus[1]);
    const auto [streamed_write, streamed_turn] = time_turns(true, size, a.iters, cpus[0], cpus[1]);
    rows.push_back({size, cached_write, cached_turn, streamed_write, streamed_turn});
    std::printf("%10zu %14.2f %13.2f %16.2f %15.2f\n", size, cached_write, cached_turn, streamed_write, streamed_turn);
  }
  return a.json.empty() ? 0 : write_json(a, rows);
}

}  // namespace dtbench
