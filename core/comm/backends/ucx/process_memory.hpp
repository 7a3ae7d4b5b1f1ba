// PeerMemory (comm/peer_memory.hpp) for the ranks that share this host's
// mailboxes and agreed that each may read the others' memory: copies by
// process_vm_readv and process_vm_writev to and from the peers' processes.
#pragma once

#include "comm/backends/ucx/group.hpp"
#include "comm/backends/ucx/mailboxes.hpp"
#include "comm/peer_memory.hpp"

namespace dtrain::comm::ucx {

class ProcessMemory final : public PeerMemory {
 public:
  // Over `group`'s mailboxes, which must be readable(); both outlive this.
  explicit ProcessMemory(const Group& group) : group_(group) {}

  void write(int peer, std::span<const iovec> from, std::span<const iovec> to) const override;
  void read(int peer, std::span<const iovec> from, std::span<const iovec> to) const override;

 private:
  enum class Direction { to_peer, from_peer };
  // Copies `local` to or from the pieces `remote` of `peer`'s memory.
  void copy(int peer, Direction direction, std::span<const iovec> local, std::span<const iovec> remote) const;

  const Group& group_;
};

}  // namespace dtrain::comm::ucx
