// Every collective but allreduce (local_allreduce.hpp) through the ranks'
// mailboxes (mailboxes.hpp), for communicators whose ranks all run on one
// host: reduce_scatter(v), allgather(v), broadcast, alltoall(v), reduce,
// gather and scatter. Each rank writes what its peers need of its buffers
// to its own mailbox and copies (or reduces) what it needs of theirs
// straight from their mailboxes into its result: one copy in, one out, no
// message, where the schedules over UCX take a round trip per step.
//
// What a rank writes is one stream or one per destination:
//  - one stream (allgather, reduce_scatter, broadcast, reduce, gather): its
//    contribution, of which each reader takes the range it needs (its own
//    segment of a reduce_scatter, everything of an allgather);
//  - a stream per destination (alltoallv, scatter): the payload is cut into
//    a sub-slot per rank, and rank d reads sub-slot d.
// What no peer reads is not written (a rank's own segment of a
// reduce_scatter, the root's data of a gather or reduce). Streams longer
// than the mailbox go in pieces, one mailbox operation each; every rank
// says in each piece whether it has more to write, and the ranks go on
// while any has, so they take the same number of pieces even where only
// the writer knows its lengths (alltoallv's send counts).
//
// Each piece starts with the rank's call (call_check.hpp: kind, dtype,
// count, op, root, a digest of per-rank counts; 24 bytes, so that the
// header, the call and a small payload share a line) and, for alltoallv,
// its send and receive counts. Every rank compares all of them before using any
// data, so ranks that disagree (or an alltoallv whose counts do not pair
// up) all get DT_ERR_MISMATCH naming each rank's call, and no result is
// written. Reductions go in rank order from the rank's own values, which it
// reads from its send buffer.
//
// But the rooted collectives in one piece, and not read in a single copy,
// wait only for the ranks whose parts they read, as MPI's eager messages
// would:
//  - a rank that only sends (the root of a broadcast or scatter, the others
//    of a gather or reduce) ends once its piece is in its mailbox, and with
//    the mailboxes' slots (Mailboxes::kSlots) may run a few operations
//    ahead; it compares no call. A scatter's root copies its own block as
//    it ends;
//  - the other ranks of a broadcast or scatter await and compare the
//    root's part alone (only_);
//  - the root of a gather or reduce reads, and compares, every rank's.
// A disagreement is then found by a rank that receives from one that
// disagrees with it.
//
// Single copy: where every rank may read the others' memory
// (process_vm_readv) and has a core of its own, an allgather(v), broadcast, gather or scatter of at
// least DTRAIN_UCX_SINGLE_COPY_BYTES in all (sizes every rank knows alike,
// so all choose alike) goes in one piece whose payload is the addresses of
// the rank's streams: each rank copies what it needs straight from its
// peers' buffers into its result, then says so in its mailbox's result
// part, and returns once every rank has (its own buffers are read until
// then). A stream that overlaps where the rank's own result lands is read
// from a copy. Whether a rank reads in a single copy is part of its call, so
// ranks that chose differently disagree like any other call.
//
// An alltoall(v) chooses block by block, since only the two ends of a block
// know its size: a block of at least DTRAIN_UCX_SINGLE_COPY_BYTES / size
// bytes is read by its destination straight from the sender's buffer (its
// address is in the sender's first piece, after the counts), and the rest
// go through the mailboxes. Every rank acknowledges once it has read, and
// a rank whose blocks were read returns once every rank has. Each rank
// reads only its own blocks, so this holds where ranks share cores too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor.hpp"
#include "comm/backends/ucx/local_collective.hpp"
#include "comm/backends/ucx/mailboxes.hpp"
#include "comm/call_check.hpp"
#include "comm/collective.hpp"
#include "comm/schedules/combine.hpp"

namespace dtrain::comm::ucx {

class LocalExchange final : public LocalCollective {
 public:
  // Whether mailboxes of `capacity` bytes hold a piece of every kind at
  // `size` ranks (a sub-slot of at least one line per rank).
  static bool fits(std::size_t capacity, int size);

