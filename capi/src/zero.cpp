// ZeRO: dt_zero over parallel::zero::Zero, and its checkpoints through
// parallel::zero::save_checkpoint / load_checkpoint.
//
// Creation, save and load are collective. What only this layer can refuse
// (a NULL `out`, array or directory, an options version it does not know)
// still takes part in the ranks' agreement, so the others get
// DT_ERR_MISMATCH instead of waiting (refusal.hpp).
#include "dtrain/zero.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/options.hpp"
#include "arguments.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "optim/config.hpp"
#include "parallel/zero/checkpoint.hpp"
#include "parallel/zero/zero.hpp"
#include "refusal.hpp"
#include "step_info.hpp"
#include "zero_memory.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;
namespace zero = dtrain::parallel::zero;

// The communicators are held, not borrowed: a dt_zero that outlives its
// dt_comm (or the model's, optim->comm) fails the calls that communicate with
// DT_ERR_ABORTED instead of touching freed memory. `impl` is declared after
// them so that it is destroyed first.
struct dt_zero {
  std::shared_ptr<dtrain::comm::Communicator> comm;
  std::shared_ptr<dtrain::comm::Communicator> model_comm;  // optim->comm, or null
  std::unique_ptr<zero::Zero> impl;
};

namespace {

// Size of each released version of dt_zero_options; index = version.
constexpr std::size_t kOptionsSizes[] = {0, offsetof(dt_zero_options, stream),
                                         offsetof(dt_zero_options, norm_excluded), sizeof(dt_zero_options)};

constexpr dt_zero_options kDefaultOptions = DT_ZERO_OPTIONS_INIT;

const dtrain::parallel::common::AgreementSubject kSave{"checkpoint save", "directory"};
const dtrain::parallel::common::AgreementSubject kLoad{"checkpoint load", "directory"};

zero::Options read_zero_options(const dt_zero_options* user) {
  const dt_zero_options opts = dtrain::read_options(user, kDefaultOptions, kOptionsSizes, "opts");
  zero::Options result;
  if (opts.stage != DT_UNDEF) result.stage = opts.stage;
  if (opts.bucket_bytes != static_cast<std::int64_t>(DT_UNDEF)) result.bucket_bytes = opts.bucket_bytes;
  if (opts.unit_sizes != nullptr) {
    result.unit_sizes.emplace(opts.unit_sizes, opts.unit_sizes + opts.unit_count);
  } else if (opts.unit_count != 0) {
    dtrain::raise(DT_ERR_INVALID_ARGUMENT,
                  "opts->unit_sizes is NULL but unit_count = " + std::to_string(opts.unit_count));
  }
  if (opts.prefetch != DT_UNDEF) result.prefetch = opts.prefetch != 0;
  result.stream = opts.stream;
  if (opts.norm_excluded != nullptr) {
    result.norm_excluded.assign(opts.norm_excluded, opts.norm_excluded + opts.norm_excluded_count);
  } else if (opts.norm_excluded_count != 0) {
    dtrain::raise(DT_ERR_INVALID_ARGUMENT,
                  "opts->norm_excluded is NULL but norm_excluded_count = " + std::to_string(opts.norm_excluded_count));
  }
  return result;
}

// Save and load are collective: every rank first says whether it has a
// directory, so that a NULL on one rank fails all of them at once.
std::string agreed_directory(dtrain::comm::Communicator& comm, const dtrain::parallel::common::AgreementSubject& subject,
                             const char* dir) {
  std::exception_ptr failure;
  try {
    require(dir, "dir");
  } catch (const dtrain::Error&) {
    failure = std::current_exception();
  }
  dtrain::parallel::common::agree_on_layout(comm, subject, {}, {}, failure);
  return dir;
}

}  // namespace

