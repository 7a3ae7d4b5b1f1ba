// Data parallelism: dt_ddp over parallel::ddp::DataParallel, and
// dt_ddp_broadcast_parameters over parallel::ddp::broadcast_parameters.
//
// Creation and the broadcast are collective, and a rank that refuses its own
// arguments must still tell the others, or they would wait for collectives
// that never come. The core does that for what it checks (tensors, option
// values, the root); what only this layer can see (a NULL `out` or array, an
// options version this library does not know) is reported the same way, by
// taking part in the agreement with a local failure (refusal.hpp).
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "base/options.hpp"
#include "dtrain/ddp.h"
#include "entry.hpp"
#include "arguments.hpp"
#include "handles.hpp"
#include "refusal.hpp"
#include "parallel/common/agreement.hpp"
#include "parallel/ddp/broadcast.hpp"
#include "parallel/ddp/data_parallel.hpp"
#include "parallel/ddp/options.hpp"

using dtrain::capi::entry;
using dtrain::capi::refuse_together;
using dtrain::capi::require;
namespace common = dtrain::parallel::common;
namespace ddp = dtrain::parallel::ddp;

// The communicator is held, not borrowed: a DDP that outlives its dt_comm
// fails the calls that communicate with DT_ERR_ABORTED instead of touching
// freed memory. `impl` is declared after `comm` so that it is destroyed first.
struct dt_ddp {
  std::shared_ptr<dtrain::comm::Communicator> comm;
  std::unique_ptr<ddp::DataParallel> impl;
};

namespace {

// Size of each released version of dt_ddp_options; index = version.
constexpr std::size_t kOptionsSizes[] = {0, offsetof(dt_ddp_options, stream), sizeof(dt_ddp_options)};

constexpr dt_ddp_options kDefaultOptions = DT_DDP_OPTIONS_INIT;

// The subject and settings DataParallel agrees on. refuse_together() must
// send as many settings as it does, so that its allgather has the size of
// its own; the values are not looked at.
const common::AgreementSubject kCreation{"DDP creation", "gradient"};
const std::vector<common::Setting> kCreationSettings{
    {"bucket_bytes", 0}, {"compression", 0}, {"find_unused", 0}, {"weighted", 0}};

bool read_flag(int value) { return value != DT_UNDEF && value != 0; }

// The options every rank agrees on; `stream` is read apart, being each rank's own.
ddp::Options core_options(const dt_ddp_options& opts) {
  ddp::Options result;
  if (opts.bucket_bytes != static_cast<std::int64_t>(DT_UNDEF)) result.bucket_bytes = opts.bucket_bytes;
  // Read as an int (a C caller may pass any): the core refuses values that
  // are not a dt_ddp_compression, collectively.
  const int compression = dtrain::enum_value(opts.compression);
  result.compression =
      compression == DT_UNDEF ? ddp::Compression::none : static_cast<ddp::Compression>(compression);
  result.find_unused = read_flag(opts.find_unused);
  result.weighted = read_flag(opts.weighted);
  return result;
}

dt_bucket_state to_c(ddp::BucketState state) {
  switch (state) {
    case ddp::BucketState::waiting: return DT_BUCKET_WAITING;
    case ddp::BucketState::in_flight: return DT_BUCKET_IN_FLIGHT;
    case ddp::BucketState::reduced: return DT_BUCKET_REDUCED;
    case ddp::BucketState::failed: return DT_BUCKET_FAILED;
  }
  dtrain::raise(DT_ERR_INTERNAL, "unknown bucket state " + std::to_string(static_cast<int>(state)));
}

}  // namespace

extern "C" {

DT_API dt_status dt_ddp_options_init(dt_ddp_options* opts, unsigned version) {
  return entry([&] { dtrain::init_options(opts, version, kDefaultOptions, kOptionsSizes, "opts"); });
}

DT_API dt_status dt_ddp_create(dt_ddp** out, dt_comm* comm, const DLTensor* const* grads, size_t n,
                               const dt_ddp_options* opts) {
  return entry([&] {
    require(comm, "comm");
    std::shared_ptr<dtrain::comm::Communicator> held = comm->impl;
    dt_ddp_options options = kDefaultOptions;
    try {
      require(out, "out");
      options = dtrain::read_options(opts, kDefaultOptions, kOptionsSizes, "options");
    } catch (const dtrain::Error&) {
      refuse_together(*held, kCreation, kCreationSettings, std::current_exception());
    }
    auto impl = std::make_unique<ddp::DataParallel>(*held, dtrain::capi::tensor_list(grads, n, "grads", "gradients"),
                                                 core_options(options), options.stream);
    *out = new dt_ddp{std::move(held), std::move(impl)};
  });
}

DT_API dt_status dt_ddp_destroy(dt_ddp* ddp) {
  return entry([&] { delete ddp; });
}

DT_API dt_status dt_ddp_mark_ready(dt_ddp* ddp, size_t index) {
  return entry([&] { require(ddp, "ddp")->impl->mark_ready(index); });
}

DT_API dt_status dt_ddp_set_sync(dt_ddp* ddp, int sync) {
  return entry([&] { require(ddp, "ddp")->impl->set_sync(sync != 0); });
}

DT_API dt_status dt_ddp_set_local_weight(dt_ddp* ddp, double weight) {
  return entry([&] { require(ddp, "ddp")->impl->set_local_weight(weight); });
}

DT_API dt_status dt_ddp_wait(dt_ddp* ddp, int timeout_ms) {
  return entry([&] { require(ddp, "ddp")->impl->wait(timeout_ms); });
}

DT_API dt_status dt_ddp_bucket_count(const dt_ddp* ddp, size_t* out) {
  return entry([&] {
    require(ddp, "ddp");
    *require(out, "out") = ddp->impl->bucket_count();
  });
}

DT_API dt_status dt_ddp_bucket_of(const dt_ddp* ddp, size_t index, size_t* out) {
  return entry([&] {
    require(ddp, "ddp");
    require(out, "out");
    *out = ddp->impl->bucket_of(index);
  });
}

DT_API dt_status dt_ddp_bucket_state(const dt_ddp* ddp, size_t bucket, dt_bucket_state* out) {
  return entry([&] {
    require(ddp, "ddp");
    require(out, "out");
    *out = to_c(ddp->impl->bucket_state(bucket));
  });
}

DT_API dt_status dt_ddp_broadcast_parameters(dt_comm* comm, DLTensor* const* params, size_t n, int root) {
  return entry([&] {
    require(comm, "comm");
    dtrain::comm::Communicator& communicator = *comm->impl;
    ddp::broadcast_parameters(communicator, dtrain::capi::tensor_list(params, n, "params", "parameters"), root);
  });
}

}  // extern "C"
