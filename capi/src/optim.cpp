// Optimizers: dt_optimizer over optim::Optimizer. With a communicator in the
// options, the squared gradient norm is summed over its ranks (sharded
// tensors) by a blocking allreduce.
#include <cstdint>
#include <memory>

#include "base/error.hpp"
#include "device/probe.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "optim/config.hpp"
#include "optim/optimizer.hpp"
#include "optim/param_tensors.hpp"
#include "step_info.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;

struct dt_optimizer {
  std::unique_ptr<dtrain::optim::Optimizer> impl;
};

namespace {

// The communicator is held, not borrowed, so that an optimizer outliving its
// dt_comm fails its steps with DT_ERR_ABORTED instead of touching freed memory.
dtrain::optim::Optimizer::NormReducer sum_over(std::shared_ptr<dtrain::comm::Communicator> comm) {
  return [comm = std::move(comm)](double local) { return dtrain::comm::sum_over_ranks(*comm, local); };
}

}  // namespace

extern "C" {

DT_API dt_status dt_optimizer_options_init(dt_optimizer_options* opts, unsigned version) {
  return entry([&] { dtrain::optim::init_optimizer_options(opts, version); });
}

DT_API dt_status dt_optimizer_create(dt_optimizer** out, DLTensor* params, DLTensor* grads, size_t n,
                                     const dt_optimizer_options* opts) {
  return entry([&] {
    require(out, "out");
    const dtrain::optim::Config config = dtrain::optim::read_config(opts);
    dtrain::optim::Optimizer::NormReducer reducer;
    if (opts != nullptr && opts->comm != nullptr) reducer = sum_over(opts->comm->impl);
    if (params == nullptr) dtrain::raise(DT_ERR_INVALID_ARGUMENT, "params is NULL");
    if (grads == nullptr) dtrain::raise(DT_ERR_INVALID_ARGUMENT, "grads is NULL");
    const dtrain::CudaDevices& cuda = dtrain::device::cuda_devices();
    // Parameters first, so that their problems are reported first.
    const auto checked_params = dtrain::check_tensor_array(params, n, "params", cuda);
    const auto checked_grads = dtrain::check_tensor_array(grads, n, "grads", cuda);
    auto impl = std::make_unique<dtrain::optim::Optimizer>(
        config, dtrain::optim::check_param_tensors(checked_params, checked_grads), std::move(reducer));
    *out = new dt_optimizer{std::move(impl)};
  });
}

DT_API dt_status dt_optimizer_step(dt_optimizer* opt, dt_optimizer_step_info* info) {
  return entry([&] {
    require(opt, "opt");
    dtrain::capi::check_step_info(info);
    dtrain::capi::write_step_info(opt->impl->step(), info);
  });
}

DT_API dt_status dt_optimizer_zero_grad(dt_optimizer* opt) {
  return entry([&] { require(opt, "opt")->impl->zero_grad(); });
}

DT_API dt_status dt_optimizer_set_lr(dt_optimizer* opt, float lr) {
  return entry([&] { require(opt, "opt")->impl->set_lr(lr); });
}

DT_API dt_status dt_optimizer_lr(const dt_optimizer* opt, float* out) {
  return entry([&] {
    require(opt, "opt");
    *require(out, "out") = opt->impl->lr();
  });
}

DT_API dt_status dt_optimizer_loss_scale(const dt_optimizer* opt, float* out) {
  return entry([&] {
    require(opt, "opt");
    *require(out, "out") = opt->impl->loss_scale();
  });
}

DT_API dt_status dt_optimizer_destroy(dt_optimizer* opt) {
  return entry([&] { delete opt; });
}

}  // extern "C"
