#include "parallel/moe/plan.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "base/env.hpp"
#include "base/error.hpp"
#include "device/kernels.hpp"
#include "parallel/common/agreement.hpp"

namespace dtrain::parallel::moe {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

void check_routing(const Routing& routing, int ep_size) {
  if (routing.experts < 1) invalid("num_experts is " + std::to_string(routing.experts) + "; it must be at least 1");
  if (routing.experts % ep_size != 0) {
    invalid("num_experts " + std::to_string(routing.experts) + " is not a multiple of the ep size " +
            std::to_string(ep_size));
  }
  if (routing.hidden < 1) invalid("hidden is " + std::to_string(routing.hidden) + "; it must be at least 1");
  const Matrix& c = routing.choices;
  std::vector<std::int64_t> seen_in_row(static_cast<std::size_t>(routing.experts), -1);
  for (std::int64_t t = 0; t < c.rows; ++t) {
    for (std::int64_t j = 0; j < c.cols; ++j) {
      const std::int64_t e = c.i64()[t * c.cols + j];
      const std::string where = "experts[" + std::to_string(t) + "][" + std::to_string(j) + "]";
      if (e < -1 || e >= routing.experts) {
        invalid(where + " is " + std::to_string(e) + "; it must be -1 or in 0.." + std::to_string(routing.experts - 1));
      }
      if (e < 0) continue;
      if (seen_in_row[static_cast<std::size_t>(e)] == t) {
        invalid(where + " repeats expert " + std::to_string(e) + " in token " + std::to_string(t));
      }
      seen_in_row[static_cast<std::size_t>(e)] = t;
    }
  }
}

const char* operation_name(Operation operation) {
  switch (operation) {
    case Operation::dispatch: return "dt_moe_dispatch";
    case Operation::combine: return "dt_moe_combine";
    case Operation::combine_backward: return "dt_moe_combine_backward";
    case Operation::dispatch_backward: return "dt_moe_dispatch_backward";
  }
  return "an MoE operation";
}

}  // namespace

std::unique_ptr<Plan> Plan::create(std::shared_ptr<comm::Communicator> ep,
                                   const std::function<Routing()>& read_routing) {
  Routing routing;
  Settings settings;
  std::exception_ptr failure;
  try {
    routing = read_routing();
    check_routing(routing, ep->size());
    const int most = std::numeric_limits<int>::max();
    settings.exchange = env::get_int("DTRAIN_MOE_EXCHANGE_BYTES", 0, most).value_or(kPerExpertExchangeBytes);
    settings.direct = env::get_int("DTRAIN_MOE_DIRECT_BYTES", 0, most).value_or(kDirectBytes);
    settings.round = env::get_int("DTRAIN_MOE_DIRECT_ROUND_BYTES", 1, most).value_or(kDirectRoundBytes);
  } catch (const Error&) {
    failure = std::current_exception();
  }
  common::agree_on_layout(*ep, {"dt_moe_plan_create", "tensor"}, {},
                          {{"num_experts", routing.experts},
                           {"top_k", routing.choices.cols},
                           {"hidden", routing.hidden}},
                          failure);
  return std::unique_ptr<Plan>(new Plan(std::move(ep), routing, settings));
}

