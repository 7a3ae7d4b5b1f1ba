// How the engine judges local processes (liveness.hpp): whether ranks
// outnumber the cores they may use, and whether a process is gone. The other
// rank is a forked child, bound and unbound here through its affinity.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "comm/backends/ucx/liveness.hpp"

namespace dtrain {
namespace {

using comm::ucx::outnumber_their_cores;
using comm::ucx::process_gone;
using comm::ucx::ProcessIdentity;

cpu_set_t only(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return set;
}

// A child process that waits until its pipe closes, and its identity.
class Child {
 public:
  Child() {
    int to_parent[2], to_child[2];
    if (pipe(to_parent) != 0 || pipe(to_child) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      close(to_parent[0]);
      close(to_child[1]);
      const std::string me = ProcessIdentity::self().encode();
      if (write(to_parent[1], me.data(), me.size()) != static_cast<ssize_t>(me.size())) _exit(1);
      char c;
      while (read(to_child[0], &c, 1) > 0) {
      }
      _exit(0);
    }
    close(to_parent[1]);
    close(to_child[0]);
    release_ = to_child[1];
    std::string encoded(ProcessIdentity::kEncodedSize, '\0');
    const ssize_t got = read(to_parent[0], encoded.data(), encoded.size());
    close(to_parent[0]);
    if (got != static_cast<ssize_t>(encoded.size())) throw std::runtime_error("the child did not say who it is");
    identity_ = ProcessIdentity::decode(encoded);
  }
  ~Child() {
    if (release_ >= 0) close(release_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  // Lets it exit, and waits for that.
  void end() {
    close(release_);
    release_ = -1;
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return identity_.pid; }
  const ProcessIdentity& identity() const { return identity_; }

 private:
  pid_t pid_ = -1;
  int release_ = -1;
  ProcessIdentity identity_;
};

// This process bound to one CPU for the test, its affinity restored after.
class Liveness : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sched_getaffinity(0, sizeof saved_, &saved_), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE && cpus_.size() < 2; ++cpu) {
      if (CPU_ISSET(cpu, &saved_)) cpus_.push_back(cpu);
    }
  }
  void TearDown() override { sched_setaffinity(0, sizeof saved_, &saved_); }

  cpu_set_t saved_;
  std::vector<int> cpus_;
};

TEST_F(Liveness, ProcessesBoundToACoreEachDoNotOutnumberTheirCores) {
  if (cpus_.size() < 2) GTEST_SKIP() << "needs two CPUs to bind two processes apart";
  Child child;
  const ProcessIdentity me = ProcessIdentity::self();
  if (!me.can_watch(child.identity())) GTEST_SKIP() << "/proc cannot be read here, so no process can be watched";
  const cpu_set_t first = only(cpus_[0]);
  const cpu_set_t second = only(cpus_[1]);
  ASSERT_EQ(sched_setaffinity(0, sizeof first, &first), 0);
  ASSERT_EQ(sched_setaffinity(child.pid(), sizeof second, &second), 0);
  EXPECT_FALSE(outnumber_their_cores({me, child.identity()}, me));
  // Both on one core: now they do.
  ASSERT_EQ(sched_setaffinity(child.pid(), sizeof first, &first), 0);
  EXPECT_TRUE(outnumber_their_cores({me, child.identity()}, me));
}

TEST_F(Liveness, ThreadsOfOneProcessShareItsCores) {
  const ProcessIdentity me = ProcessIdentity::self();
  const int cores = CPU_COUNT(&saved_);
  EXPECT_FALSE(outnumber_their_cores(std::vector<ProcessIdentity>(cores, me), me));
  EXPECT_TRUE(outnumber_their_cores(std::vector<ProcessIdentity>(cores + 1, me), me));
}

TEST_F(Liveness, RanksOnOtherHostsDoNotCount) {
  const ProcessIdentity me = ProcessIdentity::self();
  ProcessIdentity elsewhere = me;
  elsewhere.boot_id = std::string(me.boot_id.size(), 'x');
  const std::vector<ProcessIdentity> world(CPU_COUNT(&saved_) + 3, elsewhere);
  std::vector<ProcessIdentity> with_me = world;
  with_me.push_back(me);
  EXPECT_FALSE(outnumber_their_cores(with_me, me));
}

TEST_F(Liveness, AProcessThatExitedIsGoneAndAStoppedOneIsNot) {
  Child child;
  if (!ProcessIdentity::self().can_watch(child.identity())) GTEST_SKIP() << "/proc cannot be read here";
  EXPECT_FALSE(process_gone(child.identity()));
  ASSERT_EQ(kill(child.pid(), SIGSTOP), 0);
  EXPECT_FALSE(process_gone(child.identity()));
  ASSERT_EQ(kill(child.pid(), SIGCONT), 0);
  child.end();
  EXPECT_TRUE(process_gone(child.identity()));
}

}  // namespace
}  // namespace dtrain
