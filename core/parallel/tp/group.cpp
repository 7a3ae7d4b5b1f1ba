#include "parallel/tp/group.hpp"

#include "dtrain/comm.h"

namespace dtrain::parallel::tp {

namespace {

// A view ordered on `queue`'s stream, where it is: the layers' tensors and
// scratch are where the Queue is, a few per-row statistics on the host.
TensorView on(const device::Queue& queue, TensorView v) {
  v.stream = queue.stream();
  return v;
}

std::size_t element_bytes(const Matrix& m) { return dtype_size(m.view.dtype); }

}  // namespace

comm::RequestPtr Group::started(comm::RequestPtr request) {
  ++started_;
  return request;
}

void Group::wait(const comm::RequestPtr& request) { comm_.wait(request, -1); }

void Group::allreduce_sum(const TensorView& in, const TensorView& out) {
  const TensorView send = on(queue_, in), recv = on(queue_, out);
  comm::start_and_wait(comm_,
                       [&] { return started(comm_.allreduce(send, recv, DT_SUM)); });
}

void Group::allreduce_max(const TensorView& buf) {
  const TensorView t = on(queue_, buf);
  comm::start_and_wait(comm_, [&] { return started(comm_.allreduce(t, t, DT_MAX)); });
}

comm::RequestPtr Group::start_allreduce_sum(const TensorView& buf) {
  const TensorView t = on(queue_, buf);
  return started(comm_.allreduce(t, t, DT_SUM));
}

void Group::allgather_rows(const Matrix& local, const Matrix& full) {
  const TensorView send = on(queue_, local.view), recv = on(queue_, full.view);
  comm::start_and_wait(comm_, [&] { return started(comm_.allgather(send, recv)); });
}

comm::RequestPtr Group::start_allgather_rows(const Matrix& local, const Matrix& full) {
  const TensorView send = on(queue_, local.view), recv = on(queue_, full.view);
  return started(comm_.allgather(send, recv));
}

comm::RequestPtr Group::start_reduce_scatter_rows(const Matrix& full, const Matrix& local) {
  const TensorView send = on(queue_, full.view), recv = on(queue_, local.view);
  return started(comm_.reduce_scatter(send, recv, DT_SUM));
}

void Group::allgather_columns(const Matrix& local, const Matrix& full) {
  // Gathered as blocks of whole matrices, [size][rows][cols], then laid side by side.
  Scratch blocks(queue_, local.view.dtype, local.rows * size(), local.cols);
  allgather_rows(local, blocks.matrix());
  const std::size_t element = element_bytes(local);
  const std::size_t row_bytes = static_cast<std::size_t>(local.cols) * element;
  auto* out = static_cast<std::byte*>(full.view.data);
  const auto* in = static_cast<const std::byte*>(blocks.matrix().view.data);
  for (int r = 0; r < size(); ++r) {
    queue_.copy_rows(out + static_cast<std::size_t>(r) * row_bytes, static_cast<std::size_t>(full.cols) * element,
                     in + static_cast<std::size_t>(r * local.rows) * row_bytes, row_bytes, row_bytes,
                     static_cast<std::size_t>(local.rows));
  }
}

Scratch::Scratch(device::Queue& queue, DType dtype, std::int64_t rows, std::int64_t cols)
    : storage_(queue, static_cast<std::size_t>(rows * cols) * dtype_size(dtype)),
      matrix_{storage_.view(0, rows * cols, dtype), rows, cols} {}

void copy_columns(device::Queue& queue, const Matrix& src, std::int64_t first, const Matrix& dst) {
  const std::size_t element = element_bytes(src);
  queue.copy_rows(dst.view.data, static_cast<std::size_t>(dst.cols) * element,
                  static_cast<const std::byte*>(src.view.data) + static_cast<std::size_t>(first) * element,
                  static_cast<std::size_t>(src.cols) * element, static_cast<std::size_t>(dst.cols) * element,
                  static_cast<std::size_t>(dst.rows));
}

void copy(device::Queue& queue, const TensorView& src, const TensorView& dst) {
  queue.copy(dst.data, src.data, src.bytes());
}

}  // namespace dtrain::parallel::tp
