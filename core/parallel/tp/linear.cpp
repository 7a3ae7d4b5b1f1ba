#include "parallel/tp/linear.hpp"

#include <memory>
#include <utility>

#include "base/error.hpp"
#include "parallel/tp/local_math.hpp"

namespace dtrain::parallel::tp {

namespace {

// The rows of the whole sequence, given a rows-split tensor's local rows.
std::int64_t full_rows(const Group& group, std::int64_t rows, bool sequence_parallel) {
  return sequence_parallel ? rows * group.size() : rows;
}

void check_dtypes(const Matrix& a, const Matrix& w, const TensorView* bias, const Matrix& out) {
  expect_dtype(w.view, "weight", a.view.dtype);
  expect_dtype(out.view, "output", a.view.dtype);
  if (bias) expect_dtype(*bias, "bias", a.view.dtype);
  if (a.view.dtype != DType::f32 && a.view.dtype != DType::f16 && a.view.dtype != DType::bf16) {
    raise(DT_ERR_INVALID_ARGUMENT,
          std::string("linear layers take f32, f16 or bf16, not ") + dtype_name(a.view.dtype));
  }
}

// The whole sequence [T, cols], gathered from every rank's rows [T/tp, cols]
// by an allgather started at construction. This rank's own block of rows is
// `local` and usable at once, so a product whose output rows depend only on
// the same input rows computes that block while the other ranks' arrive
// (the sequence-parallel overlap of communication with the GEMM); products
// that sum over rows (the weight's gradient) wait for the whole sequence.
class GatheredRows {
 public:
  GatheredRows(Group& group, const Matrix& local)
      : group_(group), local_(local), whole_(group.queue(), local.view.dtype, local.rows * group.size(), local.cols),
        gather_(group.start_allgather_rows(local, whole_.matrix())) {}
  // An exception between the start and wait() leaves the gather writing
  // into the scratch this frees: it is waited for first, its own error
  // dropped (the one in flight is the caller's).
  ~GatheredRows() {
    if (!gather_) return;
    try {
      group_.wait(gather_);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }
  GatheredRows(const GatheredRows&) = delete;
  GatheredRows& operator=(const GatheredRows&) = delete;

  // The first row of this rank's block in the whole sequence.
  std::int64_t own_first() const { return group_.rank() * local_.rows; }
  // rows [own_first(), own_first() + local.rows) of `m`, a [T, n] matrix.
  Matrix own_rows(const Matrix& m) const { return m.row_block(own_first(), local_.rows); }
  const Matrix& whole() {
    wait();
    return whole_.matrix();
  }
  // Calls body(first, n) for the blocks of rows before and after this
  // rank's, once the gather is done.
  template <typename Body>
  void for_other_blocks(Body&& body) {
    wait();
    const std::int64_t own_end = own_first() + local_.rows;
    if (own_first() > 0) body(std::int64_t{0}, own_first());
    if (own_end < whole_.matrix().rows) body(own_end, whole_.matrix().rows - own_end);
  }

 private:
  void wait() {
    if (!gather_) return;
    const comm::RequestPtr gather = std::move(gather_);
    group_.wait(gather);
  }

  Group& group_;
  const Matrix local_;
  Scratch whole_;
  comm::RequestPtr gather_;  // null once waited for
};

}  // namespace

void column_forward(Group& group, const Matrix& x, const Matrix& w, const TensorView* bias, const Matrix& y,
                    LinearFlags flags) {
  check_dtypes(x, w, bias, y);
  const std::int64_t rows = full_rows(group, x.rows, flags.sequence_parallel);
  expect_shape(w, "weight", w.rows, x.cols);
  if (bias) expect_count(*bias, "bias", w.rows);
  expect_shape(y, "y", rows, flags.gather_output ? w.rows * group.size() : w.rows);

  // With the output gathered, this rank's columns are computed apart first.
  const Scratch local(group.queue(), y.view.dtype, flags.gather_output ? rows : 0, w.rows);
  const Matrix& out = flags.gather_output ? local.matrix() : y;
  if (flags.sequence_parallel) {
    GatheredRows input(group, x);
    x_times_wt(x, w, input.own_rows(out), 0.0);
    input.for_other_blocks([&](std::int64_t first, std::int64_t n) {
      x_times_wt(input.whole().row_block(first, n), w, out.row_block(first, n), 0.0);
    });
  } else {
    x_times_wt(x, w, out, 0.0);
  }
  if (bias) add_bias(group.queue(), out, *bias);
  if (flags.gather_output) group.allgather_columns(out, y);
}

void column_backward(Group& group, const Matrix& x, const Matrix& w, const Matrix& dy, const Matrix* dx,
                     const Matrix* dw, const TensorView* db, LinearFlags flags) {
  check_dtypes(x, w, db, dy);
  expect_shape(w, "weight", w.rows, x.cols);
  const std::int64_t rows = dy.rows;
  expect_shape(dy, "dy", rows, flags.gather_output ? w.rows * group.size() : w.rows);
  // With sequence parallelism x is this rank's rows (gathered again here) or
  // the whole sequence the forward gathered, kept by the caller.
  const bool gather_x = flags.sequence_parallel && x.rows != rows;
  if (gather_x) {
    expect_divisible(rows, "the rows of dy", group.size());
    expect_shape(x, "x", rows / group.size(), x.cols);
  }
  if (!flags.sequence_parallel) expect_shape(x, "x", rows, x.cols);
  if (dw) {
    expect_dtype(dw->view, "dweight", x.view.dtype);
    expect_shape(*dw, "dweight", w.rows, w.cols);
  }
  if (dx) {
    expect_dtype(dx->view, "dx", x.view.dtype);
    expect_divisible(rows, "the rows of dy", flags.sequence_parallel ? group.size() : 1);
    expect_shape(*dx, "dx", flags.sequence_parallel ? rows / group.size() : rows, x.cols);
  }
  if (db) expect_count(*db, "dbias", w.rows);

  const Scratch own_columns(group.queue(), dy.view.dtype, flags.gather_output ? rows : 0, w.rows);
  if (flags.gather_output) copy_columns(group.queue(), dy, group.rank() * w.rows, own_columns.matrix());
  const Matrix& grad = flags.gather_output ? own_columns.matrix() : dy;
  // Only the weight's gradient reads x: without it nothing is gathered. The
  // gather starts first, so that it runs during the input gradient's GEMM.
  const std::unique_ptr<GatheredRows> gathered = gather_x && dw ? std::make_unique<GatheredRows>(group, x) : nullptr;

  // The input gradient first, so that its reduction runs during the weight's GEMMs.
  comm::RequestPtr reduction;
  const Scratch partial(group.queue(), x.view.dtype, dx && flags.sequence_parallel ? rows : 0, x.cols);
  if (dx) {
    if (flags.sequence_parallel) {
      dy_times_w(grad, w, partial.matrix(), 0.0);
      reduction = group.start_reduce_scatter_rows(partial.matrix(), *dx);
    } else {
      dy_times_w(grad, w, *dx, 0.0);
      reduction = group.start_allreduce_sum(dx->view);
    }
  }
  const double beta = flags.accumulate ? 1.0 : 0.0;
  if (dw) dyt_times_x(grad, gathered ? gathered->whole() : x, *dw, beta);
  if (db) sum_rows(group.queue(), grad, *db, beta);
  if (reduction) group.wait(reduction);
}

void row_forward(Group& group, const Matrix& x, const Matrix& w, const TensorView* bias, const Matrix& y,
                 LinearFlags flags) {
  check_dtypes(x, w, bias, y);
  if (flags.gather_output) raise(DT_ERR_INVALID_ARGUMENT, "DT_TP_GATHER_OUTPUT is for column-parallel layers");
  expect_shape(w, "weight", w.rows, x.cols);
  if (bias) expect_count(*bias, "bias", w.rows);
  if (flags.sequence_parallel) {
    expect_divisible(x.rows, "the rows of x", group.size());
    expect_shape(y, "y", x.rows / group.size(), w.rows);
    Scratch partial(group.queue(), x.view.dtype, x.rows, w.rows);
    x_times_wt(x, w, partial.matrix(), 0.0);
    group.wait(group.start_reduce_scatter_rows(partial.matrix(), y));
  } else {
    expect_shape(y, "y", x.rows, w.rows);
    x_times_wt(x, w, y, 0.0);
    group.allreduce_sum(y.view, y.view);
  }
  if (bias) add_bias(group.queue(), y, *bias);
}

void row_backward(Group& group, const Matrix& x, const Matrix& w, const Matrix& dy, const Matrix* dx,
                  const Matrix* dw, const TensorView* db, LinearFlags flags) {
  check_dtypes(x, w, db, dy);
  if (flags.gather_output) raise(DT_ERR_INVALID_ARGUMENT, "DT_TP_GATHER_OUTPUT is for column-parallel layers");
  expect_shape(w, "weight", w.rows, x.cols);
  if (flags.sequence_parallel) expect_divisible(x.rows, "the rows of x", group.size());
  expect_shape(dy, "dy", flags.sequence_parallel ? x.rows / group.size() : x.rows, w.rows);
  if (dw) {
    expect_dtype(dw->view, "dweight", x.view.dtype);
    expect_shape(*dw, "dweight", w.rows, w.cols);
  }
  if (dx) {
    expect_dtype(dx->view, "dx", x.view.dtype);
    expect_shape(*dx, "dx", x.rows, x.cols);
  }
  if (db) expect_count(*db, "dbias", w.rows);

  const double beta = flags.accumulate ? 1.0 : 0.0;
  if (!flags.sequence_parallel) {
    if (dx) dy_times_w(dy, w, *dx, 0.0);
    if (dw) dyt_times_x(dy, x, *dw, beta);
    if (db) sum_rows(group.queue(), dy, *db, beta);
    return;
  }
  // dx's rows follow dy's: this rank's while the others' rows of dy arrive.
  GatheredRows grad(group, dy);
  if (dx) {
    dy_times_w(dy, w, grad.own_rows(*dx), 0.0);
    grad.for_other_blocks([&](std::int64_t first, std::int64_t n) {
      dy_times_w(grad.whole().row_block(first, n), w, dx->row_block(first, n), 0.0);
    });
  }
  if (dw) dyt_times_x(grad.whole(), x, *dw, beta);
  if (db) sum_rows(group.queue(), grad.whole(), *db, beta);
}

}  // namespace dtrain::parallel::tp