Plan::Plan(std::shared_ptr<comm::Communicator> ep, const Routing& routing, const Settings& settings)
    : ep_(std::move(ep)),
      local_experts_(routing.experts / ep_->size()),
      tokens_(routing.choices.rows),
      k_(static_cast<int>(routing.choices.cols)),
      hidden_(routing.hidden),
      round_bytes_(settings.round) {
  const int ranks = ep_->size();
  const std::int64_t* choices = routing.choices.i64();
  std::vector<std::int64_t> per_expert(static_cast<std::size_t>(routing.experts), 0);
  std::int64_t kept = 0;
  for (std::int64_t p = 0; p < tokens_ * k_; ++p) {
    if (choices[p] < 0) continue;
    ++per_expert[static_cast<std::size_t>(choices[p])];
    ++kept;
  }
  // Every rank takes the same path, from the sums of the rows and of the
  // thresholds over the ranks: straight copies where the ranks can and the
  // rows are many enough; otherwise one exchange per local expert when its
  // calls move enough to outweigh their fixed cost, else one exchange and a
  // reordering pass on the experts' side.
  double sums[3] = {static_cast<double>(kept), static_cast<double>(settings.exchange),
                    static_cast<double>(settings.direct)};
  const TensorView sums_view = host_view(sums, 3, DType::f64);
  comm::start_and_wait(*ep_, [&] { return ep_->allreduce(sums_view, sums_view, DT_SUM); });
  const double row_bytes = static_cast<double>(hidden_) * sizeof(float);
  by_local_expert_ = sums[0] * row_bytes / local_experts_ >= sums[1];
  direct_ = ranks > 1 && ep_->peer_memory() != nullptr && sums[0] * row_bytes >= sums[2];

  // Send order: a counting sort of the kept pairs by block, stable in token
  // order. Expert e is local expert e % L of rank e / L; its block is
  // (e % L, e / L) by local expert, e itself otherwise.
  auto block_of = [&](std::int64_t e) {
    return static_cast<std::size_t>(by_local_expert_ ? (e % local_experts_) * ranks + e / local_experts_ : e);
  };
  // next[b]: the next free row of block b, starting after every block before it.
  std::vector<std::int64_t> next(per_expert.size(), 0);
  for (std::int64_t e = 0; e < routing.experts; ++e) next[block_of(e)] = per_expert[static_cast<std::size_t>(e)];
  std::exclusive_scan(next.begin(), next.end(), next.begin(), std::int64_t{0});
  send_count_ = per_expert;
  send_start_.resize(per_expert.size());
  for (std::int64_t e = 0; e < routing.experts; ++e) send_start_[static_cast<std::size_t>(e)] = next[block_of(e)];
  send_tokens_.resize(static_cast<std::size_t>(kept));
  pair_rows_.assign(static_cast<std::size_t>(tokens_ * k_), -1);
  pair_experts_.assign(static_cast<std::size_t>(tokens_ * k_), -1);
  for (std::int64_t p = 0; p < tokens_ * k_; ++p) {
    if (choices[p] < 0) continue;
    const std::int64_t slot = next[block_of(choices[p])]++;
    send_tokens_[static_cast<std::size_t>(slot)] = p / k_;
    pair_rows_[static_cast<std::size_t>(p)] = slot;
    pair_experts_[static_cast<std::size_t>(p)] = static_cast<int>(choices[p]);
  }
  exchange_counts(per_expert);
}

