#include "parallel/moe/dispatch.hpp"

#include <algorithm>
#include <vector>

#include "base/error.hpp"
#include "device/kernels.hpp"

namespace dtrain::parallel::moe {

namespace {

std::int64_t sent(const Plan& plan) { return static_cast<std::int64_t>(plan.send_tokens().size()); }

// Rows of `table` [rows, H] picked by the plan's send order into its send
// scratch: [S, H].
float* gather_send_rows(Plan& plan, const Matrix& table) {
  float* rows = plan.send_scratch();
  // The kernel takes mutable views; it only reads the table and indices.
  auto* indices = const_cast<std::int64_t*>(plan.send_tokens().data());
  device::gather_rows(plan.hidden(), table.view, host_i64(indices, 1, sent(plan)).view,
                      host_f32(rows, sent(plan), plan.hidden()).view);
  return rows;
}

// out[t] = sum of the send-order rows whose token is t (0 for none).
void sum_into_tokens(const Plan& plan, float* rows, const Matrix& out) {
  std::fill(out.f32(), out.f32() + out.view.count, 0.0f);
  auto* indices = const_cast<std::int64_t*>(plan.send_tokens().data());
  device::scatter_add_rows(plan.hidden(), host_f32(rows, sent(plan), plan.hidden()).view,
                           host_i64(indices, 1, sent(plan)).view, out.view);
}

// to[i] = from[i] times the weight of row i's pair, for every send-order row.
void scale_by_weights(const Plan& plan, const Matrix& weights, const float* from, float* to) {
  const auto h = static_cast<std::size_t>(plan.hidden());
  for (std::size_t i = 0; i < plan.send_pairs().size(); ++i) {
    const float w = weights.f32()[plan.send_pairs()[i]];
    for (std::size_t c = 0; c < h; ++c) to[i * h + c] = from[i * h + c] * w;
  }
}

}  // namespace

void dispatch(Plan& plan, const ParsedTensor& tokens, const ParsedTensor& received) {
  Matrix x;
  Matrix out;
  plan.agree(Operation::dispatch, [&] {
    x = float_matrix(tokens.get(), "tokens", plan.tokens(), plan.hidden());
    out = float_matrix(received.get(), "received", plan.received(), plan.hidden());
    check_disjoint(out, "received", x, "tokens");
  });
  plan.to_experts(gather_send_rows(plan, x), out.f32());
}

void combine(Plan& plan, const ParsedTensor& expert_out, const ParsedTensor& weights, const ParsedTensor& output) {
  Matrix y;
  Matrix w;
  Matrix result;
  plan.agree(Operation::combine, [&] {
    y = float_matrix(expert_out.get(), "expert_out", plan.received(), plan.hidden());
    w = float_matrix(weights.get(), "weights", plan.tokens(), plan.k());
    result = float_matrix(output.get(), "output", plan.tokens(), plan.hidden());
    check_disjoint(result, "output", y, "expert_out");
    check_disjoint(result, "output", w, "weights");
  });
  std::vector<float>& returned = plan.returned_rows();
  returned.resize(plan.send_tokens().size() * static_cast<std::size_t>(plan.hidden()));
  plan.to_tokens(y.f32(), returned.data());
  plan.set_combined();
  float* weighted = plan.send_scratch();
  scale_by_weights(plan, w, returned.data(), weighted);
  sum_into_tokens(plan, weighted, result);
}

void combine_backward(Plan& plan, const ParsedTensor& d_out, const ParsedTensor& weights,
                      const ParsedTensor& d_expert_out, const ParsedTensor& d_weights) {
  Matrix dy;
  Matrix w;
  Matrix d_rows;
  Matrix dw;
  plan.agree(Operation::combine_backward, [&] {
    if (!plan.combined()) {
      raise(DT_ERR_INVALID_USAGE, "dt_moe_combine_backward: dt_moe_combine has not run on this plan");
    }
    dy = float_matrix(d_out.get(), "d_out", plan.tokens(), plan.hidden());
    w = float_matrix(weights.get(), "weights", plan.tokens(), plan.k());
    d_rows = float_matrix(d_expert_out.get(), "d_expert_out", plan.received(), plan.hidden());
    dw = float_matrix(d_weights.get(), "d_weights", plan.tokens(), plan.k());
    for (const auto& [input, name] : {std::pair{&dy, "d_out"}, std::pair{&w, "weights"}}) {
      check_disjoint(d_rows, "d_expert_out", *input, name);
      check_disjoint(dw, "d_weights", *input, name);
    }
    check_disjoint(dw, "d_weights", d_rows, "d_expert_out");
  });
  float* rows = gather_send_rows(plan, dy);
  const std::vector<float>& returned = plan.returned_rows();
  const auto h = static_cast<std::size_t>(plan.hidden());
  std::fill(dw.f32(), dw.f32() + dw.view.count, 0.0f);
  for (std::size_t i = 0; i < plan.send_pairs().size(); ++i) {
    double dot = 0.0;
    for (std::size_t c = 0; c < h; ++c) dot += static_cast<double>(rows[i * h + c]) * returned[i * h + c];
    dw.f32()[plan.send_pairs()[i]] = static_cast<float>(dot);
  }
  scale_by_weights(plan, w, rows, rows);
  plan.to_experts(rows, d_rows.f32());
}

void dispatch_backward(Plan& plan, const ParsedTensor& d_received, const ParsedTensor& d_tokens) {
  Matrix d_rows;
  Matrix dx;
  plan.agree(Operation::dispatch_backward, [&] {
    d_rows = float_matrix(d_received.get(), "d_received", plan.received(), plan.hidden());
    dx = float_matrix(d_tokens.get(), "d_tokens", plan.tokens(), plan.hidden());
    check_disjoint(dx, "d_tokens", d_rows, "d_received");
  });
  float* rows = plan.send_scratch();
  plan.to_tokens(d_rows.f32(), rows);
  sum_into_tokens(plan, rows, dx);
}

}  // namespace dtrain::parallel::moe
