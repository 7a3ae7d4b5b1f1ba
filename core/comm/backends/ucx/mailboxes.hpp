// Shared memory through which the ranks of a communicator that all run on
// one host hand each other the contributions of collectives, without a
// message: each rank writes only its own mailbox and reads its peers'.
//
// A mailbox is a memfd of its rank's, so nothing of it outlives the
// processes. Peers map it read-only through /proc/<pid>/fd/<fd> (which needs
// only what watching the peer's /proc needs: the same user). It holds
// kSlots contributions, used in turn by the communicator's local
// operations, and two results, for operations split among the ranks (a
// single copy, local_exchange.hpp, stamps its result alone, to say the rank
// is done reading its peers' buffers).
//
// Rewriting a contribution is safe: a rank writes operation k + kSlots only
// after every peer has written k + 1, which each wrote once it was done with
// operation k. An operation's first piece waits for that (clearance()); a
// later piece follows one for which it awaited every rank's part. Most
// operations wait for every peer's part of their own stamp anyway; a rank
// that only sends, or reads one peer alone (local_exchange.hpp), does not,
// and may so run up to kSlots - 1 operations ahead of its slowest peer.
// Rewriting a result is safe too: a rank writes the result of k + 2 only
// after every peer has written its contribution to k + 2, which each wrote
// once its operation k, which read the result of k, was over.
//
// A part is a header (the stamp, written last, and what was written) and the
// data, in the same cache line up to 48 bytes, so a small contribution
// reaches its reader in one transfer of a line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/dtype.hpp"
#include "base/fd.hpp"
#include "comm/call_check.hpp"
#include "comm/reduce_op.hpp"
#include "comm/backends/ucx/handoff.hpp"

namespace dtrain::comm::ucx {

class Mailboxes {
 public:
  // What a rank wrote, besides its data: enough for a reader to tell that
  // the ranks disagree about the operation.
  struct Header {
    std::atomic<std::uint64_t> stamp;  // the operation's number, once the data is there
    std::uint32_t size;                // the caller's: bytes of the whole buffer, of which the data may be a piece
    std::uint32_t kind;                // kind_code() of the caller's collective
  };
  // What the `kind` of a header holds: the collective, its dtype and its
  // reduction (ReduceOp::sum where it has none).
  static std::uint32_t kind_code(CallKind call, DType dtype, ReduceOp op) {
    return static_cast<std::uint32_t>(call) << 24 | static_cast<std::uint32_t>(dtype) << 16 |
           static_cast<std::uint32_t>(op);
  }
  static CallKind call_of(std::uint32_t kind) { return static_cast<CallKind>(kind >> 24); }
  static DType dtype_of(std::uint32_t kind) { return static_cast<DType>((kind >> 16) & 0xff); }
  static ReduceOp op_of(std::uint32_t kind) { return static_cast<ReduceOp>(kind & 0xffff); }
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "stamps are shared between processes");

  // Creates this rank's mailbox, for contributions of up to `capacity`
  // bytes; `cores_apart`: the ranks on this host do not outnumber the CPUs
  // they may run on (handoff.hpp).
  // Throws Error(DT_ERR_UNSUPPORTED) where shared memory cannot be created
  // or allocated.
  Mailboxes(int rank, int size, std::size_t capacity, bool cores_apart);
  ~Mailboxes();
  Mailboxes(const Mailboxes&) = delete;
  Mailboxes& operator=(const Mailboxes&) = delete;

  // The file descriptor peers open, until close_file().
  int fd() const { return file_.get(); }
  // The least capacity worth sharing: a few elements of any dtype.
  static constexpr std::size_t kLeastCapacity = 64;
  // Maps the mailbox of rank `peer`, file `fd` of process `pid`, made for
  // `capacity` bytes. Throws Error(DT_ERR_UNSUPPORTED) if it cannot.
  void attach(int peer, std::int64_t pid, int fd, std::size_t capacity);
  // Once every peer has attached: the mapping is all that is needed. Parts
  // hold `shared_capacity` bytes from now on, the least of every mailbox's.
  void close_file(std::size_t shared_capacity);
  std::size_t shared_capacity() const { return shared_capacity_; }
  // How this rank writes what its peers read next.
  Handoff& handoff() { return handoff_; }