void Plan::exchange_counts(const std::vector<std::int64_t>& per_expert) {
  const int ranks = ep_->size();
  const int me = ep_->rank();
  const std::size_t experts = per_expert.size();
  std::vector<std::int64_t> send = per_expert;
  std::vector<std::int64_t> every(experts * static_cast<std::size_t>(ranks));  // [source rank][expert]
  const TensorView send_view = host_view(send.data(), static_cast<std::int64_t>(send.size()), DType::i64);
  const TensorView every_view = host_view(every.data(), static_cast<std::int64_t>(every.size()), DType::i64);
  comm::start_and_wait(*ep_, [&] { return ep_->allgather(send_view, every_view); });
  auto rows_of = [&](int source, std::size_t expert) { return every[static_cast<std::size_t>(source) * experts + expert]; };
  std::vector<std::int64_t> recv(experts);  // [source rank][local expert]
  for (int r = 0; r < ranks; ++r) {
    for (int l = 0; l < local_experts_; ++l) {
      recv[static_cast<std::size_t>(r * local_experts_ + l)] =
          rows_of(r, static_cast<std::size_t>(me * local_experts_ + l));
    }
  }
  // This rank's rows for expert e at e's rank: after every rank's rows for
  // the local experts before e there, then after the rows for e of the
  // source ranks before this one.
  expert_major_row_.assign(experts, 0);
  std::int64_t before_expert = 0;  // rows of e's rank's local experts before e
  for (std::size_t e = 0; e < experts; ++e) {
    if (e % static_cast<std::size_t>(local_experts_) == 0) before_expert = 0;
    std::int64_t row = before_expert;
    for (int r = 0; r < ranks; ++r) {
      if (r < me) row += rows_of(r, e);
      before_expert += rows_of(r, e);
    }
    expert_major_row_[e] = row;
  }

  auto count = [&](const std::vector<std::int64_t>& matrix, int rank, int local) {
    return matrix[static_cast<std::size_t>(rank * local_experts_ + local)];
  };
  expert_counts_.assign(static_cast<std::size_t>(local_experts_), 0);
  for (int l = 0; l < local_experts_; ++l) {
    for (int r = 0; r < ranks; ++r) expert_counts_[static_cast<std::size_t>(l)] += count(recv, r, l);
  }
  received_ = std::accumulate(expert_counts_.begin(), expert_counts_.end(), std::int64_t{0});

  // The exchanges: one per local expert, each packed by rank; or one of
  // every local expert's rows, packed by rank then local expert.
  const int exchanges = by_local_expert_ ? local_experts_ : 1;
  auto blocks_of = [&](const std::vector<std::int64_t>& matrix) {
    Blocks blocks;
    blocks.start.assign(static_cast<std::size_t>(exchanges), 0);
    blocks.counts.assign(static_cast<std::size_t>(exchanges), std::vector<std::int64_t>(ranks, 0));
    std::int64_t start = 0;
    for (int x = 0; x < exchanges; ++x) {
      blocks.start[static_cast<std::size_t>(x)] = start;
      for (int r = 0; r < ranks; ++r) {
        for (int l = by_local_expert_ ? x : 0; l < (by_local_expert_ ? x + 1 : local_experts_); ++l) {
          blocks.counts[static_cast<std::size_t>(x)][static_cast<std::size_t>(r)] += count(matrix, r, l) * hidden_;
          start += count(matrix, r, l);
        }
      }
    }
    return blocks;
  };
  send_blocks_ = blocks_of(send);
  expert_blocks_ = blocks_of(recv);
  if (by_local_expert_) return;

  // One exchange: rows arrive by source rank, then local expert; the
  // expert-major position of each.
  std::vector<std::int64_t> arrival_start(recv.size());
  std::partial_sum(recv.begin(), recv.end() - 1, arrival_start.begin() + 1);
  expert_major_source_.resize(static_cast<std::size_t>(received_));
  arrival_position_.resize(static_cast<std::size_t>(received_));
  std::int64_t position = 0;
  for (int l = 0; l < local_experts_; ++l) {
    for (int r = 0; r < ranks; ++r) {
      const auto block = static_cast<std::size_t>(r * local_experts_ + l);
      for (std::int64_t i = 0; i < recv[block]; ++i, ++position) {
        expert_major_source_[static_cast<std::size_t>(position)] = arrival_start[block] + i;
        arrival_position_[static_cast<std::size_t>(arrival_start[block] + i)] = position;
      }
    }
  }
}

void Plan::agree(Operation operation, device::Queue& queue, const std::function<void()>& check) {
  std::unique_ptr<Placement> placed;
  std::exception_ptr failure;
  try {
    check();
    if (placement_) {
      check_place(queue);
    } else {
      placed = place(queue);
    }
  } catch (const Error&) {
    failure = std::current_exception();
  }
  common::agree_on_layout(*ep_, {operation_name(operation), "tensor"}, {},
                          {{"the operation (1 dispatch, 2 combine, 3 combine_backward, 4 dispatch_backward)",
                            static_cast<std::int64_t>(operation)},
                           {"the tensors' memory (0 host, 1 CUDA)", queue.memory() == Memory::cuda ? 1 : 0}},
                          failure);
  if (placed) placement_ = std::move(placed);
  call_queue_ = &queue;
}

