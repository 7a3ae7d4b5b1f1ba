// Expert parallelism (dtrain/moe.h): routing and the auxiliary losses are
// local calls on checked matrices; the plan and the exchanges over it are
// collective, and check their arguments inside the core's agreement so that
// a rank refusing its own still tells the others.
#include "dtrain/moe.h"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "base/options.hpp"
#include "arguments.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "parallel/moe/aux_losses.hpp"
#include "parallel/moe/dispatch.hpp"
#include "parallel/moe/experts.hpp"
#include "parallel/moe/matrix.hpp"
#include "parallel/moe/plan.hpp"
#include "parallel/moe/router.hpp"

using dtrain::capi::entry;
using dtrain::capi::host_tensor;
using dtrain::capi::parsed_host_tensor;
using dtrain::capi::require;
namespace moe = dtrain::parallel::moe;

struct dt_moe_plan {
  std::unique_ptr<moe::Plan> impl;
};

namespace {

// Size of each released version of dt_moe_options; index = version.
constexpr std::size_t kOptionsSizes[] = {0, sizeof(dt_moe_options)};
constexpr dt_moe_options kDefaultOptions = DT_MOE_OPTIONS_INIT;

// `value`, or `fallback` for DT_UNDEF.
int or_default(int value, int fallback) { return value == DT_UNDEF ? fallback : value; }

moe::Options read_moe_options(const dt_moe_options* user) {
  const dt_moe_options opts = dtrain::read_options(require(user, "opts"), kDefaultOptions, kOptionsSizes, "opts");
  moe::Options result;
  result.experts = opts.num_experts;
  result.k = opts.top_k;
  // Enum fields are read as raw ints: DT_UNDEF, or any int a C caller put there, is no enumerator.
  result.scoring = static_cast<moe::Scoring>(or_default(dtrain::enum_value(opts.scoring), kDefaultOptions.scoring));
  result.normalize = or_default(opts.normalize, kDefaultOptions.normalize) != 0;
  result.capacity_factor = opts.capacity_factor;
  result.drop_policy =
      static_cast<moe::DropPolicy>(or_default(dtrain::enum_value(opts.drop_policy), kDefaultOptions.drop_policy));
  moe::check_options(result);
  return result;
}

// MoE's matrices (parallel/moe/matrix.hpp) from the caller's tensors.
moe::Matrix float_matrix(const DLTensor* tensor, const char* name, std::int64_t rows, std::int64_t cols) {
  return moe::float_matrix(host_tensor(tensor, name), name, rows, cols);
}
moe::Matrix index_matrix(const DLTensor* tensor, const char* name, std::int64_t rows, std::int64_t cols) {
  return moe::index_matrix(host_tensor(tensor, name), name, rows, cols);
}
moe::Matrix index_vector(const DLTensor* tensor, const char* name, std::int64_t length) {
  return moe::index_vector(host_tensor(tensor, name), name, length);
}
moe::Matrix float_stack(const DLTensor* tensor, const char* name, std::int64_t count, std::int64_t rows,
                        std::int64_t cols) {
  return moe::float_stack(host_tensor(tensor, name), name, count, rows, cols);
}

// The experts' operands, parsed in order.
moe::ExpertBlocks read_expert_blocks(const DLTensor* x, const DLTensor* counts, const DLTensor* w1,
                                     const DLTensor* w2, dt_moe_activation activation) {
  const dtrain::CheckedTensor rows = host_tensor(x, "x");
  const dtrain::CheckedTensor per_expert = host_tensor(counts, "counts");
  const dtrain::CheckedTensor first = host_tensor(w1, "w1");
  const dtrain::CheckedTensor second = host_tensor(w2, "w2");
  return moe::read_expert_blocks(rows, per_expert, first, second, dtrain::enum_value(activation));
}

moe::Plan& plan_of(dt_moe_plan* plan) { return *require(plan, "plan")->impl; }
const moe::Plan& plan_of(const dt_moe_plan* plan) { return *require(plan, "plan")->impl; }

}  // namespace

