// The routing of one layer's step across the ep communicator
// (dt_moe_plan): which of this rank's rows go to which rank, how many each
// rank receives for each of its local experts, and the two directions of
// the token exchange that dispatch and combine (and their backward passes)
// are built from.
//
// The experts' ranks hold rows in "expert-major" order: by local expert,
// then source rank, then the source's token order. How rows leave ("send
// order") depends on the layer's size, the same on every rank:
//  - by local expert: by the destination expert's local index, then
//    destination rank, then token. Both orders then hold, for each local
//    expert, one block packed by rank, so one alltoallv per local expert
//    lands every row where it belongs, with no pass that reorders rows;
//  - in one exchange, when each of those alltoallvs would move less than
//    DTRAIN_MOE_EXCHANGE_BYTES (kPerExpertExchangeBytes) a rank on average (their fixed cost would
//    outweigh the pass they spare): by destination expert, then token. One
//    alltoallv delivers them by source rank, and a pass on the experts' side
//    puts them in expert-major order (and back).
//
// Where the ep ranks share a host and may copy straight between their
// memories (comm/peer_memory.hpp), host rows of layers that move at least
// DTRAIN_MOE_DIRECT_BYTES (kDirectBytes) a rank on average skip both: each
// rank writes its rows, picked from the token matrix, straight to their
// expert-major places at the experts' ranks, and reads them back straight
// into send order, a few tokens' rows at a time so that combine's weighted
// sum reads them while they are in cache. Every row is then copied once,
// with no packing pass: the same bytes as a raw alltoallv.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "device/buffer.hpp"
#include "device/queue.hpp"
#include "parallel/moe/matrix.hpp"

namespace dtrain::parallel::moe {

// This rank's side of a plan: experts [T, k] (-1: the pair goes nowhere).
struct Routing {
  int experts = 0;  // E
  Matrix choices;
  std::int64_t hidden = 0;
};

// The collective operations on a plan, as the ranks' agreement names them.
enum class Operation : int { dispatch = 1, combine = 2, combine_backward = 3, dispatch_backward = 4 };

class Plan {
 public:
  // Below this many bytes per rank and local expert, a plan exchanges rows
  // in one alltoallv (see above); DTRAIN_MOE_EXCHANGE_BYTES overrides it.
  static constexpr std::int64_t kPerExpertExchangeBytes = 64 * 1024;
  // From this many bytes of rows per rank, host rows are copied straight
  // between the ranks' memories where they can be (see above);
  // DTRAIN_MOE_DIRECT_BYTES overrides it.
  static constexpr std::int64_t kDirectBytes = 256 * 1024;
  // Copied back straight, rows come a round of tokens at a time, about this
  // many bytes of rows each: small enough to be in cache for the pass that
  // follows, large enough that each peer's share of a round is worth a call
  // (at ep = 4 on two cores, 1 MiB rounds beat 256 KiB ones by a tenth);
  // DTRAIN_MOE_DIRECT_ROUND_BYTES overrides it on a rank.
  static constexpr std::int64_t kDirectRoundBytes = 1024 * 1024;

  // Collective over `ep`. `read_routing` checks this rank's arguments and
  // returns them (the choices in host memory), or throws: this rank then
  // still takes part in the agreement, so the others are refused
  // (DT_ERR_MISMATCH) instead of waiting. Ranks disagreeing about E, k or H
  // are all refused with DT_ERR_MISMATCH.
  static std::unique_ptr<Plan> create(std::shared_ptr<comm::Communicator> ep,
                                      const std::function<Routing()>& read_routing);

  comm::Communicator& communicator() const { return *ep_; }
  int first_local_expert() const { return ep_->rank() * local_experts_; }
  int local_experts() const { return local_experts_; }
  const std::vector<std::int64_t>& expert_counts() const { return expert_counts_; }
  std::int64_t received() const { return received_; }
  std::int64_t tokens() const { return tokens_; }
  int k() const { return k_; }
  std::int64_t hidden() const { return hidden_; }

  // Runs `check` (this rank's arguments for `operation`), checks that the
  // call's `queue` is where the plan's exchanges run (the place of the
  // first call the ranks agreed on: host memory or one CUDA device;
  // elsewhere is DT_ERR_INVALID_ARGUMENT), placing the plan's indices and
  // scratch rows there at the first call, and agrees with the other ranks
  // that they all run `operation` on the same kind of memory with valid
  // arguments; throws this rank's error or DT_ERR_MISMATCH as create()
  // does, leaving the plan as it was. The views below are then ordered on
  // `queue`, until end_call().
  void agree(Operation operation, device::Queue& queue, const std::function<void()>& check);
  // After an operation's work is queued: the plan's memory goes back (when
  // the plan goes) only after that work has run.
  void end_call();

  // The token of each row in send order [S], and the send-order row of each
  // pair [T * k] (-1 where the pair goes nowhere), i64.
  TensorView send_tokens() const;
  TensorView pair_rows() const;
  // Scratch rows in send order [S, H], allocated once and reused by every
  // call on the plan: fresh memory on every call would cost page faults
  // and, over UCX, a new memory registration each time.
  TensorView send_scratch() const;
  // What combine brought back, in send order [S, H], for combine's backward.
  TensorView returned_rows() const;
  bool combined() const { return combined_; }
  void set_combined() { combined_ = true; }

