#include "comm/backends/ucx/liveness.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace dtrain::comm::ucx {

namespace {

constexpr std::size_t kBootIdSize = 36;  // a UUID as text

struct Stat {
  bool exists = false;
  char state = '?';
  std::uint64_t start_time = 0;
  int processor = -1;  // the CPU it last ran on
};

// Fields of /proc/<pid>/stat: the command name, in parentheses, may hold
// spaces and parentheses itself, so fields are counted after the last ')'.
Stat read_stat(std::int64_t pid) {
  Stat result;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return result;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return result;
  std::istringstream fields(line.substr(close + 1));
  std::vector<std::string> rest;
  for (std::string f; fields >> f;) rest.push_back(f);
  // rest[0] is field 3 (state); field 22 (starttime) is rest[19]; field 39
  // (processor) is rest[36].
  if (rest.size() < 20) return result;
  result.exists = true;
  result.state = rest[0][0];
  result.start_time = std::strtoull(rest[19].c_str(), nullptr, 10);
  if (rest.size() > 36) result.processor = std::atoi(rest[36].c_str());
  return result;
}

std::string read_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  id.resize(kBootIdSize, ' ');
  return id;
}

}  // namespace

ProcessIdentity ProcessIdentity::self() {
  ProcessIdentity me;
  me.boot_id = read_boot_id();
  struct stat ns {};
  if (::stat("/proc/self/ns/pid", &ns) == 0) me.pid_namespace = ns.st_ino;
  me.pid = ::getpid();
  me.start_time = read_stat(me.pid).start_time;
  return me;
}

std::string ProcessIdentity::encode() const {
  std::string out(kEncodedSize, '\0');
  std::memcpy(out.data(), boot_id.data(), std::min(boot_id.size(), kBootIdSize));
  std::memcpy(out.data() + 40, &pid_namespace, 8);
  std::memcpy(out.data() + 48, &pid, 8);
  std::memcpy(out.data() + 56, &start_time, 8);
  return out;
}

ProcessIdentity ProcessIdentity::decode(std::string_view text) {
  ProcessIdentity id;
  if (text.size() < kEncodedSize) return id;
  id.boot_id.assign(text.data(), kBootIdSize);
  std::memcpy(&id.pid_namespace, text.data() + 40, 8);
  std::memcpy(&id.pid, text.data() + 48, 8);
  std::memcpy(&id.start_time, text.data() + 56, 8);
  return id;
}

bool ProcessIdentity::can_watch(const ProcessIdentity& other) const {
  // Without a readable /proc (start times of zero) nothing can be watched.
  return pid != 0 && other.pid != 0 && start_time != 0 && other.start_time != 0 && pid_namespace != 0 &&
         boot_id == other.boot_id && pid_namespace == other.pid_namespace;
}

bool runnable_on(const ProcessIdentity& process, int cpu) {
  const Stat now = read_stat(process.pid);
  return now.exists && now.state == 'R' && now.processor == cpu;
}

bool outnumber_their_cores(const std::vector<ProcessIdentity>& identities, const ProcessIdentity& me) {
  cpu_set_t usable;
  CPU_ZERO(&usable);
  if (me.boot_id.empty() || sched_getaffinity(0, sizeof usable, &usable) != 0) return false;
  int local = 0;
  for (const ProcessIdentity& other : identities) {
    if (other.boot_id != me.boot_id) continue;
    ++local;
    cpu_set_t theirs;
    CPU_ZERO(&theirs);
    if (me.can_watch(other) && sched_getaffinity(static_cast<pid_t>(other.pid), sizeof theirs, &theirs) == 0) {
      CPU_OR(&usable, &usable, &theirs);
    }
  }
  return local > CPU_COUNT(&usable);
}

bool process_gone(const ProcessIdentity& process) {
  const Stat now = read_stat(process.pid);
  if (!now.exists) return true;
  if (now.start_time != process.start_time) return true;
  return now.state == 'Z' || now.state == 'X';
}

}  // namespace dtrain::comm::ucx