void Plan::end_call() { placement_->queue->wait_for(call_queue_->stream()); }

void Plan::check_place(const device::Queue& queue) const {
  const device::Queue& home = *placement_->queue;
  if (home.memory() != queue.memory() || home.device_id() != queue.device_id()) {
    raise(DT_ERR_INVALID_ARGUMENT, "this plan's exchanges run " + place_name(home.view(nullptr, 0, DType::f32)) +
                                       " but this call's tensors are " + place_name(queue.view(nullptr, 0, DType::f32)) +
                                       "; a plan keeps the place of its first call");
  }
}

std::unique_ptr<Plan::Placement> Plan::place(device::Queue& queue) const {
  auto placed = std::make_unique<Placement>();
  placed->queue = device::make_queue(queue.memory(), queue.device_id());
  device::Queue& home = *placed->queue;
  auto upload = [&](const std::vector<std::int64_t>& indices) {
    device::Buffer buffer(home, indices.size() * sizeof(std::int64_t), device::Buffer::Contents::unset);
    home.copy(buffer.data(), indices.data(), buffer.bytes());
    return buffer;
  };
  auto rows = [&](std::size_t count) {
    return device::Buffer(home, count * static_cast<std::size_t>(hidden_) * sizeof(float),
                          device::Buffer::Contents::unset);
  };
  placed->send_tokens = upload(send_tokens_);
  placed->pair_rows = upload(pair_rows_);
  placed->expert_major_source = upload(expert_major_source_);
  placed->arrival_position = upload(arrival_position_);
  placed->send_scratch = rows(send_tokens_.size());
  placed->returned_rows = rows(send_tokens_.size());
  // Only the single exchange reorders rows through it; straight copies of
  // host rows need none.
  const bool reorders = !by_local_expert_ && !copies_directly(queue.memory());
  placed->arrival_scratch = rows(reorders ? static_cast<std::size_t>(received_) : 0);
  // The copies read the vectors, and the calls' queues use the memory.
  home.synchronize();
  return placed;
}

TensorView Plan::on_call(const device::Buffer& buffer, std::int64_t count, DType dtype) const {
  TensorView view = buffer.view(0, count, dtype);
  view.stream = call_queue_->stream();
  return view;
}

TensorView Plan::send_tokens() const {
  return on_call(placement_->send_tokens, static_cast<std::int64_t>(send_tokens_.size()), DType::i64);
}

TensorView Plan::pair_rows() const {
  return on_call(placement_->pair_rows, static_cast<std::int64_t>(pair_rows_.size()), DType::i64);
}

TensorView Plan::send_scratch() const {
  return on_call(placement_->send_scratch, static_cast<std::int64_t>(send_tokens_.size()) * hidden_, DType::f32);
}

TensorView Plan::returned_rows() const {
  return on_call(placement_->returned_rows, static_cast<std::int64_t>(send_tokens_.size()) * hidden_, DType::f32);
}

void Plan::exchange(const TensorView& from, const Blocks& from_blocks, const TensorView& to, const Blocks& to_blocks) {
  for (std::size_t x = 0; x < from_blocks.start.size(); ++x) {
    const auto& send_counts = from_blocks.counts[x];
    const auto& recv_counts = to_blocks.counts[x];
    const std::int64_t send_total = std::accumulate(send_counts.begin(), send_counts.end(), std::int64_t{0});
    const std::int64_t recv_total = std::accumulate(recv_counts.begin(), recv_counts.end(), std::int64_t{0});
    const TensorView send_view = from.slice(from_blocks.start[x] * hidden_, send_total);
    const TensorView recv_view = to.slice(to_blocks.start[x] * hidden_, recv_total);
    comm::start_and_wait(*ep_, [&] {
      return ep_->alltoallv(send_view, send_counts.data(), recv_view, recv_counts.data());
    });
  }
}

