#include "parallel/tp/regions.hpp"

#include "base/error.hpp"

namespace dtrain::parallel::tp {

namespace {

enum class Move { copy, allreduce, split_columns, gather_columns, gather_rows, reduce_scatter_rows };

Move forward_move(Region region) {
  switch (region) {
    case Region::copy: return Move::copy;
    case Region::reduce: return Move::allreduce;
    case Region::scatter: return Move::split_columns;
    case Region::gather: return Move::gather_columns;
    case Region::seq_gather: return Move::gather_rows;
    case Region::seq_reduce_scatter: return Move::reduce_scatter_rows;
  }
  raise(DT_ERR_INVALID_ARGUMENT, "region " + std::to_string(static_cast<int>(region)) + " is not a dt_tp_region");
}

// The backward of a region is the forward of its conjugate.
Region conjugate(Region region) {
  switch (region) {
    case Region::copy: return Region::reduce;
    case Region::reduce: return Region::copy;
    case Region::scatter: return Region::gather;
    case Region::gather: return Region::scatter;
    case Region::seq_gather: return Region::seq_reduce_scatter;
    case Region::seq_reduce_scatter: return Region::seq_gather;
  }
  raise(DT_ERR_INVALID_ARGUMENT, "region " + std::to_string(static_cast<int>(region)) + " is not a dt_tp_region");
}

void move(Group& group, Move how, const Matrix& in, const Matrix& out, const char* in_name, const char* out_name) {
  expect_dtype(out.view, out_name, in.view.dtype);
  const int n = group.size();
  switch (how) {
    case Move::copy:
      expect_shape(out, out_name, in.rows, in.cols);
      copy(group.queue(), in.view, out.view);
      return;
    case Move::allreduce:
      expect_shape(out, out_name, in.rows, in.cols);
      group.allreduce_sum(in.view, out.view);
      return;
    case Move::split_columns:
      expect_divisible(in.cols, std::string("the columns of ") + in_name, n);
      expect_shape(out, out_name, in.rows, in.cols / n);
      copy_columns(group.queue(), in, group.rank() * out.cols, out);
      return;
    case Move::gather_columns:
      expect_shape(out, out_name, in.rows, in.cols * n);
      group.allgather_columns(in, out);
      return;
    case Move::gather_rows:
      expect_shape(out, out_name, in.rows * n, in.cols);
      group.allgather_rows(in, out);
      return;
    case Move::reduce_scatter_rows:
      expect_divisible(in.rows, std::string("the rows of ") + in_name, n);
      expect_shape(out, out_name, in.rows / n, in.cols);
      group.wait(group.start_reduce_scatter_rows(in, out));
      return;
  }
}

}  // namespace

void region_forward(Group& group, Region region, const Matrix& in, const Matrix& out) {
  move(group, forward_move(region), in, out, "input", "output");
}

void region_backward(Group& group, Region region, const Matrix& grad_out, const Matrix& grad_in) {
  move(group, forward_move(conjugate(region)), grad_out, grad_in, "grad_out", "grad_in");
}

}  // namespace dtrain::parallel::tp
