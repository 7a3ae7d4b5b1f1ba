// Communicator lifetime and queries.
#include <string>

#include "base/enum_value.hpp"
#include "base/options.hpp"
#include "comm/factory.hpp"
#include "entry.hpp"
#include "handles.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;

extern "C" {

DT_API dt_status dt_comm_options_init(dt_comm_options* opts, unsigned version) {
  return entry([&] { dtrain::comm::init_comm_options(opts, version); });
}

DT_API dt_status dt_comm_create(dt_comm** out, const dt_comm_options* opts) {
  return entry([&] {
    require(out, "out");
    auto comm = dtrain::comm::create_communicator(opts);
    *out = new dt_comm{std::move(comm)};
  });
}

DT_API dt_status dt_comm_split(dt_comm** out, dt_comm* parent, int color, int key) {
  return entry([&] {
    require(out, "out");
    require(parent, "parent");
    parent->impl->check_thread("split");
    auto child = parent->impl->split(color, key);
    *out = child ? new dt_comm{std::move(child)} : nullptr;
  });
}

DT_API dt_status dt_comm_bind_thread(dt_comm* comm, int bind) {
  return entry([&] { require(comm, "comm")->impl->bind_thread(bind != 0); });
}

DT_API dt_status dt_comm_rank(const dt_comm* comm, int* out) {
  return entry([&] {
    require(comm, "comm");
    *require(out, "out") = comm->impl->rank();
  });
}

DT_API dt_status dt_comm_size(const dt_comm* comm, int* out) {
  return entry([&] {
    require(comm, "comm");
    *require(out, "out") = comm->impl->size();
  });
}

DT_API dt_status dt_comm_abort(dt_comm* comm) {
  return entry([&] { require(comm, "comm")->impl->abort(); });
}

DT_API dt_status dt_comm_destroy(dt_comm* comm) {
  return entry([&] {
    if (comm == nullptr) return;
    comm->impl->close();
    delete comm;
  });
}

DT_API dt_status dt_comm_stats(const dt_comm* comm, dt_op_kind kind, dt_op_stats* out) {
  return entry([&] {
    require(comm, "comm");
    require(out, "out");
    // Size of each released version of dt_op_stats; index = version.
    constexpr std::size_t kSizes[] = {0, sizeof(dt_op_stats)};
    dtrain::check_output_version(out->version, kSizes, "out", "DT_OP_STATS_INIT");
    const int raw = dtrain::enum_value(kind);
    if (raw < DT_OP_ALL || raw > DT_OP_P2P_GROUP) {
      dtrain::raise(DT_ERR_INVALID_ARGUMENT, "kind " + std::to_string(raw) + " is not a dt_op_kind");
    }
    const dtrain::comm::OpTotals totals = comm->impl->op_log().totals(raw);
    // Version 1 is every field there is so far.
    out->count = totals.count;
    out->failed = totals.failed;
    out->bytes = totals.bytes;
    out->seconds = static_cast<double>(totals.ns) * 1e-9;
  });
}

}  // extern "C"