void Plan::to_experts(const TensorView& from, Source source, const TensorView& expert_rows) {
  if (copies_directly(call_queue_->memory())) return write_to_experts(from, source, expert_rows);
  TensorView send_rows = from;
  if (source == Source::tokens) {
    send_rows = send_scratch();
    device::gather_rows(hidden_, from, send_tokens(), send_rows);
  }
  if (by_local_expert_) return exchange(send_rows, send_blocks_, expert_rows, expert_blocks_);
  const TensorView arrived = on_call(placement_->arrival_scratch, received_ * hidden_, DType::f32);
  exchange(send_rows, send_blocks_, arrived, expert_blocks_);
  device::gather_rows(hidden_, arrived, on_call(placement_->expert_major_source, received_, DType::i64), expert_rows);
}

void Plan::to_tokens(const TensorView& expert_rows, const TensorView& send_rows,
                     const std::function<void(std::int64_t, std::int64_t)>& arrived) {
  if (copies_directly(call_queue_->memory())) return read_to_tokens(expert_rows, send_rows, arrived);
  if (by_local_expert_) {
    exchange(expert_rows, expert_blocks_, send_rows, send_blocks_);
  } else {
    const TensorView leaving = on_call(placement_->arrival_scratch, received_ * hidden_, DType::f32);
    device::gather_rows(hidden_, expert_rows, on_call(placement_->arrival_position, received_, DType::i64), leaving);
    exchange(leaving, expert_blocks_, send_rows, send_blocks_);
  }
  arrived(0, tokens_);
}

namespace {

// Appends `bytes` at `data` to `pieces`, joining it to the last piece where
// it follows on.
void add_piece(std::vector<iovec>& pieces, const void* data, std::size_t bytes) {
  if (!pieces.empty() && static_cast<const std::byte*>(pieces.back().iov_base) + pieces.back().iov_len == data) {
    pieces.back().iov_len += bytes;
    return;
  }
  pieces.push_back({const_cast<void*>(data), bytes});
}

void* at(std::uint64_t address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); }

}  // namespace

std::vector<std::uint64_t> Plan::addresses_of(const TensorView& rows) {
  std::uint64_t mine = reinterpret_cast<std::uintptr_t>(rows.data);
  std::vector<std::uint64_t> every(static_cast<std::size_t>(ep_->size()));
  const TensorView mine_view = host_view(&mine, 1, DType::i64);
  const TensorView every_view = host_view(every.data(), ep_->size(), DType::i64);
  comm::start_and_wait(*ep_, [&] { return ep_->allgather(mine_view, every_view); });
  return every;
}

void Plan::end_copies(const char* operation, std::exception_ptr failure) {
  // The callers bring every failure here, not only an Error (an allocation,
  // say): the peers wait below for this rank, and may be copying to or from
  // its memory until then. The first rank whose copies failed, or the size
  // for none.
  std::int32_t failed = failure ? ep_->rank() : ep_->size();
  const TensorView failed_view = host_view(&failed, 1, DType::i32);
  comm::start_and_wait(*ep_, [&] { return ep_->allreduce(failed_view, failed_view, DT_MIN); });
  if (failure) std::rethrow_exception(failure);
  if (failed < ep_->size()) {
    raise(DT_ERR_REMOTE, std::string(operation) + ": rank " + std::to_string(failed) +
                             " failed while copying rows to or from its peers' memory");
  }
}

