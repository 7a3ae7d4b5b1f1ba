#include "parallel/moe/plan.hpp"

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
  std::int64_t exchange_bytes = kPerExpertExchangeBytes;
  std::exception_ptr failure;
  try {
    routing = read_routing();
    check_routing(routing, ep->size());
    exchange_bytes = env::get_int("DTRAIN_MOE_EXCHANGE_BYTES", 0, std::numeric_limits<int>::max())
                         .value_or(kPerExpertExchangeBytes);
  } catch (const Error&) {
    failure = std::current_exception();
  }
  common::agree_on_layout(*ep, {"dt_moe_plan_create", "tensor"}, {},
                          {{"num_experts", routing.experts},
                           {"top_k", routing.choices.cols},
                           {"hidden", routing.hidden}},
                          failure);
  return std::unique_ptr<Plan>(new Plan(std::move(ep), routing, exchange_bytes));
}

Plan::Plan(std::shared_ptr<comm::Communicator> ep, const Routing& routing, std::int64_t exchange_bytes)
    : ep_(std::move(ep)),
      local_experts_(routing.experts / ep_->size()),
      tokens_(routing.choices.rows),
      k_(static_cast<int>(routing.choices.cols)),
      hidden_(routing.hidden) {
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
  // thresholds over the ranks: one exchange per local expert when its calls
  // move enough to outweigh their fixed cost, else one exchange and a
  // reordering pass on the experts' side.
  double sums[2] = {static_cast<double>(kept), static_cast<double>(exchange_bytes)};
  const TensorView sums_view = host_view(sums, 2, DType::f64);
  comm::start_and_wait(*ep_, [&] { return ep_->allreduce(sums_view, sums_view, DT_SUM); });
  by_local_expert_ = sums[0] * static_cast<double>(hidden_) * sizeof(float) / local_experts_ >= sums[1];

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
  send_tokens_.resize(static_cast<std::size_t>(kept));
  pair_rows_.assign(static_cast<std::size_t>(tokens_ * k_), -1);
  for (std::int64_t p = 0; p < tokens_ * k_; ++p) {
    if (choices[p] < 0) continue;
    const std::int64_t slot = next[block_of(choices[p])]++;
    send_tokens_[static_cast<std::size_t>(slot)] = p / k_;
    pair_rows_[static_cast<std::size_t>(p)] = slot;
  }
  exchange_counts(per_expert);
}

void Plan::exchange_counts(const std::vector<std::int64_t>& per_expert) {
  const int ranks = ep_->size();
  std::vector<std::int64_t> send = per_expert;
  std::vector<std::int64_t> recv(per_expert.size());  // [source rank][local expert]
  const TensorView send_view = host_view(send.data(), static_cast<std::int64_t>(send.size()), DType::i64);
  const TensorView recv_view = host_view(recv.data(), static_cast<std::int64_t>(recv.size()), DType::i64);
  comm::start_and_wait(*ep_, [&] { return ep_->alltoall(send_view, recv_view); });

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
  placed->arrival_scratch = rows(by_local_expert_ ? 0 : static_cast<std::size_t>(received_));
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

void Plan::to_experts(const TensorView& send_rows, const TensorView& expert_rows) {
  if (by_local_expert_) return exchange(send_rows, send_blocks_, expert_rows, expert_blocks_);
  const TensorView arrived = on_call(placement_->arrival_scratch, received_ * hidden_, DType::f32);
  exchange(send_rows, send_blocks_, arrived, expert_blocks_);
  device::gather_rows(hidden_, arrived, on_call(placement_->expert_major_source, received_, DType::i64), expert_rows);
}

void Plan::to_tokens(const TensorView& expert_rows, const TensorView& send_rows) {
  if (by_local_expert_) return exchange(expert_rows, expert_blocks_, send_rows, send_blocks_);
  const TensorView leaving = on_call(placement_->arrival_scratch, received_ * hidden_, DType::f32);
  device::gather_rows(hidden_, expert_rows, on_call(placement_->arrival_position, received_, DType::i64), leaving);
  exchange(leaving, expert_blocks_, send_rows, send_blocks_);
}

}  // namespace dtrain::parallel::moe
