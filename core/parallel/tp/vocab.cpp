#include "parallel/tp/vocab.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "base/error.hpp"

namespace dtrain::parallel::tp {

namespace {

// Token ids and targets: i32 or i64.
class Ids {
 public:
  Ids(const TensorView& view, const char* name) : view_(view) {
    if (view.dtype != DType::i32 && view.dtype != DType::i64) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " is " + dtype_name(view.dtype) + " but must be i32 or i64");
    }
  }
  std::int64_t count() const { return view_.count; }
  std::int64_t operator[](std::int64_t i) const {
    return view_.dtype == DType::i32 ? static_cast<const std::int32_t*>(view_.data)[i]
                                     : static_cast<const std::int64_t*>(view_.data)[i];
  }

 private:
  TensorView view_;
};

float* floats(const TensorView& v) { return static_cast<float*>(v.data); }

// Every id in [0, vocab) (or equal to `allowed`, when given), or throws naming the first that is not.
void check_ids(const Ids& ids, const char* name, std::int64_t vocab, std::optional<std::int64_t> allowed = {}) {
  for (std::int64_t i = 0; i < ids.count(); ++i) {
    const std::int64_t id = ids[i];
    if ((id < 0 || id >= vocab) && id != allowed) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + "[" + std::to_string(i) + "] is " + std::to_string(id) +
                                         ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
}

}  // namespace

void embedding_forward(Group& group, const Matrix& table, const TensorView& ids, const Matrix& out,
                       bool sequence_parallel) {
  expect_dtype(table.view, "table", DType::f32);
  expect_dtype(out.view, "output", DType::f32);
  const Ids tokens(ids, "ids");
  const std::int64_t vocab = table.rows * group.size();
  const std::int64_t rows = tokens.count();
  if (sequence_parallel) {
    expect_divisible(rows, "the number of ids", group.size());
    expect_shape(out, "output", rows / group.size(), table.cols);
  } else {
    expect_shape(out, "output", rows, table.cols);
  }
  check_ids(tokens, "ids", vocab);

  // This rank's contribution: its own rows, zeros for the others'.
  Scratch contribution(DType::f32, rows, table.cols);
  const std::int64_t first = group.rank() * table.rows;
  const std::size_t row_bytes = static_cast<std::size_t>(table.cols) * sizeof(float);
  for (std::int64_t t = 0; t < rows; ++t) {
    float* dst = floats(contribution.matrix().view) + t * table.cols;
    const std::int64_t local = tokens[t] - first;
    if (local >= 0 && local < table.rows) {
      std::memcpy(dst, floats(table.view) + local * table.cols, row_bytes);
    } else {
      std::memset(dst, 0, row_bytes);
    }
  }
  if (sequence_parallel) {
    group.wait(group.start_reduce_scatter_rows(contribution.matrix(), out));
  } else {
    group.allreduce_sum(contribution.matrix().view, out.view);
  }
}

void embedding_backward(Group& group, const TensorView& ids, const Matrix& dout, const Matrix& dtable,
                        bool sequence_parallel, bool accumulate) {
  expect_dtype(dout.view, "dout", DType::f32);
  expect_dtype(dtable.view, "dtable", DType::f32);
  const Ids tokens(ids, "ids");
  const std::int64_t rows = tokens.count();
  if (sequence_parallel) {
    expect_divisible(rows, "the number of ids", group.size());
    expect_shape(dout, "dout", rows / group.size(), dtable.cols);
  } else {
    expect_shape(dout, "dout", rows, dtable.cols);
  }
  check_ids(tokens, "ids", dtable.rows * group.size());

  const Scratch gathered(DType::f32, sequence_parallel ? rows : 0, dout.cols);
  const Matrix& grad = sequence_parallel ? gathered.matrix() : dout;
  if (sequence_parallel) group.allgather_rows(dout, grad);
  if (!accumulate) std::memset(dtable.view.data, 0, dtable.view.bytes());
  const std::int64_t first = group.rank() * dtable.rows;
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int64_t local = tokens[t] - first;
    if (local < 0 || local >= dtable.rows) continue;
    float* dst = floats(dtable.view) + local * dtable.cols;
    const float* src = floats(grad.view) + t * grad.cols;
    for (std::int64_t h = 0; h < grad.cols; ++h) dst[h] += src[h];
  }
}