  // Where the rows an operation sends lie: in the token matrix [T, H] (slot
  // s is row send_tokens()[s]), or already in send order [S, H].
  enum class Source { tokens, send_order };
  // The rows of `from` in send order here become rows [R, H] in
  // expert-major order at the experts' ranks. Collective; f32 views in the
  // plan's place. `from` is read only (send_scratch() holds rows picked
  // from tokens where they need packing).
  void to_experts(const TensorView& from, Source source, const TensorView& expert_rows);
  // The reverse: rows [R, H] of the experts' ranks back into `send_rows`
  // [S, H] in send order. `arrived(first, count)` is called once the rows
  // of every pair of tokens [first, first + count) are there: for all the
  // tokens at once after exchanges, a few at a time when copied straight
  // from the peers, so that a pass over them finds them in cache.
  void to_tokens(const TensorView& expert_rows, const TensorView& send_rows,
                 const std::function<void(std::int64_t first, std::int64_t count)>& arrived);

 private:
  // This rank's DTRAIN_MOE_EXCHANGE_BYTES, DTRAIN_MOE_DIRECT_BYTES and
  // DTRAIN_MOE_DIRECT_ROUND_BYTES.
  struct Settings {
    std::int64_t exchange = kPerExpertExchangeBytes;
    std::int64_t direct = kDirectBytes;
    std::int64_t round = kDirectRoundBytes;  // this rank's alone: rounds are not agreed
  };
  Plan(std::shared_ptr<comm::Communicator> ep, const Routing& routing, const Settings& settings);
  void exchange_counts(const std::vector<std::int64_t>& per_expert);
  // The rows of each exchange: where its block starts, and its elements per
  // rank, in send order and on the experts' side.
  struct Blocks {
    std::vector<std::int64_t> start;                // per exchange, in rows
    std::vector<std::vector<std::int64_t>> counts;  // [exchange][rank], in elements
  };
  // One alltoallv per exchange, from `from_blocks` of `from` to `to_blocks`
  // of `to`.
  void exchange(const TensorView& from, const Blocks& from_blocks, const TensorView& to, const Blocks& to_blocks);
  // Whether rows in `memory` are copied straight (see above): host rows.
  bool copies_directly(Memory memory) const { return direct_ && memory == Memory::host; }
  void write_to_experts(const TensorView& from, Source source, const TensorView& expert_rows);
  void read_to_tokens(const TensorView& expert_rows, const TensorView& send_rows,
                      const std::function<void(std::int64_t, std::int64_t)>& arrived);
  // Every rank's address of `rows` (an allgather), for copies to or from it.
  std::vector<std::uint64_t> addresses_of(const TensorView& rows);
  // After this rank's straight copies (`failure` when they failed): an
  // agreement that every rank's are done, before which no rank may return
  // or touch the memory its peers copy. Throws this rank's failure, or
  // DT_ERR_REMOTE naming a rank whose copies failed.
  void end_copies(const char* operation, std::exception_ptr failure);
  // Where the exchanges run: a Queue of the first call's place, which owns
  // the placed copies of the indices and the scratch rows. A call makes it
  // before the ranks' agreement, so that a failure to allocate is refused
  // on every rank, and the plan keeps it once they agree.
  struct Placement {
    std::unique_ptr<device::Queue> queue;  // first: the buffers go back to it
    device::Buffer send_tokens, pair_rows, expert_major_source, arrival_position;
    device::Buffer send_scratch, arrival_scratch, returned_rows;
  };
  std::unique_ptr<Placement> place(device::Queue& queue) const;
  // DT_ERR_INVALID_ARGUMENT unless `queue` is where the plan was placed.
  void check_place(const device::Queue& queue) const;
  // `count` elements of `dtype` of `buffer`, ordered on the call's queue.
  TensorView on_call(const device::Buffer& buffer, std::int64_t count, DType dtype) const;

  std::shared_ptr<comm::Communicator> ep_;
  int local_experts_ = 0;
  std::int64_t tokens_ = 0;
  int k_ = 0;
  std::int64_t hidden_ = 0;
  std::vector<std::int64_t> send_tokens_;
  std::vector<std::int64_t> pair_rows_;
  std::vector<std::int64_t> expert_counts_;  // per local expert
  std::int64_t received_ = 0;
  bool by_local_expert_ = true;
  Blocks send_blocks_;
  Blocks expert_blocks_;  // by local expert; in one exchange, the arrival order
  // One exchange: expert_major_source[i] is the row, in arrival (source
  // rank, then local expert) order, that goes to expert-major position i;
  // arrival_position[j] the inverse. Empty by local expert.
  std::vector<std::int64_t> expert_major_source_;
  std::vector<std::int64_t> arrival_position_;
  // Straight copies: this rank's rows for each expert e are slots
  // [send_start_[e], send_start_[e] + send_count_[e]) in send order, and go
  // to expert-major row expert_major_row_[e] on and after at e's rank.
  bool direct_ = false;
  std::int64_t round_bytes_ = kDirectRoundBytes;
  std::vector<std::int64_t> send_start_;
  std::vector<std::int64_t> send_count_;
  std::vector<std::int64_t> expert_major_row_;
  std::vector<int> pair_experts_;  // [T * k]: each pair's expert, -1 for none

  std::unique_ptr<Placement> placement_;
  device::Queue* call_queue_ = nullptr;
  bool combined_ = false;
};

}  // namespace dtrain::parallel::moe
