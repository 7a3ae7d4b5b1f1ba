// The tensor-parallel group as the layers use it: the few collectives they
// need, on matrices, over one communicator. It counts the collectives it
// starts, so that a test can hold a layer to its communication budget (a
// Megatron MLP block costs one allreduce each way).
#pragma once

#include <cstddef>
#include <vector>

#include "comm/communicator.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

class Group {
 public:
  explicit Group(comm::Communicator& comm) : comm_(comm) {}

  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  int collectives_started() const { return started_; }

  // Blocking, in place or from `in` to `out` (same count).
  void allreduce_sum(const TensorView& in, const TensorView& out);
  void allreduce_max(const TensorView& buf);
  // Starts an in-place sum; finish it with wait().
  comm::RequestPtr start_allreduce_sum(const TensorView& buf);
  // full [rows * size, cols] <- every rank's local [rows, cols], in rank order.
  void allgather_rows(const Matrix& local, const Matrix& full);
  // local [rows / size, cols] <- this rank's rows of the sum over ranks of full.
  comm::RequestPtr start_reduce_scatter_rows(const Matrix& full, const Matrix& local);
  // full [rows, cols * size] <- every rank's local [rows, cols] side by side.
  void allgather_columns(const Matrix& local, const Matrix& full);
  void wait(const comm::RequestPtr& request);

 private:
  comm::RequestPtr started(comm::RequestPtr request);

  comm::Communicator& comm_;
  int started_ = 0;
};

// Host scratch memory of rows x cols elements of `dtype`, as a matrix (none
// for 0 rows). Not copyable: the matrix points into it.
class Scratch {
 public:
  Scratch(DType dtype, std::int64_t rows, std::int64_t cols);
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const Matrix& matrix() const { return matrix_; }

 private:
  std::vector<std::byte> bytes_;
  Matrix matrix_;
};

// dst <- columns [first, first + dst.cols) of src (same rows, same dtype).
void copy_columns(const Matrix& src, std::int64_t first, const Matrix& dst);
// dst <- src, element for element (no-op when they are the same memory).
void copy(const TensorView& src, const TensorView& dst);

}  // namespace dtrain::parallel::tp
