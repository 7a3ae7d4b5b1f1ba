#include "comm.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace dtbench {

namespace {

DLDataType dl_dtype(dtb_dtype t) {
  switch (t) {
    case DTB_FLOAT32: return {kDLFloat, 32, 1};
    case DTB_FLOAT64: return {kDLFloat, 64, 1};
    case DTB_INT32: return {kDLInt, 32, 1};
    case DTB_INT64: return {kDLInt, 64, 1};
    default: break;
  }
  std::abort();
}

// A one-dimensional host tensor over `data`; `shape` must outlive it.
DLTensor tensor(void* data, int64_t* shape, int64_t count, dtb_dtype t) {
  DLTensor out{};
  *shape = count;
  out.data = data;
  out.device = {kDLCPU, 0};
  out.ndim = 1;
  out.dtype = dl_dtype(t);
  out.shape = shape;
  return out;
}

}  // namespace

Comm::Comm() {
  dt_status s = dt_comm_create(&comm_, nullptr);
  if (s != DT_OK) fail("dt_comm_create", s);
  dt_comm_rank(comm_, &rank_);
  dt_comm_size(comm_, &size_);
}

Comm::~Comm() { dt_comm_destroy(comm_); }

void Comm::fail(const char* what, dt_status status) {
  // Before the communicator exists there is no rank to name.
  if (comm_ != nullptr) {
    std::fprintf(stderr, "dtbench: rank %d: %s failed: %s: %s\n", rank_, what, dt_status_string(status),
                 dt_error_last());
  } else {
    std::fprintf(stderr, "dtbench: %s failed: %s: %s\n", what, dt_status_string(status), dt_error_last());
  }
  if (comm_ != nullptr) dt_comm_abort(comm_);
  exit(1);
}

void Comm::exit(int code) {
  std::fflush(stdout);
  dt_comm_destroy(comm_);
  comm_ = nullptr;
  std::exit(code);
}

void Comm::run(dtb_op op, const dtb_layout& l, dtb_dtype t, void* send, void* recv, const int64_t* send_counts,
               const int64_t* recv_counts) {
  int64_t send_shape = 0, recv_shape = 0;
  DLTensor s = tensor(send, &send_shape, l.send_elems, t);
  DLTensor r = tensor(recv, &recv_shape, l.recv_elems, t);
  // Off the root, the buffer a rooted operation ignores is passed as NULL, as
  // a caller with nothing to give would.
  const bool root = rank_ == DTB_ROOT;
  dt_status status = DT_OK;
  switch (op) {
    case DTB_ALLREDUCE: status = dt_allreduce(comm_, &s, &r, DT_SUM, nullptr, nullptr); break;
    case DTB_ALLGATHER: status = dt_allgather(comm_, &s, &r, nullptr, nullptr); break;
    case DTB_REDUCE_SCATTER: status = dt_reduce_scatter(comm_, &s, &r, DT_SUM, nullptr, nullptr); break;
    case DTB_ALLTOALL: status = dt_alltoall(comm_, &s, &r, nullptr, nullptr); break;
    case DTB_BROADCAST: status = dt_broadcast(comm_, &s, DTB_ROOT, nullptr, nullptr); break;
    case DTB_ALLTOALLV: status = dt_alltoallv(comm_, &s, send_counts, &r, recv_counts, nullptr, nullptr); break;
    case DTB_REDUCE:
      status = dt_reduce(comm_, &s, root ? &r : nullptr, DT_SUM, DTB_ROOT, nullptr, nullptr);
      break;
    case DTB_GATHER: status = dt_gather(comm_, &s, root ? &r : nullptr, DTB_ROOT, nullptr, nullptr); break;
    case DTB_SCATTER: status = dt_scatter(comm_, root ? &s : nullptr, &r, DTB_ROOT, nullptr, nullptr); break;
    case DTB_ALLGATHERV: status = dt_allgatherv(comm_, &s, &r, recv_counts, nullptr, nullptr); break;
    case DTB_REDUCE_SCATTERV:
      status = dt_reduce_scatterv(comm_, &s, recv_counts, &r, DT_SUM, nullptr, nullptr);
      break;
    default: std::abort();
  }
  if (status != DT_OK) fail(dtb_op_name(op), status);
}

void Comm::barrier() {
  dt_status s = dt_barrier(comm_);
  if (s != DT_OK) fail("dt_barrier", s);
}

double Comm::max(double value) {
  int64_t shape = 0;
  DLTensor t = tensor(&value, &shape, 1, DTB_FLOAT64);
  dt_status s = dt_allreduce(comm_, &t, &t, DT_MAX, nullptr, nullptr);
  if (s != DT_OK) fail("dt_allreduce (max of a double)", s);
  return value;
}

void Comm::sum(double* values, int64_t n) {
  int64_t shape = 0;
  DLTensor t = tensor(values, &shape, n, DTB_FLOAT64);
  dt_status s = dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, nullptr);
  if (s != DT_OK) fail("dt_allreduce (sum of doubles)", s);
}

void Comm::meet(bool quietly) {
  int32_t token = 0;
  int64_t shape = 0;
  DLTensor t = tensor(&token, &shape, 1, DTB_INT32);
  if (!quietly) {
    dt_status s = dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, nullptr);
    if (s != DT_OK) fail("dt_allreduce (meeting)", s);
    return;
  }
  dt_request* req = nullptr;
  dt_status s = dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, &req);
  if (s != DT_OK) fail("dt_allreduce (meeting)", s);
  const timespec pause{0, 1000000};  // 1 ms: long for a core, short for a human
  while ((s = dt_request_test(req)) == DT_INPROGRESS) nanosleep(&pause, nullptr);
  dt_request_free(req);
  if (s != DT_OK) fail("dt_allreduce (meeting)", s);
}

}  // namespace dtbench