namespace {

void check_cross_entropy(const Matrix& logits, const Ids& targets, const TensorView& lse, CrossEntropyOptions options,
                         std::int64_t vocab) {
  expect_dtype(logits.view, "logits", DType::f32);
  expect_dtype(lse, "lse", DType::f32);
  expect_count(lse, "lse", logits.rows);
  if (targets.count() != logits.rows) {
    raise(DT_ERR_INVALID_ARGUMENT, "targets has " + std::to_string(targets.count()) + " elements but logits has " +
                                       std::to_string(logits.rows) + " rows");
  }
  if (!(options.label_smoothing >= 0.0f && options.label_smoothing < 1.0f)) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "label_smoothing is " + std::to_string(options.label_smoothing) + "; it must be in [0, 1)");
  }
  check_ids(targets, "targets", vocab, options.ignore_index);
}

}  // namespace

void cross_entropy_forward(Group& group, const Matrix& logits, const TensorView& targets, const TensorView& loss,
                           const TensorView& lse, CrossEntropyOptions options) {
  const Ids labels(targets, "targets");
  const std::int64_t vocab = logits.cols * group.size();
  check_cross_entropy(logits, labels, lse, options, vocab);
  expect_dtype(loss, "loss", DType::f32);
  expect_count(loss, "loss", logits.rows);

  const std::int64_t rows = logits.rows, cols = logits.cols;
  const std::int64_t first = group.rank() * cols;
  const float* z = floats(logits.view);
  // Row maxima first: every later sum is of exponentials no larger than 1.
  std::vector<float> maxima(static_cast<std::size_t>(rows), -std::numeric_limits<float>::infinity());
  for (std::int64_t t = 0; t < rows; ++t) {
    for (std::int64_t j = 0; j < cols; ++j) maxima[t] = std::max(maxima[t], z[t * cols + j]);
  }
  group.allreduce_max(TensorView{maxima.data(), rows, DType::f32});
  // [sum of exp(z - max), target logit, sum of logits] per row, reduced at once.
  std::vector<float> sums(static_cast<std::size_t>(3 * rows), 0.0f);
  for (std::int64_t t = 0; t < rows; ++t) {
    double exps = 0.0, total = 0.0;
    for (std::int64_t j = 0; j < cols; ++j) {
      exps += std::exp(static_cast<double>(z[t * cols + j]) - maxima[t]);
      total += z[t * cols + j];
    }
    const std::int64_t target = labels[t] - first;
    sums[3 * t] = static_cast<float>(exps);
    sums[3 * t + 1] = target >= 0 && target < cols ? z[t * cols + target] : 0.0f;
    sums[3 * t + 2] = static_cast<float>(total);
  }
  group.allreduce_sum(TensorView{sums.data(), 3 * rows, DType::f32}, TensorView{sums.data(), 3 * rows, DType::f32});
  const double s = options.label_smoothing;
  for (std::int64_t t = 0; t < rows; ++t) {
    const double row_lse = maxima[t] + std::log(static_cast<double>(sums[3 * t]));
    floats(lse)[t] = static_cast<float>(row_lse);
    const double nll = row_lse - sums[3 * t + 1];
    const double smooth = row_lse - sums[3 * t + 2] / static_cast<double>(vocab);
    floats(loss)[t] = labels[t] == options.ignore_index ? 0.0f : static_cast<float>((1.0 - s) * nll + s * smooth);
  }
}

void cross_entropy_backward(Group& group, const Matrix& logits, const TensorView& targets, const TensorView& lse,
                            const TensorView& dloss, const Matrix& dlogits, CrossEntropyOptions options) {
  const Ids labels(targets, "targets");
  const std::int64_t vocab = logits.cols * group.size();
  check_cross_entropy(logits, labels, lse, options, vocab);
  expect_dtype(dloss, "dloss", DType::f32);
  expect_count(dloss, "dloss", logits.rows);
  expect_dtype(dlogits.view, "dlogits", DType::f32);
  expect_shape(dlogits, "dlogits", logits.rows, logits.cols);

  const std::int64_t rows = logits.rows, cols = logits.cols;
  const std::int64_t first = group.rank() * cols;
  const double s = options.label_smoothing;
  const float* z = floats(logits.view);
  float* dz = floats(dlogits.view);
  for (std::int64_t t = 0; t < rows; ++t) {
    const bool ignored = labels[t] == options.ignore_index;
    const double scale = floats(dloss)[t];
    const std::int64_t target = labels[t] - first;
    for (std::int64_t j = 0; j < cols; ++j) {
      double g = std::exp(static_cast<double>(z[t * cols + j]) - floats(lse)[t]) - s / static_cast<double>(vocab);
      if (j == target) g -= 1.0 - s;
      dz[t * cols + j] = ignored ? 0.0f : static_cast<float>(scale * g);
    }
  }
}

}  // namespace dtrain::parallel::tp
