#include "parallel/moe/dispatch.hpp"

#include <utility>

#include "base/error.hpp"
#include "device/kernels.hpp"

namespace dtrain::parallel::moe {

namespace {

// The entries of tokens [first, first + count) of a [T, k] view, and their
// rows of a [T, H] view.
TensorView pairs_of(const Plan& plan, const TensorView& view, std::int64_t first, std::int64_t count) {
  return view.slice(first * plan.k(), count * plan.k());
}
TensorView rows_of(const Plan& plan, const TensorView& view, std::int64_t first, std::int64_t count) {
  return view.slice(first * plan.hidden(), count * plan.hidden());
}

}  // namespace

void dispatch(Plan& plan, device::Queue& queue, const ParsedTensor& tokens, const ParsedTensor& received) {
  Matrix x;
  Matrix out;
  plan.agree(Operation::dispatch, queue, [&] {
    x = float_matrix(tokens.get(), "tokens", plan.tokens(), plan.hidden());
    out = float_matrix(received.get(), "received", plan.received(), plan.hidden());
    check_disjoint(out, "received", x, "tokens");
  });
  plan.to_experts(x.view, Plan::Source::tokens, out.view);
  plan.end_call();
}

void combine(Plan& plan, device::Queue& queue, const ParsedTensor& expert_out, const ParsedTensor& weights,
             const ParsedTensor& output) {
  Matrix y;
  Matrix w;
  Matrix result;
  plan.agree(Operation::combine, queue, [&] {
    y = float_matrix(expert_out.get(), "expert_out", plan.received(), plan.hidden());
    w = float_matrix(weights.get(), "weights", plan.tokens(), plan.k());
    result = float_matrix(output.get(), "output", plan.tokens(), plan.hidden());
    check_disjoint(result, "output", y, "expert_out");
    check_disjoint(result, "output", w, "weights");
  });
  const TensorView returned = plan.returned_rows();
  plan.to_tokens(y.view, returned, [&](std::int64_t first, std::int64_t count) {
    device::pair_rows_sum(plan.k(), plan.hidden(), returned, pairs_of(plan, plan.pair_rows(), first, count),
                          pairs_of(plan, w.view, first, count), rows_of(plan, result.view, first, count));
  });
  plan.set_combined();
  plan.end_call();
}

void combine_backward(Plan& plan, device::Queue& queue, const ParsedTensor& d_out, const ParsedTensor& weights,
                      const ParsedTensor& d_expert_out, const ParsedTensor& d_weights) {
  Matrix dy;
  Matrix w;
  Matrix d_rows;
  Matrix dw;
  plan.agree(Operation::combine_backward, queue, [&] {
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
  // Row i of pair p and token t gets weights[p] * d_out[t], and d_weights[p]
  // = d_out[t] . the row combine brought back for p.
  const TensorView rows = plan.send_scratch();
  device::pair_rows_sum_backward(plan.k(), plan.hidden(), dy.view, w.view, plan.returned_rows(), plan.pair_rows(),
                                 rows, dw.view);
  plan.to_experts(rows, Plan::Source::send_order, d_rows.view);
  plan.end_call();
}

void dispatch_backward(Plan& plan, device::Queue& queue, const ParsedTensor& d_received,
                       const ParsedTensor& d_tokens) {
  Matrix d_rows;
  Matrix dx;
  plan.agree(Operation::dispatch_backward, queue, [&] {
    d_rows = float_matrix(d_received.get(), "d_received", plan.received(), plan.hidden());
    dx = float_matrix(d_tokens.get(), "d_tokens", plan.tokens(), plan.hidden());
    check_disjoint(dx, "d_tokens", d_rows, "d_received");
  });
  const TensorView rows = plan.send_scratch();
  plan.to_tokens(d_rows.view, rows, [&](std::int64_t first, std::int64_t count) {
    device::pair_rows_sum(plan.k(), plan.hidden(), rows, pairs_of(plan, plan.pair_rows(), first, count), TensorView{},
                          rows_of(plan, dx.view, first, count));
  });
  plan.end_call();
}

}  // namespace dtrain::parallel::moe
