// Which process a rank is, so that a peer on the same host can be seen to
// die. UCP's own keepalive does not report a dead process behind shared
// memory in UCX 1.13 (TCP notices at once, when the kernel closes the
// socket), so the engine checks local peers itself while it has work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::comm::ucx {

struct ProcessIdentity {
  std::string boot_id;          // the kernel's boot id: the same host and boot
  std::uint64_t pid_namespace = 0;  // processes can see each other's pids
  std::int64_t pid = 0;
  std::uint64_t start_time = 0;  // in clock ticks since boot; tells a reused pid apart

  // This process.
  static ProcessIdentity self();

  // A fixed-size encoding, to travel in front of a worker address.
  static constexpr std::size_t kEncodedSize = 64;
  std::string encode() const;
  // Reads what encode() wrote at the start of `text`.
  static ProcessIdentity decode(std::string_view text);

  // Whether this process can see `other`'s state in /proc.
  bool can_watch(const ProcessIdentity& other) const;
};

// Whether the process (its main thread) is running or waiting to run on
// `cpu`: then it competes with the caller for that core.
bool runnable_on(const ProcessIdentity& process, int cpu);

// Whether the processes of `identities` on `me`'s host outnumber the cores
// they may use between them: then one waiting for another may be keeping it
// off its core. Processes bound to a core each (mpirun's --bind-to core) do
// not, though each may use only one. The cores of processes whose affinity
// cannot be read (in another pid namespace) are not counted.
bool outnumber_their_cores(const std::vector<ProcessIdentity>& identities, const ProcessIdentity& me);

// Whether the process is gone: exited (a zombie counts) or replaced by
// another with the same pid. A stopped process is not gone.
bool process_gone(const ProcessIdentity& process);

}  // namespace dtrain::comm::ucx