void Plan::write_to_experts(const TensorView& from, Source source, const TensorView& expert_rows) {
  const std::vector<std::uint64_t> addresses = addresses_of(expert_rows);
  const comm::PeerMemory& peers = *ep_->peer_memory();
  const auto row_bytes = static_cast<std::size_t>(hidden_) * sizeof(float);
  const auto* table = static_cast<const std::byte*>(from.data);
  const int experts = local_experts_ * ep_->size();
  std::vector<iovec> rows;
  std::exception_ptr failure;
  try {
    // From this rank's own experts on, so that the ranks start on different peers.
    for (int i = 0; i < experts; ++i) {
      const auto e = static_cast<std::size_t>((first_local_expert() + i) % experts);
      if (send_count_[e] == 0) continue;
      rows.clear();
      for (std::int64_t s = send_start_[e]; s < send_start_[e] + send_count_[e]; ++s) {
        const std::int64_t row = source == Source::tokens ? send_tokens_[static_cast<std::size_t>(s)] : s;
        add_piece(rows, table + static_cast<std::size_t>(row) * row_bytes, row_bytes);
      }
      const int rank = static_cast<int>(e) / local_experts_;
      const iovec place{at(addresses[static_cast<std::size_t>(rank)] +
                           static_cast<std::uint64_t>(expert_major_row_[e]) * row_bytes),
                        static_cast<std::size_t>(send_count_[e]) * row_bytes};
      peers.write(rank, rows, {&place, 1});
    }
  } catch (...) {
    failure = std::current_exception();
  }
  end_copies("dt_moe: rows to the experts", failure);
}

void Plan::read_to_tokens(const TensorView& expert_rows, const TensorView& send_rows,
                          const std::function<void(std::int64_t, std::int64_t)>& arrived) {
  const std::vector<std::uint64_t> addresses = addresses_of(expert_rows);
  const comm::PeerMemory& peers = *ep_->peer_memory();
  const auto row_bytes = static_cast<std::size_t>(hidden_) * sizeof(float);
  auto* into = static_cast<std::byte*>(send_rows.data);
  const int ranks = ep_->size();
  // Tokens a round: their rows fill about round_bytes_, which stay in cache.
  const std::int64_t chunk =
      std::max<std::int64_t>(1, round_bytes_ / static_cast<std::int64_t>(row_bytes * static_cast<std::size_t>(k_)));
  // The next slot of each expert's block: a block holds its rows in token
  // order, so a round's rows of each expert are the next ones.
  std::vector<std::int64_t> next = send_start_;
  std::vector<std::int64_t> in_round(next.size());
  std::vector<iovec> from;
  std::vector<iovec> to;
  std::exception_ptr failure;
  try {
    for (std::int64_t first = 0; first < tokens_; first += chunk) {
      const std::int64_t count = std::min(chunk, tokens_ - first);
      std::fill(in_round.begin(), in_round.end(), 0);
      for (std::int64_t p = first * k_; p < (first + count) * k_; ++p) {
        const int e = pair_experts_[static_cast<std::size_t>(p)];
        if (e >= 0) ++in_round[static_cast<std::size_t>(e)];
      }
      // From the next rank on, so that the ranks read from different peers.
      for (int i = 1; i <= ranks; ++i) {
        const int rank = (ep_->rank() + i) % ranks;
        from.clear();
        to.clear();
        for (int l = 0; l < local_experts_; ++l) {
          const auto e = static_cast<std::size_t>(rank * local_experts_ + l);
          if (in_round[e] == 0) continue;
          const std::uint64_t row = static_cast<std::uint64_t>(expert_major_row_[e] + next[e] - send_start_[e]);
          const std::size_t bytes = static_cast<std::size_t>(in_round[e]) * row_bytes;
          add_piece(from, at(addresses[static_cast<std::size_t>(rank)] + row * row_bytes), bytes);
          add_piece(to, into + static_cast<std::size_t>(next[e]) * row_bytes, bytes);
          next[e] += in_round[e];
        }
        if (!from.empty()) peers.read(rank, from, to);
      }
      arrived(first, count);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  end_copies("dt_moe: rows back to the tokens", failure);
}

}  // namespace dtrain::parallel::moe