  // Single copy: whether this process may read rank `peer`'s memory
  // (process_vm_readv, which needs what ptrace needs), tried on `address`,
  // a word of the peer's (its own_address()). After attach().
  bool can_read(int peer, std::uint64_t address) const;
  std::uint64_t own_address() const;
  // The process of rank `peer`, after attach().
  std::int64_t pid(int peer) const { return pids_[static_cast<std::size_t>(peer)]; }
  // Copies `bytes` from `address` in rank `peer`'s memory to `into`; false,
  // with errno set, if the kernel refuses or the peer is gone.
  bool read(int peer, std::uint64_t address, void* into, std::size_t bytes) const;
  // Whether every rank may read every other's memory, as they agreed.
  bool readable() const { return readable_; }
  // Whether whole collectives are read in a single copy: readable, and
  // every rank has a core of its own. Where ranks share cores, one reader
  // copying all it needs alone lost to the mailboxes' pieces, copied in
  // and out by different ranks at once (benchmarks/README.md); an
  // all-to-all, where every rank reads its own blocks, did not.
  bool single_copy() const { return readable_ && cores_apart_; }
  // As the ranks agreed: whether each may read the others' memory, and
  // whether each has a core of its own.
  void set_readable(bool readable, bool cores_apart) {
    readable_ = readable;
    cores_apart_ = cores_apart;
  }

  // Contributions a mailbox holds: how far a rank may run ahead.
  static constexpr std::uint64_t kSlots = 4;
  // Where this rank writes its contribution to the next operation, up to
  // shared_capacity() bytes, once clearance() allows, then announced by
  // publish(), which returns the operation's stamp.
  std::byte* contribution_area() { return writable(published_ + 1, Part::contribution); }
  std::uint64_t publish(std::uint32_t size, std::uint32_t kind);
  // The stamp every peer must have written before this rank writes its next
  // contribution, or 0 when they are known to have (seen()).
  std::uint64_t clearance() const {
    const std::uint64_t needed = published_ + 2 > kSlots ? published_ + 2 - kSlots : 0;
    return needed > seen_ ? needed : 0;
  }
  // Every peer has written its contribution to `stamp` (or a later one).
  void seen(std::uint64_t stamp) { seen_ = stamp > seen_ ? stamp : seen_; }
  // Whether rank `peer` has written its contribution to `stamp`, or a later
  // one in the same slot.
  bool written(int peer, std::uint64_t stamp) const {
    return part_of(peer, stamp, Part::contribution)->stamp.load(std::memory_order_acquire) >= stamp;
  }
  enum class Part { contribution, result };
  // Rank `peer`'s part for the operation `stamp`, or nullptr while it has
  // not arrived.
  const Header* arrived(int peer, std::uint64_t stamp, Part part = Part::contribution) const {
    const Header* slot = part_of(peer, stamp, part);
    return slot->stamp.load(std::memory_order_acquire) == stamp ? slot : nullptr;
  }
  static const std::byte* data(const Header* slot) { return reinterpret_cast<const std::byte*>(slot + 1); }
  // Where this rank writes its share of the result of operation `stamp`,
  // then announced by publish_result() (which alone stamps the part).
  std::byte* result_area(std::uint64_t stamp) { return writable(stamp, Part::result); }
  void publish_result(std::uint64_t stamp);

 private:
  struct Mapping {
    std::byte* base = nullptr;
    std::size_t stride = 0;  // bytes per part
    std::size_t length = 0;
  };
  const Header* part_of(int peer, std::uint64_t stamp, Part part) const {
    const Mapping& m = mappings_[static_cast<std::size_t>(peer)];
    const std::size_t index = part == Part::result ? kSlots + (stamp & 1) : stamp % kSlots;
    return reinterpret_cast<const Header*>(m.base + index * m.stride);
  }
  std::byte* writable(std::uint64_t stamp, Part part) {
    return const_cast<std::byte*>(data(part_of(rank_, stamp, part)));
  }
  static Mapping map(int fd, std::size_t capacity, bool writable);

  const int rank_;
  Handoff handoff_;
  std::size_t shared_capacity_;
  Fd file_;  // this rank's mailbox, until close_file()
  std::uint64_t published_ = 0;
  std::uint64_t seen_ = 0;  // every peer has written up to it
  std::vector<Mapping> mappings_;  // by rank; this rank's is its own, writable
  std::vector<std::int64_t> pids_;  // by rank, from attach()
  bool readable_ = false;
  bool cores_apart_ = false;
};

}  // namespace dtrain::comm::ucx
