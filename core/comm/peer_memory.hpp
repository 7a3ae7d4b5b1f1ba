// Copies straight between the memories of a communicator's ranks, where
// every rank runs on one host and each may read and write the others'
// memory (process_vm_readv and process_vm_writev, which need what ptrace
// needs: the same user, and a ptrace scope that allows it). One copy moves
// pieces that lie scattered on either side, with no message and no packing
// pass: where an exchange of rows gathered by index would copy each row
// twice (into a send buffer, then across), this copies it once.
//
// It moves bytes only; ordering is the caller's, through the communicator's
// collectives. A peer's memory may be touched only between a collective
// that gave this rank its address (so the peer has entered the call that
// owns that memory) and a later collective by which this rank says its
// copies are done (a barrier), before which the peer must not return. A
// rank whose collective fails (a timeout, an abort) may return while a
// stalled peer still copies: memory peers write must then outlive them.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>

namespace dtrain::comm {

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;

  // Copies the local pieces `from`, in order, to the pieces `to` of rank
  // `peer`'s memory (addresses in its address space), in order. Both lists
  // must cover the same number of bytes: DT_ERR_INVALID_ARGUMENT otherwise,
  // before anything is copied. Copies to this rank itself are plain copies.
  // Throws DT_ERR_REMOTE naming the peer when it has exited, and
  // DT_ERR_TRANSPORT with the kernel's reason when the kernel refuses.
  virtual void write(int peer, std::span<const iovec> from, std::span<const iovec> to) const = 0;
  // Copies the pieces `from` of rank `peer`'s memory, in order, to the
  // local pieces `to`, in order; as write() otherwise.
  virtual void read(int peer, std::span<const iovec> from, std::span<const iovec> to) const = 0;
};

}  // namespace dtrain::comm
