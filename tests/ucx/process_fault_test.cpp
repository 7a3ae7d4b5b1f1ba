// Faults that need real processes: a rank killed (SIGKILL) or stopped
// (SIGSTOP) in the middle of a collective: a large allreduce over UCX
// messages or through shared memory (local_allreduce.hpp, in pieces), or a
// stream of small ones through shared memory. The test runs this executable
// again as each rank (main() hands over to run_rank_process() when the
// scenario is in the environment), with a directory of files as the
// rendezvous.

#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/ucx/backend.hpp"
#include "comm/backends/ucx/ucx_backend.hpp"
#include "harness.hpp"
#include "process_child.hpp"

extern char** environ;

namespace dtrain::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kRanks = 3;
constexpr int kVictim = 2;

// Each rank writes its part to a file (atomically, by renaming) and reads
// the others' once all are there.
class FileRendezvous final : public bootstrap::Rendezvous {
 public:
  FileRendezvous(fs::path dir, int rank, int size, int timeout_ms)
      : dir_(std::move(dir)), rank_(rank), size_(size), timeout_ms_(timeout_ms) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(const std::string& key, const std::string& local) override {
    std::string name = key;
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    auto path = [&](int r) { return dir_ / (name + "." + std::to_string(r)); };
    {
      std::ofstream out(path(rank_).string() + ".tmp", std::ios::binary);
      out << local;
    }
    fs::rename(path(rank_).string() + ".tmp", path(rank_));
    const auto deadline = Clock::now() + milliseconds(timeout_ms_);
    std::vector<std::string> all(size_);
    for (int r = 0; r < size_; ++r) {
      while (!fs::exists(path(r))) {
        if (Clock::now() > deadline) raise(DT_ERR_TIMEOUT, "file rendezvous: no word from rank " + std::to_string(r));
        std::this_thread::sleep_for(milliseconds(5));
      }
      std::ifstream in(path(r), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      all[r] = text.str();
    }
    return all;
  }

 private:
  const fs::path dir_;
  const int rank_;
  const int size_;
  const int timeout_ms_;
};

int env_int(const char* name) { return std::atoi(std::getenv(name)); }

// The survivors exit together: one that left first would be a second
// departure, which the other could hear of before the victim's and name
// instead of it.
void leave_together(const fs::path& dir, int rank) {
  std::ofstream(dir / ("left-" + std::to_string(rank))) << rank;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (int r = 0; r < kRanks; ++r) {
    if (r == kVictim) continue;
    while (!fs::exists(dir / ("left-" + std::to_string(r))) && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
}

}  // namespace

int run_rank_process() {
  const std::string scenario = std::getenv("DTRAIN_UCX_TEST_SCENARIO");
  const int rank = env_int("DTRAIN_UCX_TEST_RANK");
  const int timeout_ms = env_int("DTRAIN_UCX_TEST_TIMEOUT_MS");
  const bool kill = scenario == "kill";
  const bool small = std::getenv("DTRAIN_UCX_TEST_SMALL") != nullptr;
  int failures = 0;
  auto expect = [&](bool condition, const std::string& what) {
    if (!condition) {
      std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
      ++failures;
    }
  };

  try {
    FileRendezvous rendezvous(std::getenv("DTRAIN_UCX_TEST_DIR"), rank, kRanks, 20000);
    auto backend = comm::make_ucx_backend(rendezvous, timeout_ms);
    auto* ucx = dynamic_cast<comm::ucx::UcxBackend*>(backend.get());
    comm::Communicator comm(rank, kRanks, timeout_ms, std::move(backend));
    wait(comm, comm.barrier());
    if (small) {
      // Every rank allreduces one value after another, blocking, until the
      // victim stops answering.
      const auto until = Clock::now() + milliseconds(200);
      std::int64_t rounds = 0;
      try {
        for (;; ++rounds) {
          if (rank == kVictim && Clock::now() > until) ::raise(kill ? SIGKILL : SIGSTOP);
          float x = 1;
          Tensor t(&x, 1, DType::f32);
          allreduce_now(comm, t, t, DT_SUM);
          if (x != static_cast<float>(kRanks)) {
            expect(false, "round " + std::to_string(rounds) + ": " + std::to_string(x));
            break;
          }
        }
      } catch (const Error& e) {
        std::fprintf(stderr, "rank %d: after %lld rounds: %s\n", rank, static_cast<long long>(rounds), e.what());
        const std::string message = e.what();
        expect(rounds > 0, "no round completed");
        expect(message.find("rank 2") != std::string::npos, "the message does not name rank 2");
        expect(e.status() == (kill ? DT_ERR_REMOTE : DT_ERR_TIMEOUT), "status " + std::to_string(e.status()));
      }
      leave_together(std::getenv("DTRAIN_UCX_TEST_DIR"), rank);
      return failures == 0 ? 0 : 1;
    }
    if (rank == kVictim) {
      // Late enough that the others are inside the allreduce.
      std::this_thread::sleep_for(milliseconds(200));
      ::raise(kill ? SIGKILL : SIGSTOP);
      return 0;
    }
    std::vector<float> data(1 << 20, 1.0f);
    Tensor t(data.data(), data.size(), DType::f32);
    const auto start = Clock::now();
    auto request = comm.allreduce(t.get(), t.get(), DT_SUM);
    if (!kill && rank == 0) {
      // What the communicator's timeout message could say: the stopped rank
      // (over UCX, rank 0's left neighbour in the ring; through shared
      // memory, the one rank whose part is missing).
      expect(!ucx->wait(request, Clock::now() + milliseconds(timeout_ms / 2)), "the allreduce completed");
      const std::string silent = ucx->unresponsive_ranks(*request);
      expect(silent.find("rank 2") != std::string::npos, "unresponsive ranks: '" + silent + "'");
    }
    try {
      comm.wait(request, -1);
      expect(false, "the allreduce succeeded without rank 2");
    } catch (const Error& e) {
      const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
      std::fprintf(stderr, "rank %d: after %lld ms: %s\n", rank, static_cast<long long>(took), e.what());
      const std::string message = e.what();
      if (kill) {
        expect(e.status() == DT_ERR_REMOTE, "status " + std::to_string(e.status()));
        expect(message.find("rank 2") != std::string::npos, "the message does not name rank 2");
      } else {
        // Its own deadline, or DT_ERR_REMOTE when the other survivor,
        // whose deadline came first, gave up on the operation.
        expect(e.status() == DT_ERR_TIMEOUT || e.status() == DT_ERR_REMOTE, "status " + std::to_string(e.status()));
      }
    }
    leave_together(std::getenv("DTRAIN_UCX_TEST_DIR"), rank);
  } catch (const std::exception& e) {
    expect(false, e.what());
  }
  return failures == 0 ? 0 : 1;
}

namespace {

struct Scenario {
  const char* name;        // kill or stop
  const char* transports;  // "shm" or "tcp"
  const char* allreduce;   // "large" over UCX messages, "large_shared" or "small" (shared memory)
};

void PrintTo(const Scenario& scenario, std::ostream* out) {
  *out << scenario.name << " during a " << scenario.allreduce << " allreduce over " << scenario.transports;
}

class UcxProcesses : public ::testing::TestWithParam<Scenario> {};

TEST_P(UcxProcesses, OthersFailWithinTheDeadline) {
  const Scenario scenario = GetParam();
  char dir_template[] = "/tmp/dtrain-ucx-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const fs::path dir = dir_template;
  const int timeout_ms = std::string(scenario.name) == "kill" ? 20000 : 2000;

  std::vector<pid_t> children;
  for (int rank = 0; rank < kRanks; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back(std::string("DTRAIN_UCX_TEST_SCENARIO=") + scenario.name);
    env.push_back("DTRAIN_UCX_TEST_RANK=" + std::to_string(rank));
    env.push_back("DTRAIN_UCX_TEST_DIR=" + dir.string());
    env.push_back("DTRAIN_UCX_TEST_TIMEOUT_MS=" + std::to_string(timeout_ms));
    // Without error handling on shared memory UCX sends everything over TCP.
    if (std::string(scenario.transports) == "tcp") env.push_back("UCX_MM_ERROR_HANDLING=n");
    const std::string allreduce = scenario.allreduce;
    if (allreduce == "small") env.push_back("DTRAIN_UCX_TEST_SMALL=1");
    // Over UCX messages, not shared memory.
    if (allreduce == "large") env.push_back("DTRAIN_UCX_LOCAL_BYTES=0");
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exe = fs::read_symlink("/proc/self/exe").string();
    char* argv[] = {exe.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    children.push_back(pid);
  }

  // The survivors must finish well within their deadline, plus start-up.
  const auto limit = Clock::now() + milliseconds(timeout_ms) + std::chrono::seconds(20);
  std::vector<int> status(kRanks, -1);
  for (int rank = 0; rank < kRanks; ++rank) {
    if (rank == kVictim) continue;
    while (::waitpid(children[rank], &status[rank], WNOHANG) == 0) {
      if (Clock::now() > limit) {
        ADD_FAILURE() << "rank " << rank << " did not finish in time";
        ::kill(children[rank], SIGKILL);
        ::waitpid(children[rank], &status[rank], 0);
        break;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_TRUE(WIFEXITED(status[rank]) && WEXITSTATUS(status[rank]) == 0) << "rank " << rank << " failed";
  }
  ::kill(children[kVictim], SIGKILL);
  ::waitpid(children[kVictim], &status[kVictim], 0);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

INSTANTIATE_TEST_SUITE_P(Ucx, UcxProcesses,
                         ::testing::Values(Scenario{"kill", "shm", "large"}, Scenario{"kill", "tcp", "large"},
                                           Scenario{"stop", "shm", "large"}, Scenario{"stop", "tcp", "large"},
                                           Scenario{"kill", "shm", "large_shared"},
                                           Scenario{"stop", "shm", "large_shared"}, Scenario{"kill", "shm", "small"},
                                           Scenario{"stop", "shm", "small"}),
                         [](const auto& param_info) {
                           return std::string(param_info.param.name) + "_" + param_info.param.allreduce + "_over_" +
                                  param_info.param.transports;
                         });

}  // namespace
}  // namespace dtrain::test