 protected:
  void prepare(std::uint64_t sequence, const Collective& collective) override;
  void begin() override { begin_piece(); }
  Progress step() override;
  Mailboxes::Part awaited() const override {
    return acknowledging_ ? Mailboxes::Part::result : Mailboxes::Part::contribution;
  }

 private:
  // Elements [first, first + count) of stream `stream` of `peer`, to `into`.
  struct Read {
    int peer = 0;
    int stream = 0;
    std::int64_t first = 0;
    std::int64_t count = 0;
    std::byte* into = nullptr;
    bool direct = false;  // from the peer's memory, not its mailbox
  };
  // What this rank writes to stream `index`: `count` elements at `data`,
  // but for [skip_first, skip_first + skip_count), which only it reads.
  struct Stream {
    const std::byte* data = nullptr;
    std::int64_t count = 0;
    std::int64_t skip_first = 0;
    std::int64_t skip_count = 0;
    bool direct = false;  // read by its destination from this rank's memory, not written
  };

  // The plan: what this rank writes, reads and reduces, from `c`.
  void plan(const Collective& c);
  // The elements a piece holds per stream.
  std::int64_t piece_elements() const;
  // The tables that follow the preamble: alltoallv's counts and addresses.
  std::size_t table_bytes() const;
  // Where the addresses of the rank's streams begin in its part.
  std::size_t addresses_offset() const;
  void write_addresses(std::byte* area) const;
  std::size_t payload_offset() const;
  // Where stream `stream` of a piece begins, from the start of its data.
  std::size_t stream_offset(int stream) const;
  void begin_piece();
  // At the first piece: DT_ERR_MISMATCH unless every rank made the same call.
  bool calls_agree();
  void take_piece();
  // Whether this call is read in a single copy (DTRAIN_UCX_SINGLE_COPY_BYTES).
  bool reads_in_a_single_copy() const;
  // Whether an alltoallv block of `block` elements is read in a single copy.
  bool read_directly(std::int64_t block) const;
  // Single copy: streams that overlap what this rank writes go to aside_.
  void keep_streams_apart();
  // The single copy: every read straight from the peer's buffer, then the
  // acknowledgement that this rank is done with its peers' buffers.
  void read_in_place();
  // One read from the peer's memory; false, with the operation failed, if
  // it cannot be read.
  bool read_direct(const Read& read);
  // Says that this rank is done with its peers' buffers; waits for every
  // rank to say so if its own were read.
  void acknowledge(bool read_by_peers);

  Call call_;
  std::uint32_t kind_ = 0;
  std::size_t element_ = 1;
  bool per_destination_ = false;   // a stream per rank rather than one
  std::vector<std::int64_t> send_counts_;  // alltoallv: in the table
  std::vector<std::int64_t> recv_counts_;
  std::vector<std::int64_t> counts_;  // scratch for the plan, kept to spare allocations
  std::vector<std::int64_t> firsts_;
  std::vector<std::byte> aside_;   // an alltoallv in place, or a single copy's stream: the send buffer kept
  std::vector<Stream> streams_;    // by index (one, or one per destination)
  std::vector<Read> reads_;
  // A reduction over every rank's stream range [first, first + count):
  // this rank's values at `own`, the result at `into`.
  Combine combine_{ReduceOp::sum, DType::f32};
  std::int64_t reduce_first_ = 0;
  std::int64_t reduce_count_ = 0;
  const std::byte* reduce_own_ = nullptr;
  std::byte* reduce_into_ = nullptr;
  // This rank's own block of the result, copied once the calls agree.
  const std::byte* own_from_ = nullptr;
  std::byte* own_into_ = nullptr;
  std::size_t own_bytes_ = 0;

  std::int64_t piece_ = 0;  // the current piece: stream elements [piece_ * L, (piece_ + 1) * L)
  bool single_copy_ = false;
  bool sends_only_ = false;  // its peers read all it does: it ends once it has written
  bool blocks_read_in_place_ = false;  // alltoallv: some of this rank's blocks are read from its memory
  bool acknowledging_ = false;  // read: waiting for every rank to have read
};

// Any other collective as an Operation the engine schedules, on the engine's
// `group`.
std::unique_ptr<Operation> local_exchange(Collective collective, const Group& group);

}  // namespace dtrain::comm::ucx
