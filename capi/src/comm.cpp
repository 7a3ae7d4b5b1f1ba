// Communicator lifetime and queries.
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
    auto child = parent->impl->split(color, key);
    *out = child ? new dt_comm{std::move(child)} : nullptr;
  });
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

}  // extern "C"
