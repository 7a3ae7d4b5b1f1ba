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

// out[t] = the sum over token t's kept pairs p of weights[p] (1 without
// weights) times p's send-order row; 0 for a token that kept none. Each row
// of `out` is written once, in order.
void sum_into_tokens(const Plan& plan, const float* weights, const float* rows, const Matrix& out) {
  const auto h = static_cast<std::size_t>(plan.hidden());
  const auto k = static_cast<std::size_t>(plan.k());
  for (std::size_t t = 0; t < static_cast<std::size_t>(plan.tokens()); ++t) {
    float* to = out.f32() + t * h;
    bool written = false;
    for (std::size_t p = t * k; p < (t + 1) * k; ++p) {
      const std::int64_t row = plan.pair_rows()[p];
      if (row < 0) continue;
      const float w = weights ? weights[p] : 1.0f;
      const float* from = rows + static_cast<std::size_t>(row) * h;
      if (written) {
        for (std::size_t c = 0; c < h; ++c) to[c] += w * from[c];
      } else {
        for (std::size_t c = 0; c < h; ++c) to[c] = w * from[c];
      }
      written = true;
    }
    if (!written) std::fill(to, to + h, 0.0f);
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
  sum_into_tokens(plan, w.f32(), returned.data(), result);
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
  // One pass over the send-order rows: row i of pair p and token t gets
  // weights[p] * d_out[t], and d_weights[p] = d_out[t] . returned row i.
  float* rows = plan.send_scratch();
  const std::vector<float>& returned = plan.returned_rows();
  const auto h = static_cast<std::size_t>(plan.hidden());
  std::fill(dw.f32(), dw.f32() + dw.view.count, 0.0f);
  for (std::size_t i = 0; i < plan.send_pairs().size(); ++i) {
    const auto pair = static_cast<std::size_t>(plan.send_pairs()[i]);
    const float* d_token = dy.f32() + static_cast<std::size_t>(plan.send_tokens()[i]) * h;
    const float weight = w.f32()[pair];
    double dot = 0.0;
    for (std::size_t c = 0; c < h; ++c) {
      dot += static_cast<double>(d_token[c]) * returned[i * h + c];
      rows[i * h + c] = weight * d_token[c];
    }
    dw.f32()[pair] = static_cast<float>(dot);
  }
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
  sum_into_tokens(plan, nullptr, rows, dx);
}

}  // namespace dtrain::parallel::moe
