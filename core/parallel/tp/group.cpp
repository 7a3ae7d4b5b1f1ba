#include "parallel/tp/group.hpp"

#include <cstring>

#include "base/flat_tensor.hpp"
#include "dtrain/comm.h"

namespace dtrain::parallel::tp {

namespace {

FlatTensor flat(const TensorView& v) { return FlatTensor(v.data, v.count, v.dtype); }

}  // namespace

comm::RequestPtr Group::started(comm::RequestPtr request) {
  ++started_;
  return request;
}

void Group::wait(const comm::RequestPtr& request) { comm_.wait(request, -1); }

void Group::allreduce_sum(const TensorView& in, const TensorView& out) {
  FlatTensor send = flat(in), recv = flat(out);
  comm::start_and_wait(comm_, [&] { return started(comm_.allreduce(send.get(), recv.get(), DT_SUM)); });
}

void Group::allreduce_max(const TensorView& buf) {
  FlatTensor t = flat(buf);
  comm::start_and_wait(comm_, [&] { return started(comm_.allreduce(t.get(), t.get(), DT_MAX)); });
}

comm::RequestPtr Group::start_allreduce_sum(const TensorView& buf) {
  FlatTensor t = flat(buf);
  return started(comm_.allreduce(t.get(), t.get(), DT_SUM));
}

void Group::allgather_rows(const Matrix& local, const Matrix& full) {
  FlatTensor send = flat(local.view), recv = flat(full.view);
  comm::start_and_wait(comm_, [&] { return started(comm_.allgather(send.get(), recv.get())); });
}

comm::RequestPtr Group::start_reduce_scatter_rows(const Matrix& full, const Matrix& local) {
  FlatTensor send = flat(full.view), recv = flat(local.view);
  return started(comm_.reduce_scatter(send.get(), recv.get(), DT_SUM));
}

void Group::allgather_columns(const Matrix& local, const Matrix& full) {
  // Gathered as blocks of whole matrices, [size][rows][cols], then laid side by side.
  Scratch blocks(local.view.dtype, local.rows * size(), local.cols);
  allgather_rows(local, blocks.matrix());
  const std::size_t element = dtype_size(local.view.dtype);
  const std::size_t row_bytes = static_cast<std::size_t>(local.cols) * element;
  auto* out = static_cast<std::byte*>(full.view.data);
  const auto* in = static_cast<const std::byte*>(blocks.matrix().view.data);
  for (int r = 0; r < size(); ++r) {
    for (std::int64_t row = 0; row < local.rows; ++row) {
      std::memcpy(out + (static_cast<std::size_t>(row) * static_cast<std::size_t>(full.cols) +
                         static_cast<std::size_t>(r) * static_cast<std::size_t>(local.cols)) * element,
                  in + (static_cast<std::size_t>(r) * static_cast<std::size_t>(local.rows) +
                        static_cast<std::size_t>(row)) * row_bytes,
                  row_bytes);
    }
  }
}

Scratch::Scratch(DType dtype, std::int64_t rows, std::int64_t cols)
    : bytes_(static_cast<std::size_t>(rows * cols) * dtype_size(dtype)) {
  matrix_.view.data = bytes_.data();
  matrix_.view.count = rows * cols;
  matrix_.view.dtype = dtype;
  matrix_.rows = rows;
  matrix_.cols = cols;
}

void copy_columns(const Matrix& src, std::int64_t first, const Matrix& dst) {
  const std::size_t element = dtype_size(src.view.dtype);
  const auto* in = static_cast<const std::byte*>(src.view.data);
  auto* out = static_cast<std::byte*>(dst.view.data);
  for (std::int64_t row = 0; row < dst.rows; ++row) {
    std::memcpy(out + static_cast<std::size_t>(row * dst.cols) * element,
                in + static_cast<std::size_t>(row * src.cols + first) * element,
                static_cast<std::size_t>(dst.cols) * element);
  }
}

void copy(const TensorView& src, const TensorView& dst) {
  if (src.data != dst.data) std::memcpy(dst.data, src.data, src.bytes());
}

}  // namespace dtrain::parallel::tp
