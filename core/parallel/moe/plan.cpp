#include "parallel/moe/plan.hpp"

#include <string>

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
  std::exception_ptr failure;
  try {
    routing = read_routing();
    check_routing(routing, ep->size());
  } catch (const Error&) {
    failure = std::current_exception();
  }
  common::agree_on_layout(*ep, {"dt_moe_plan_create", "tensor"}, {},
                          {{"num_experts", routing.experts},
                           {"top_k", routing.choices.cols},
                           {"hidden", routing.hidden}},
                          failure);
  return std::unique_ptr<Plan>(new Plan(std::move(ep), routing));
}

Plan::Plan(std::shared_ptr<comm::Communicator> ep, const Routing& routing)
    : ep_(std::move(ep)),
      local_experts_(routing.experts / ep_->size()),
      tokens_(routing.choices.rows),
      k_(static_cast<int>(routing.choices.cols)),
      hidden_(routing.hidden) {
  // Send order: a counting sort of the kept pairs by expert, stable in token order.
  const std::int64_t* choices = routing.choices.i64();
  std::vector<std::int64_t> per_expert(static_cast<std::size_t>(routing.experts), 0);
  for (std::int64_t p = 0; p < tokens_ * k_; ++p) {
    if (choices[p] >= 0) ++per_expert[static_cast<std::size_t>(choices[p])];
  }
  std::vector<std::int64_t> next(per_expert.size(), 0);
  for (std::size_t e = 1; e < next.size(); ++e) next[e] = next[e - 1] + per_expert[e - 1];
  const std::int64_t kept = next.back() + per_expert.back();
  send_tokens_.resize(static_cast<std::size_t>(kept));
  send_pairs_.resize(static_cast<std::size_t>(kept));
  for (std::int64_t p = 0; p < tokens_ * k_; ++p) {
    if (choices[p] < 0) continue;
    const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(choices[p])]++);
    send_tokens_[slot] = p / k_;
    send_pairs_[slot] = p;
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
  rows_to_rank_.assign(static_cast<std::size_t>(ranks), 0);
  rows_from_rank_.assign(static_cast<std::size_t>(ranks), 0);
  expert_counts_.assign(static_cast<std::size_t>(local_experts_), 0);
  for (int r = 0; r < ranks; ++r) {
    for (int l = 0; l < local_experts_; ++l) {
      rows_to_rank_[static_cast<std::size_t>(r)] += count(send, r, l);
      rows_from_rank_[static_cast<std::size_t>(r)] += count(recv, r, l);
      expert_counts_[static_cast<std::size_t>(l)] += count(recv, r, l);
    }
  }
  received_ = 0;
  for (std::int64_t c : expert_counts_) received_ += c;

  // Where each (source, local expert) block starts in arrival order, then
  // the expert-major position of every arriving row.
  std::vector<std::int64_t> arrival_start(recv.size());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < recv.size(); ++i) {
    arrival_start[i] = offset;
    offset += recv[i];
  }
  expert_major_source_.resize(static_cast<std::size_t>(received_));
  arrival_position_.resize(static_cast<std::size_t>(received_));
  std::int64_t position = 0;
  for (int l = 0; l < local_experts_; ++l) {
    for (int r = 0; r < ranks; ++r) {
      const std::size_t block = static_cast<std::size_t>(r * local_experts_ + l);
      for (std::int64_t i = 0; i < recv[block]; ++i, ++position) {
        expert_major_source_[static_cast<std::size_t>(position)] = arrival_start[block] + i;
        arrival_position_[static_cast<std::size_t>(arrival_start[block] + i)] = position;
      }
    }
  }
}

void Plan::agree(Operation operation, const std::function<void()>& check) {
  std::exception_ptr failure;
  try {
    check();
  } catch (const Error&) {
    failure = std::current_exception();
  }
  common::agree_on_layout(*ep_, {operation_name(operation), "tensor"}, {},
                          {{"the operation (1 dispatch, 2 combine, 3 combine_backward, 4 dispatch_backward)",
                            static_cast<std::int64_t>(operation)}},
                          failure);
}

void Plan::exchange_rows(const float* send, const std::vector<std::int64_t>& send_rows, float* recv,
                         const std::vector<std::int64_t>& recv_rows) {
  std::vector<std::int64_t> send_counts(send_rows.size());
  std::vector<std::int64_t> recv_counts(recv_rows.size());
  std::int64_t send_total = 0;
  std::int64_t recv_total = 0;
  for (std::size_t r = 0; r < send_rows.size(); ++r) {
    send_counts[r] = send_rows[r] * hidden_;
    recv_counts[r] = recv_rows[r] * hidden_;
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  // Views are of mutable memory; the communicator only reads `send`.
  const TensorView send_view = host_view(const_cast<float*>(send), send_total, DType::f32);
  const TensorView recv_view = host_view(recv, recv_total, DType::f32);
  comm::start_and_wait(*ep_, [&] {
    return ep_->alltoallv(send_view, send_counts.data(), recv_view, recv_counts.data());
  });
}

float* Plan::send_scratch() {
  if (!send_scratch_) {
    send_scratch_ = std::make_unique_for_overwrite<float[]>(send_tokens_.size() * static_cast<std::size_t>(hidden_));
  }
  return send_scratch_.get();
}

float* Plan::expert_scratch() {
  if (!expert_scratch_) {
    expert_scratch_ = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(received_ * hidden_));
  }
  return expert_scratch_.get();
}

void Plan::to_experts(const float* send_rows, float* expert_rows) {
  float* arrived = expert_scratch();
  exchange_rows(send_rows, rows_to_rank_, arrived, rows_from_rank_);
  device::gather_rows(hidden_, host_f32(arrived, received_, hidden_).view,
                      host_i64(expert_major_source_.data(), 1, received_).view,
                      host_f32(expert_rows, received_, hidden_).view);
}

void Plan::to_tokens(const float* expert_rows, float* send_rows) {
  float* leaving = expert_scratch();
  // The kernel reads its table as a mutable view; it writes only `leaving`.
  device::gather_rows(hidden_, host_f32(const_cast<float*>(expert_rows), received_, hidden_).view,
                      host_i64(arrival_position_.data(), 1, received_).view,
                      host_f32(leaving, received_, hidden_).view);
  exchange_rows(leaving, rows_from_rank_, send_rows, rows_to_rank_);
}

}  // namespace dtrain::parallel::moe