extern "C" {

DT_API dt_status dt_moe_options_init(dt_moe_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_moe_route(const DLTensor* logits, const dt_moe_options* opts, DLTensor* weights,
                              DLTensor* experts, int64_t* dropped) {
  return entry([&] {
    const moe::Options options = read_moe_options(opts);
    const moe::Matrix x = float_matrix(logits, "logits", -1, options.experts);
    const moe::Matrix w = float_matrix(weights, "weights", x.rows, options.k);
    const moe::Matrix e = index_matrix(experts, "experts", x.rows, options.k);
    moe::check_disjoint(w, "weights", x, "logits");
    moe::check_disjoint(e, "experts", x, "logits");
    moe::check_disjoint(e, "experts", w, "weights");
    const std::int64_t count = moe::route(options, x, w, e);
    if (dropped != nullptr) *dropped = count;
  });
}

DT_API dt_status dt_moe_route_backward(const DLTensor* logits, const DLTensor* d_weights,
                                       const dt_moe_options* opts, DLTensor* d_logits) {
  return entry([&] {
    const moe::Options options = read_moe_options(opts);
    const moe::Matrix x = float_matrix(logits, "logits", -1, options.experts);
    const moe::Matrix dw = float_matrix(d_weights, "d_weights", x.rows, options.k);
    const moe::Matrix dx = float_matrix(d_logits, "d_logits", x.rows, options.experts);
    moe::check_disjoint(dx, "d_logits", x, "logits");
    moe::check_disjoint(dx, "d_logits", dw, "d_weights");
    moe::route_backward(options, x, dw, dx);
  });
}

DT_API dt_status dt_moe_balance_loss(const DLTensor* logits, const dt_moe_options* opts, double coeff,
                                     double* loss, DLTensor* counts, DLTensor* d_logits) {
  return entry([&] {
    const moe::Options options = read_moe_options(opts);
    const moe::Matrix x = float_matrix(logits, "logits", -1, options.experts);
    require(loss, "loss");
    moe::Matrix c;
    moe::Matrix dx;
    if (counts != nullptr) c = index_vector(counts, "counts", options.experts);
    if (d_logits != nullptr) {
      dx = float_matrix(d_logits, "d_logits", x.rows, options.experts);
      moe::check_disjoint(dx, "d_logits", x, "logits");
    }
    *loss = moe::balance_loss(options, x, coeff, counts ? &c : nullptr, d_logits ? &dx : nullptr);
  });
}

DT_API dt_status dt_moe_z_loss(const DLTensor* logits, double coeff, double* loss, DLTensor* d_logits) {
  return entry([&] {
    const moe::Matrix x = float_matrix(logits, "logits", -1, -1);
    if (x.cols < 1) dtrain::raise(DT_ERR_INVALID_ARGUMENT, "logits has no columns; it must be [T, E] with E >= 1");
    require(loss, "loss");
    moe::Matrix dx;
    if (d_logits != nullptr) {
      dx = float_matrix(d_logits, "d_logits", x.rows, x.cols);
      moe::check_disjoint(dx, "d_logits", x, "logits");
    }
    *loss = moe::z_loss(x, coeff, d_logits ? &dx : nullptr);
  });
}

DT_API dt_status dt_moe_plan_create(dt_moe_plan** out, dt_comm* ep, const DLTensor* experts, int64_t hidden,
                                    const dt_moe_options* opts) {
  return entry([&] {
    auto plan = moe::Plan::create(require(ep, "ep")->impl, [&] {
      require(out, "out");
      const moe::Options options = read_moe_options(opts);
      return moe::Routing{options.experts, index_matrix(experts, "experts", -1, options.k), hidden};
    });
    *out = new dt_moe_plan{std::move(plan)};
  });
}

DT_API dt_status dt_moe_plan_destroy(dt_moe_plan* plan) {
  return entry([&] { delete plan; });
}

DT_API dt_status dt_moe_plan_local_experts(const dt_moe_plan* plan, int* first, int* count) {
  return entry([&] {
    const moe::Plan& p = plan_of(plan);
    require(first, "first");
    require(count, "count");
    *first = p.first_local_expert();
    *count = p.local_experts();
  });
}

DT_API dt_status dt_moe_plan_received(const dt_moe_plan* plan, int64_t* rows) {
  return entry([&] {
    const moe::Plan& p = plan_of(plan);
    *require(rows, "rows") = p.received();
  });
}

DT_API dt_status dt_moe_plan_expert_counts(const dt_moe_plan* plan, int64_t* counts, int n) {
  return entry([&] {
    const moe::Plan& p = plan_of(plan);
    require(counts, "counts");
    if (n != p.local_experts()) {
      dtrain::raise(DT_ERR_INVALID_ARGUMENT, "n is " + std::to_string(n) + " but this rank has " +
                                                 std::to_string(p.local_experts()) + " local experts");
    }
    std::copy(p.expert_counts().begin(), p.expert_counts().end(), counts);
  });
}

DT_API dt_status dt_moe_dispatch(dt_moe_plan* plan, const DLTensor* tokens, DLTensor* received) {
  return entry([&] {
    moe::dispatch(plan_of(plan), parsed_host_tensor(tokens, "tokens"), parsed_host_tensor(received, "received"));
  });
}

DT_API dt_status dt_moe_combine(dt_moe_plan* plan, const DLTensor* expert_out, const DLTensor* weights,
                                DLTensor* output) {
  return entry([&] {
    moe::combine(plan_of(plan), parsed_host_tensor(expert_out, "expert_out"), parsed_host_tensor(weights, "weights"),
                 parsed_host_tensor(output, "output"));
  });
}

DT_API dt_status dt_moe_combine_backward(dt_moe_plan* plan, const DLTensor* d_out, const DLTensor* weights,
                                         DLTensor* d_expert_out, DLTensor* d_weights) {
  return entry([&] {
    moe::combine_backward(plan_of(plan), parsed_host_tensor(d_out, "d_out"), parsed_host_tensor(weights, "weights"),
                          parsed_host_tensor(d_expert_out, "d_expert_out"),
                          parsed_host_tensor(d_weights, "d_weights"));
  });
}

DT_API dt_status dt_moe_dispatch_backward(dt_moe_plan* plan, const DLTensor* d_received, DLTensor* d_tokens) {
  return entry([&] {
    moe::dispatch_backward(plan_of(plan), parsed_host_tensor(d_received, "d_received"),
                           parsed_host_tensor(d_tokens, "d_tokens"));
  });
}

DT_API dt_status dt_moe_experts_forward(const DLTensor* x, const DLTensor* counts, const DLTensor* w1,
                                        const DLTensor* w2, dt_moe_activation activation, DLTensor* hidden,
                                        DLTensor* y) {
  return entry([&] {
    const moe::ExpertBlocks blocks = read_expert_blocks(x, counts, w1, w2, activation);
    const moe::Matrix pre = float_matrix(hidden, "hidden", blocks.x.rows, blocks.inner);
    const moe::Matrix out = float_matrix(y, "y", blocks.x.rows, blocks.hidden);
    const std::pair<const moe::Matrix*, const char*> inputs[] = {
        {&blocks.x, "x"}, {&blocks.w1, "w1"}, {&blocks.w2, "w2"}};
    for (const auto& [input, name] : inputs) {
      moe::check_disjoint(pre, "hidden", *input, name);
      moe::check_disjoint(out, "y", *input, name);
    }
    moe::check_disjoint(out, "y", pre, "hidden");
    moe::experts_forward(blocks, pre, out);
  });
}

DT_API dt_status dt_moe_experts_backward(const DLTensor* x, const DLTensor* counts, const DLTensor* w1,
                                         const DLTensor* w2, dt_moe_activation activation, const DLTensor* hidden,
                                         const DLTensor* dy, DLTensor* dx, DLTensor* dw1, DLTensor* dw2) {
  return entry([&] {
    const moe::ExpertBlocks blocks = read_expert_blocks(x, counts, w1, w2, activation);
    const std::int64_t experts = static_cast<std::int64_t>(blocks.counts.size());
    const moe::Matrix pre = float_matrix(hidden, "hidden", blocks.x.rows, blocks.inner);
    const moe::Matrix grad = float_matrix(dy, "dy", blocks.x.rows, blocks.hidden);
    const moe::Matrix d_x = float_matrix(dx, "dx", blocks.x.rows, blocks.hidden);
    const moe::Matrix d_w1 = float_stack(dw1, "dw1", experts, blocks.hidden, blocks.inner);
    const moe::Matrix d_w2 = float_stack(dw2, "dw2", experts, blocks.inner, blocks.hidden);
    const std::pair<const moe::Matrix*, const char*> inputs[] = {
        {&blocks.x, "x"}, {&blocks.w1, "w1"}, {&blocks.w2, "w2"}, {&pre, "hidden"}, {&grad, "dy"}};
    const std::pair<const moe::Matrix*, const char*> outputs[] = {{&d_x, "dx"}, {&d_w1, "dw1"}, {&d_w2, "dw2"}};
    for (const auto& [output, output_name] : outputs) {
      for (const auto& [input, input_name] : inputs) moe::check_disjoint(*output, output_name, *input, input_name);
    }
    moe::check_disjoint(d_x, "dx", d_w1, "dw1");
    moe::check_disjoint(d_x, "dx", d_w2, "dw2");
    moe::check_disjoint(d_w1, "dw1", d_w2, "dw2");
    moe::experts_backward(blocks, pre, grad, d_x, d_w1, d_w2);
  });
}

}  // extern "C"
