#include "flight_request.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace dtrun {

namespace {

// Whether the process is stopped (state T in /proc/PID/stat): it cannot
// answer.
bool stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T';
}

// The modification time of `path` in nanoseconds, 0 when it does not exist.
long long modified_ns(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return 0;
  return static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec;
}

}  // namespace

void request_flight_records(const std::string& dir, const std::vector<RankProcess>& ranks, double wait_seconds) {
  struct Pending {
    std::string record;
    long long before;
  };
  std::vector<Pending> pending;
  for (const RankProcess& r : ranks) {
    if (!r.running || r.pid <= 0) continue;
    struct stat info {};
    if (stat((dir + "/sigusr1." + std::to_string(r.pid)).c_str(), &info) != 0) continue;
    const std::string record = dir + "/flight.rank" + std::to_string(r.rank) + ".jsonl";
    const long long before = modified_ns(record);
    if (kill(r.pid, SIGUSR1) == 0 && !stopped(r.pid)) pending.push_back({record, before});
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
  while (!pending.empty() && std::chrono::steady_clock::now() < deadline) {
    std::erase_if(pending, [](const Pending& p) { return modified_ns(p.record) != p.before; });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace dtrun
