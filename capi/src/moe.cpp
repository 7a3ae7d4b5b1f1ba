// Expert parallelism (dtrain/moe.h): routing and the auxiliary losses are
// local calls on checked matrices, computed on the host (HostStaging copies
// device tensors there and back); the plan and the exchanges over it are
// collective, run where their tensors are (PlacedCall), and check their
// arguments inside the core's agreement so that a rank refusing its own
// still tells the others. The built-in experts run where their tensors are.
#include "dtrain/moe.h"

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "base/options.hpp"
#include "arguments.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "host_staging.hpp"
#include "placed_call.hpp"
#include "parallel/moe/aux_losses.hpp"
#include "parallel/moe/dispatch.hpp"
#include "parallel/moe/experts.hpp"
#include "parallel/moe/matrix.hpp"
#include "parallel/moe/plan.hpp"
#include "parallel/moe/router.hpp"

using dtrain::capi::entry;
using dtrain::capi::HostStaging;
using dtrain::capi::PlacedCall;
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

// `tensor`, placed through `call`, with its layout.
dtrain::CheckedTensor placed(PlacedCall& call, const DLTensor* tensor, const char* name) {
  return dtrain::with_layout(tensor, call.view(tensor, name));
}

// The same for a collective call: a refusal is kept for the agreement.
dtrain::ParsedTensor parsed(PlacedCall& call, const DLTensor* tensor, const char* name) {
  return dtrain::parse([&] { return placed(call, tensor, name); });
}

// An index tensor read on the host: used in place in host memory, else
// staged (and then in the call's place).
dtrain::CheckedTensor host_indices(HostStaging& host, const DLTensor* tensor, const char* name) {
  const dtrain::TensorView view = dtrain::capi::view_of(tensor, name);
  return view.memory == dtrain::Memory::host ? dtrain::with_layout(tensor, view) : host.input(tensor, name);
}

// The experts' operands, parsed in order: counts read on the host, the
// others where `call` places them.
moe::ExpertBlocks read_expert_blocks(PlacedCall& call, HostStaging& host, const DLTensor* x, const DLTensor* counts,
                                     const DLTensor* w1, const DLTensor* w2, dt_moe_activation activation) {
  const dtrain::CheckedTensor rows = placed(call, x, "x");
  const dtrain::CheckedTensor per_expert = host_indices(host, counts, "counts");
  const dtrain::CheckedTensor first = placed(call, w1, "w1");
  const dtrain::CheckedTensor second = placed(call, w2, "w2");
  return moe::read_expert_blocks(rows, per_expert, first, second, dtrain::enum_value(activation));
}

moe::Plan& plan_of(dt_moe_plan* plan) { return *require(plan, "plan")->impl; }
const moe::Plan& plan_of(const dt_moe_plan* plan) { return *require(plan, "plan")->impl; }

