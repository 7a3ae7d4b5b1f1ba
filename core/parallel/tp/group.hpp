// The tensor-parallel group as the layers use it: the few collectives they
// need, on matrices, over one communicator, and the Queue that does a call's
// local work where its tensors are (host memory or one CUDA device; the
// collectives are ordered on its stream). It counts the collectives it
// starts, so that a test can hold a layer to its communication budget (a
// Megatron MLP block costs one allreduce each way).
#pragma once

#include <cstddef>

#include "comm/communicator.hpp"
#include "device/buffer.hpp"
#include "device/queue.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

class Group {
 public:
  Group(comm::Communicator& comm, device::Queue& queue) : comm_(comm), queue_(queue) {}

  device::Queue& queue() const { return queue_; }
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  int collectives_started() const { return started_; }

  // Blocking, in place or from `in` to `out` (same count).
  void allreduce_sum(const TensorView& in, const TensorView& out);
  void allreduce_max(const TensorView& buf);
  // Starts an in-place sum; finish it with wait().
  comm::RequestPtr start_allreduce_sum(const TensorView& buf);
  // full [rows * size, cols] <- every rank's local [rows, cols], in rank
  // order; blocking, or started (finish it with wait()).
  void allgather_rows(const Matrix& local, const Matrix& full);
  comm::RequestPtr start_allgather_rows(const Matrix& local, const Matrix& full);
  // local [rows / size, cols] <- this rank's rows of the sum over ranks of full.
  comm::RequestPtr start_reduce_scatter_rows(const Matrix& full, const Matrix& local);
  // full [rows, cols * size] <- every rank's local [rows, cols] side by side.
  void allgather_columns(const Matrix& local, const Matrix& full);
  void wait(const comm::RequestPtr& request);

 private:
  comm::RequestPtr started(comm::RequestPtr request);

  comm::Communicator& comm_;
  device::Queue& queue_;
  int started_ = 0;
};

// Zeroed scratch memory of rows x cols elements of `dtype` from a Queue, as
// a matrix on its stream (none for 0 rows). Not copyable: the matrix points
// into it.
class Scratch {
 public:
  Scratch(device::Queue& queue, DType dtype, std::int64_t rows, std::int64_t cols);
  const Matrix& matrix() const { return matrix_; }

 private:
  device::Buffer storage_;
  Matrix matrix_;
};

// dst <- columns [first, first + dst.cols) of src (same rows, same dtype).
void copy_columns(device::Queue& queue, const Matrix& src, std::int64_t first, const Matrix& dst);
// dst <- src, element for element (no-op when they are the same memory).
void copy(device::Queue& queue, const TensorView& src, const TensorView& dst);

}  // namespace dtrain::parallel::tp
