// The pipeline executor: dt_pipeline over parallel::pipeline::Executor. The
// trainer's C callbacks become the executor's stage functions here, so the
// core never sees a C function pointer or a DLTensor.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/dtype.hpp"
#include "base/error.hpp"
#include "base/options.hpp"
#include "dtrain/pipeline.h"
#include "arguments.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "parallel/pipeline/executor.hpp"

using dtrain::TensorView;
using dtrain::capi::entry;
using dtrain::capi::require;
namespace pipeline = dtrain::parallel::pipeline;

struct dt_pipeline {
  std::unique_ptr<pipeline::Executor> impl;
};

namespace {

// Size of each released version of the structs; index = version.
constexpr std::size_t kOptionsSizes[] = {0, sizeof(dt_pipeline_options)};
constexpr std::size_t kStepInfoSizes[] = {0, sizeof(dt_pipeline_step_info)};

constexpr dt_pipeline_options kDefaultOptions = DT_PIPELINE_OPTIONS_INIT;

[[noreturn]] void refuse(const std::string& message) { dtrain::raise(DT_ERR_INVALID_ARGUMENT, message); }

pipeline::ActivationSpec activation_of(const dt_pipeline_options& opts) {
  if (opts.activation_elements < 1) {
    refuse("opts->activation_elements = " + std::to_string(opts.activation_elements) + " is below 1");
  }
  const auto dtype = dtrain::dtype_from_dlpack(opts.activation_dtype);
  if (!dtype) {
    refuse("opts->activation_dtype " + dtrain::describe_dlpack_dtype(opts.activation_dtype) +
           " is not one libdtrain accepts");
  }
  return {opts.activation_elements, *dtype};
}

// The one-dimensional DLTensor a stage function is handed for a view, or
// NULL for none.
class Flat {
 public:
  explicit Flat(const TensorView* view) {
    if (view == nullptr) return;
    elements_ = view->count;
    tensor_ = dtrain::capi::describe(*view, &elements_, 1);
  }
  Flat(const Flat&) = delete;
  Flat& operator=(const Flat&) = delete;
  DLTensor* get() { return tensor_ ? &*tensor_ : nullptr; }

 private:
  std::int64_t elements_ = 0;
  std::optional<DLTensor> tensor_;
};

pipeline::StageFunctions functions_of(const dt_pipeline_options& opts, pipeline::ScheduleKind kind) {
  require(opts.forward, "opts->forward");
  require(opts.backward, "opts->backward");
  const bool split_backward = kind == pipeline::ScheduleKind::zb_h1;
  if (split_backward && opts.backward_weight == nullptr) {
    refuse("opts->backward_weight is NULL but a ZB_H1 schedule runs BACKWARD_WEIGHT actions");
  }
  if (!split_backward && opts.backward_weight != nullptr) {
    refuse("opts->backward_weight is set but only a ZB_H1 schedule runs BACKWARD_WEIGHT actions");
  }
  pipeline::StageFunctions functions;
  functions.forward = [f = opts.forward, user = opts.user](int chunk, int microbatch, const TensorView* input,
                                                           const TensorView* output) {
    Flat in(input);
    Flat out(output);
    return f(user, chunk, microbatch, in.get(), out.get());
  };
  functions.backward = [f = opts.backward, user = opts.user](int chunk, int microbatch,
                                                             const TensorView* grad_output,
                                                             const TensorView* grad_input) {
    Flat out(grad_output);
    Flat in(grad_input);
    return f(user, chunk, microbatch, out.get(), in.get());
  };
  if (opts.backward_weight != nullptr) {
    functions.backward_weight = [f = opts.backward_weight, user = opts.user](int chunk, int microbatch) {
      return f(user, chunk, microbatch);
    };
  }
  if (opts.chunk_done != nullptr) {
    functions.chunk_done = [f = opts.chunk_done, user = opts.user](int chunk) { return f(user, chunk); };
  }
  return functions;
}

void write_step_info(const pipeline::StepStats& stats, dt_pipeline_step_info* info) {
  if (info == nullptr) return;
  // Version 1 is every field there is so far.
  info->step_seconds = stats.step_seconds;
  info->recv_wait_seconds = stats.recv_wait_seconds;
  info->comm_wait_seconds = stats.comm_wait_seconds;
  info->bubble_fraction = stats.bubble_fraction();
  info->peak_in_flight = stats.peak_in_flight;
}

}  // namespace

extern "C" {

DT_API dt_status dt_pipeline_options_init(dt_pipeline_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_pipeline_create(dt_pipeline** out, dt_comm* comm, const dt_pipeline_schedule* schedule,
                                    const dt_pipeline_options* opts) {
  return entry([&] {
    require(out, "out");
    require(comm, "comm");
    require(schedule, "schedule");
    require(opts, "opts");
    const dt_pipeline_options options = dtrain::read_options(opts, kDefaultOptions, kOptionsSizes, "opts");
    const pipeline::ActivationSpec activation = activation_of(options);
    pipeline::StageFunctions functions = functions_of(options, schedule->impl.kind());
    auto executor =
        std::make_unique<pipeline::Executor>(comm->impl, schedule->impl, activation, std::move(functions));
    *out = new dt_pipeline{std::move(executor)};
  });
}

DT_API dt_status dt_pipeline_destroy(dt_pipeline* p) {
  return entry([&] { delete p; });
}

DT_API dt_status dt_pipeline_step(dt_pipeline* p, dt_pipeline_step_info* info) {
  return entry([&] {
    require(p, "p");
    if (info != nullptr) {
      dtrain::check_output_version(info->version, kStepInfoSizes, "info", "DT_PIPELINE_STEP_INFO_INIT");
    }
    write_step_info(p->impl->step(), info);
  });
}

}  // extern "C"