// One of the plan's collective calls: its tensors, named, parsed in order
// where the call places them (a refusal kept for the agreement), then
// `run(plan, queue, parsed)` on the call's queue, whose work the call waits
// for.
template <typename Run>
dt_status exchange(dt_moe_plan* plan, std::initializer_list<std::pair<const DLTensor*, const char*>> tensors,
                   Run run) {
  return entry([&] {
    moe::Plan& p = plan_of(plan);
    PlacedCall call(&p.communicator());
    std::vector<dtrain::ParsedTensor> parsed_tensors;
    parsed_tensors.reserve(tensors.size());
    for (const auto& [tensor, name] : tensors) parsed_tensors.push_back(parsed(call, tensor, name));
    run(p, call.queue(), parsed_tensors);
    call.finish();
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_moe_options_init(dt_moe_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_moe_route(const DLTensor* logits, const dt_moe_options* opts, DLTensor* weights,
                              DLTensor* experts, int64_t* dropped) {
  return entry([&] {
    const moe::Options options = read_moe_options(opts);
    PlacedCall call;
    HostStaging host(call);
    const moe::Matrix x = moe::float_matrix(host.input(logits, "logits"), "logits", -1, options.experts);
    const moe::Matrix w = moe::float_matrix(host.output(weights, "weights"), "weights", x.rows, options.k);
    const moe::Matrix e = moe::index_matrix(host.output(experts, "experts"), "experts", x.rows, options.k);
    moe::check_disjoint(w, "weights", x, "logits");
    moe::check_disjoint(e, "experts", x, "logits");
    moe::check_disjoint(e, "experts", w, "weights");
    const std::int64_t count = moe::route(options, x, w, e);
    host.finish();
    if (dropped != nullptr) *dropped = count;
  });
}

DT_API dt_status dt_moe_route_backward(const DLTensor* logits, const DLTensor* d_weights,
                                       const dt_moe_options* opts, DLTensor* d_logits) {
  return entry([&] {
    const moe::Options options = read_moe_options(opts);
    PlacedCall call;
    HostStaging host(call);
    const moe::Matrix x = moe::float_matrix(host.input(logits, "logits"), "logits", -1, options.experts);
    const moe::Matrix dw = moe::float_matrix(host.input(d_weights, "d_weights"), "d_weights", x.rows, options.k);
    const moe::Matrix dx = moe::float_matrix(host.output(d_logits, "d_logits"), "d_logits", x.rows, options.experts);
    moe::check_disjoint(dx, "d_logits", x, "logits");
    moe::check_disjoint(dx, "d_logits", dw, "d_weights");
    moe::route_backward(options, x, dw, dx);
    host.finish();
  });
}

DT_API dt_status dt_moe_balance_loss(const DLTensor* logits, const dt_moe_options* opts, double coeff,
                                     double* loss, DLTensor* counts, DLTensor* d_logits) {
  return entry([&] {
    const moe::Options options = read_moe_options(opts);
    PlacedCall call;
    HostStaging host(call);
    const moe::Matrix x = moe::float_matrix(host.input(logits, "logits"), "logits", -1, options.experts);
    require(loss, "loss");
    moe::Matrix c;
    moe::Matrix dx;
    if (counts != nullptr) c = moe::index_vector(host.output(counts, "counts"), "counts", options.experts);
    if (d_logits != nullptr) {
      dx = moe::float_matrix(host.output(d_logits, "d_logits"), "d_logits", x.rows, options.experts);
      moe::check_disjoint(dx, "d_logits", x, "logits");
    }
    const double value = moe::balance_loss(options, x, coeff, counts ? &c : nullptr, d_logits ? &dx : nullptr);
    host.finish();
    *loss = value;
  });
}

DT_API dt_status dt_moe_z_loss(const DLTensor* logits, double coeff, double* loss, DLTensor* d_logits) {
  return entry([&] {
    PlacedCall call;
    HostStaging host(call);
    const moe::Matrix x = moe::float_matrix(host.input(logits, "logits"), "logits", -1, -1);
    if (x.cols < 1) dtrain::raise(DT_ERR_INVALID_ARGUMENT, "logits has no columns; it must be [T, E] with E >= 1");
    require(loss, "loss");
    moe::Matrix dx;
    if (d_logits != nullptr) {
      dx = moe::float_matrix(host.output(d_logits, "d_logits"), "d_logits", x.rows, x.cols);
      moe::check_disjoint(dx, "d_logits", x, "logits");
    }
    const double value = moe::z_loss(x, coeff, d_logits ? &dx : nullptr);
    host.finish();
    *loss = value;
  });
}

DT_API dt_status dt_moe_plan_create(dt_moe_plan** out, dt_comm* ep, const DLTensor* experts, int64_t hidden,
                                    const dt_moe_options* opts) {
  return entry([&] {
    PlacedCall call;
    HostStaging host(call);
    auto plan = moe::Plan::create(require(ep, "ep")->impl, [&] {
      require(out, "out");
      const moe::Options options = read_moe_options(opts);
      return moe::Routing{options.experts,
                          moe::index_matrix(host_indices(host, experts, "experts"), "experts", -1, options.k), hidden};
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
  return exchange(plan, {{tokens, "tokens"}, {received, "received"}}, [](moe::Plan& p, auto& queue, const auto& t) {
    moe::dispatch(p, queue, t[0], t[1]);
  });
}

DT_API dt_status dt_moe_combine(dt_moe_plan* plan, const DLTensor* expert_out, const DLTensor* weights,
                                DLTensor* output) {
  return exchange(plan, {{expert_out, "expert_out"}, {weights, "weights"}, {output, "output"}},
                  [](moe::Plan& p, auto& queue, const auto& t) { moe::combine(p, queue, t[0], t[1], t[2]); });
}

DT_API dt_status dt_moe_combine_backward(dt_moe_plan* plan, const DLTensor* d_out, const DLTensor* weights,
                                         DLTensor* d_expert_out, DLTensor* d_weights) {
  return exchange(plan,
                  {{d_out, "d_out"}, {weights, "weights"}, {d_expert_out, "d_expert_out"}, {d_weights, "d_weights"}},
                  [](moe::Plan& p, auto& queue, const auto& t) {
                    moe::combine_backward(p, queue, t[0], t[1], t[2], t[3]);
                  });
}

DT_API dt_status dt_moe_dispatch_backward(dt_moe_plan* plan, const DLTensor* d_received, DLTensor* d_tokens) {
  return exchange(plan, {{d_received, "d_received"}, {d_tokens, "d_tokens"}},
                  [](moe::Plan& p, auto& queue, const auto& t) { moe::dispatch_backward(p, queue, t[0], t[1]); });
}

DT_API dt_status dt_moe_experts_forward(const DLTensor* x, const DLTensor* counts, const DLTensor* w1,
                                        const DLTensor* w2, dt_moe_activation activation, DLTensor* hidden,
                                        DLTensor* y) {
  return entry([&] {
    PlacedCall call;
    HostStaging host(call);
    const moe::ExpertBlocks blocks = read_expert_blocks(call, host, x, counts, w1, w2, activation);
    const moe::Matrix pre = moe::float_matrix(placed(call, hidden, "hidden"), "hidden", blocks.x.rows, blocks.inner);
    const moe::Matrix out = moe::float_matrix(placed(call, y, "y"), "y", blocks.x.rows, blocks.hidden);
    const std::pair<const moe::Matrix*, const char*> inputs[] = {
        {&blocks.x, "x"}, {&blocks.w1, "w1"}, {&blocks.w2, "w2"}};
    for (const auto& [input, name] : inputs) {
      moe::check_disjoint(pre, "hidden", *input, name);
      moe::check_disjoint(out, "y", *input, name);
    }
    moe::check_disjoint(out, "y", pre, "hidden");
    moe::experts_forward(blocks, call.queue(), pre, out);
    call.finish();
  });
}

DT_API dt_status dt_moe_experts_backward(const DLTensor* x, const DLTensor* counts, const DLTensor* w1,
                                         const DLTensor* w2, dt_moe_activation activation, const DLTensor* hidden,
                                         const DLTensor* dy, DLTensor* dx, DLTensor* dw1, DLTensor* dw2) {
  return entry([&] {
    PlacedCall call;
    HostStaging host(call);
    const moe::ExpertBlocks blocks = read_expert_blocks(call, host, x, counts, w1, w2, activation);
    const std::int64_t experts = static_cast<std::int64_t>(blocks.counts.size());
    const moe::Matrix pre = moe::float_matrix(placed(call, hidden, "hidden"), "hidden", blocks.x.rows, blocks.inner);
    const moe::Matrix grad = moe::float_matrix(placed(call, dy, "dy"), "dy", blocks.x.rows, blocks.hidden);
    const moe::Matrix d_x = moe::float_matrix(placed(call, dx, "dx"), "dx", blocks.x.rows, blocks.hidden);
    const moe::Matrix d_w1 = moe::float_stack(placed(call, dw1, "dw1"), "dw1", experts, blocks.hidden, blocks.inner);
    const moe::Matrix d_w2 = moe::float_stack(placed(call, dw2, "dw2"), "dw2", experts, blocks.inner, blocks.hidden);
    const std::pair<const moe::Matrix*, const char*> inputs[] = {
        {&blocks.x, "x"}, {&blocks.w1, "w1"}, {&blocks.w2, "w2"}, {&pre, "hidden"}, {&grad, "dy"}};
    const std::pair<const moe::Matrix*, const char*> outputs[] = {{&d_x, "dx"}, {&d_w1, "dw1"}, {&d_w2, "dw2"}};
    for (const auto& [output, output_name] : outputs) {
      for (const auto& [input, input_name] : inputs) moe::check_disjoint(*output, output_name, *input, input_name);
    }
    moe::check_disjoint(d_x, "dx", d_w1, "dw1");
    moe::check_disjoint(d_x, "dx", d_w2, "dw2");
    moe::check_disjoint(d_w1, "dw1", d_w2, "dw2");
    moe::experts_backward(blocks, call.queue(), pre, grad, d_x, d_w1, d_w2);
    call.finish();
  });
}

}  // extern "C"