extern "C" {

DT_API dt_status dt_zero_options_init(dt_zero_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_zero_create(dt_zero** out, dt_comm* comm, const DLTensor* const* params, size_t n,
                                const dt_optimizer_options* optim, const dt_zero_options* opts) {
  return entry([&] {
    require(comm, "comm");
    std::shared_ptr<dtrain::comm::Communicator> held = comm->impl;
    std::shared_ptr<dtrain::comm::Communicator> model_comm;
    dtrain::optim::Config config;
    zero::Options options;
    try {
      require(out, "out");
      config = dtrain::optim::read_config(optim);
      options = read_zero_options(opts);
      if (optim != nullptr && optim->comm != nullptr) {
        model_comm = optim->comm->impl;
        options.model_comm = model_comm.get();
      }
    } catch (const dtrain::Error&) {
      dtrain::capi::refuse_together(*held, zero::kCreationSubject, zero::creation_settings({}, {}),
                                    std::current_exception());
    }
    auto impl = std::make_unique<zero::Zero>(*held, dtrain::capi::tensor_list(params, n, "params", "params"), config,
                                             options);
    *out = new dt_zero{std::move(held), std::move(model_comm), std::move(impl)};
  });
}

DT_API dt_status dt_zero_destroy(dt_zero* z) {
  return entry([&] { delete z; });
}

DT_API dt_status dt_zero_parameter(dt_zero* z, size_t index, DLTensor* out) {
  return entry([&] {
    require(z, "z");
    require(out, "out");
    const std::vector<std::int64_t>& shape = z->impl->shape(index);
    *out = dtrain::capi::describe(z->impl->parameter(index), shape.data(), static_cast<int>(shape.size()));
  });
}

DT_API dt_status dt_zero_gradient(dt_zero* z, size_t index, DLTensor* out) {
  return entry([&] {
    require(z, "z");
    require(out, "out");
    const std::vector<std::int64_t>& shape = z->impl->shape(index);
    *out = dtrain::capi::describe(z->impl->gradient(index), shape.data(), static_cast<int>(shape.size()));
  });
}

DT_API dt_status dt_zero_mark_ready(dt_zero* z, size_t index) {
  return entry([&] { require(z, "z")->impl->mark_ready(index); });
}

DT_API dt_status dt_zero_wait(dt_zero* z, int timeout_ms) {
  return entry([&] { require(z, "z")->impl->wait(timeout_ms); });
}

DT_API dt_status dt_zero_set_sync(dt_zero* z, int sync) {
  return entry([&] { require(z, "z")->impl->set_sync(sync != 0); });
}

DT_API dt_status dt_zero_step(dt_zero* z, dt_optimizer_step_info* info) {
  return entry([&] {
    require(z, "z");
    dtrain::capi::check_step_info(info);
    dtrain::capi::write_step_info(z->impl->step(), info);
  });
}

DT_API dt_status dt_zero_gather(dt_zero* z, size_t unit) {
  return entry([&] { require(z, "z")->impl->gather(unit); });
}

DT_API dt_status dt_zero_gather_wait(dt_zero* z, size_t unit, int timeout_ms) {
  return entry([&] { require(z, "z")->impl->gather_wait(unit, timeout_ms); });
}

DT_API dt_status dt_zero_release(dt_zero* z, size_t unit) {
  return entry([&] { require(z, "z")->impl->release(unit); });
}

DT_API dt_status dt_zero_unit_count(const dt_zero* z, size_t* out) {
  return entry([&] {
    require(z, "z");
    *require(out, "out") = z->impl->unit_count();
  });
}

DT_API dt_status dt_zero_set_lr(dt_zero* z, float lr) {
  return entry([&] { require(z, "z")->impl->set_lr(lr); });
}

DT_API dt_status dt_zero_loss_scale(const dt_zero* z, float* out) {
  return entry([&] {
    require(z, "z");
    *require(out, "out") = z->impl->loss_scale();
  });
}

DT_API dt_status dt_zero_memory_usage(const dt_zero* z, dt_zero_memory* out) {
  return entry([&] {
    require(z, "z");
    require(out, "out");
    dtrain::capi::check_zero_memory(out);
    dtrain::capi::write_zero_memory(z->impl->memory_usage(), out);
  });
}

DT_API dt_status dt_zero_save(dt_zero* z, const char* dir) {
  return entry([&] {
    require(z, "z");
    const std::string path = agreed_directory(*z->comm, kSave, dir);
    zero::save_checkpoint(*z->comm, z->impl->checkpoint_view(zero::Zero::ViewFor::save), path);
  });
}

DT_API dt_status dt_zero_load(dt_zero* z, const char* dir) {
  return entry([&] {
    require(z, "z");
    const std::string path = agreed_directory(*z->comm, kLoad, dir);
    z->impl->restore(zero::load_checkpoint(*z->comm, z->impl->checkpoint_view(zero::Zero::ViewFor::load), path));
  });
}

}  // extern "C"
