#include "parallel/tp/vocab.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/error.hpp"
#include "device/kernels.hpp"

// The rows of the table and of the logits are worked on where they are, by
// the device layer's slice and cross-entropy kernels. Token ids and targets
// are read on the host to be checked, and the ranks' per-row statistics
// are combined there.

namespace dtrain::parallel::tp {

namespace {

// `view` as host values of T, once the queue's work so far has run.
template <typename T>
std::vector<T> read(device::Queue& queue, const TensorView& view) {
  std::vector<T> values(static_cast<std::size_t>(view.count));
  queue.copy(values.data(), view.data, view.bytes());
  queue.synchronize();
  return values;
}

// Token ids and targets (i32 or i64), read on the host.
std::vector<std::int64_t> read_ids(device::Queue& queue, const TensorView& view, const char* name) {
  if (view.dtype == DType::i64) return read<std::int64_t>(queue, view);
  if (view.dtype != DType::i32) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " is " + dtype_name(view.dtype) + " but must be i32 or i64");
  }
  const std::vector<std::int32_t> narrow = read<std::int32_t>(queue, view);
  return {narrow.begin(), narrow.end()};
}

// Every id in [0, vocab) (or equal to `allowed`, when given), or throws naming the first that is not.
void check_ids(const std::vector<std::int64_t>& ids, const char* name, std::int64_t vocab,
               std::optional<std::int64_t> allowed = {}) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
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
  device::Queue& queue = group.queue();
  const std::vector<std::int64_t> tokens = read_ids(queue, ids, "ids");
  const auto rows = static_cast<std::int64_t>(tokens.size());
  if (sequence_parallel) {
    expect_divisible(rows, "the number of ids", group.size());
    expect_shape(out, "output", rows / group.size(), table.cols);
  } else {
    expect_shape(out, "output", rows, table.cols);
  }
  check_ids(tokens, "ids", table.rows * group.size());

  // This rank's contribution: its own rows, zeros for the others'.
  const Scratch contribution(queue, DType::f32, rows, table.cols);
  if (rows > 0 && table.cols > 0) {
    device::gather_slice_rows(table.cols, group.rank() * table.rows, table.view, ids, contribution.matrix().view);
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
  device::Queue& queue = group.queue();
  const std::vector<std::int64_t> tokens = read_ids(queue, ids, "ids");
  const auto rows = static_cast<std::int64_t>(tokens.size());
  if (sequence_parallel) {
    expect_divisible(rows, "the number of ids", group.size());
    expect_shape(dout, "dout", rows / group.size(), dtable.cols);
  } else {
    expect_shape(dout, "dout", rows, dtable.cols);
  }
  check_ids(tokens, "ids", dtable.rows * group.size());

  const Scratch gathered(queue, DType::f32, sequence_parallel ? rows : 0, dout.cols);
  const Matrix& grad = sequence_parallel ? gathered.matrix() : dout;
  if (sequence_parallel) group.allgather_rows(dout, grad);
  if (!accumulate) queue.zero(dtable.view.data, dtable.view.bytes());
  if (rows > 0 && dtable.cols > 0) {
    device::scatter_add_slice_rows(dtable.cols, group.rank() * dtable.rows, grad.view, ids, dtable.view);
  }
}

namespace {

void check_cross_entropy(const Matrix& logits, const std::vector<std::int64_t>& targets, const TensorView& lse,
                         CrossEntropyOptions options, std::int64_t vocab) {
  expect_dtype(logits.view, "logits", DType::f32);
  expect_dtype(lse, "lse", DType::f32);
  expect_count(lse, "lse", logits.rows);
  if (static_cast<std::int64_t>(targets.size()) != logits.rows) {
    raise(DT_ERR_INVALID_ARGUMENT, "targets has " + std::to_string(targets.size()) + " elements but logits has " +
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
  device::Queue& queue = group.queue();
  const std::vector<std::int64_t> labels = read_ids(queue, targets, "targets");
  const std::int64_t vocab = logits.cols * group.size();
  check_cross_entropy(logits, labels, lse, options, vocab);
  expect_dtype(loss, "loss", DType::f32);
  expect_count(loss, "loss", logits.rows);

  // This rank's statistics per row: [max, sum of exp(z - max), target logit, sum of logits].
  const std::int64_t rows = logits.rows;
  const Scratch statistics(queue, DType::f32, 4, rows);
  const Matrix& s = statistics.matrix();
  if (rows > 0 && logits.cols > 0) {
    device::cross_entropy_statistics({rows, logits.cols}, group.rank() * logits.cols, logits.view, targets,
                                     s.row_block(0, 1).view, s.row_block(1, 1).view, s.row_block(2, 1).view,
                                     s.row_block(3, 1).view);
  }
  const std::vector<float> local = read<float>(queue, s.view);
  const float* local_max = local.data();
  const float* local_exps = local.data() + rows;

  // Combined over the ranks: the maxima first, so that every sum is of
  // exponentials no larger than 1.
  std::vector<float> maxima(local_max, local_max + rows);
  group.allreduce_max(TensorView{maxima.data(), rows, DType::f32});
  // [sum of exp(z - max), target logit, sum of logits] per row, reduced at once.
  std::vector<float> sums(static_cast<std::size_t>(3 * rows), 0.0f);
  for (std::int64_t t = 0; t < rows; ++t) {
    sums[3 * t] = static_cast<float>(local_exps[t] * std::exp(static_cast<double>(local_max[t]) - maxima[t]));
    sums[3 * t + 1] = local[2 * rows + t];
    sums[3 * t + 2] = local[3 * rows + t];
  }
  group.allreduce_sum(TensorView{sums.data(), 3 * rows, DType::f32}, TensorView{sums.data(), 3 * rows, DType::f32});
  const double smoothing = options.label_smoothing;
  std::vector<float> results(static_cast<std::size_t>(2 * rows));  // [lse..., loss...]
  for (std::int64_t t = 0; t < rows; ++t) {
    const double row_lse = maxima[t] + std::log(static_cast<double>(sums[3 * t]));
    const double nll = row_lse - sums[3 * t + 1];
    const double smooth = row_lse - sums[3 * t + 2] / static_cast<double>(vocab);
    results[t] = static_cast<float>(row_lse);
    results[rows + t] =
        labels[t] == options.ignore_index ? 0.0f : static_cast<float>((1.0 - smoothing) * nll + smoothing * smooth);
  }
  queue.copy(lse.data, results.data(), lse.bytes());
  queue.copy(loss.data, results.data() + rows, loss.bytes());
  queue.synchronize();  // before `results` goes
}

void cross_entropy_backward(Group& group, const Matrix& logits, const TensorView& targets, const TensorView& lse,
                            const TensorView& dloss, const Matrix& dlogits, CrossEntropyOptions options) {
  const std::vector<std::int64_t> labels = read_ids(group.queue(), targets, "targets");
  const std::int64_t vocab = logits.cols * group.size();
  check_cross_entropy(logits, labels, lse, options, vocab);
  expect_dtype(dloss, "dloss", DType::f32);
  expect_count(dloss, "dloss", logits.rows);
  expect_dtype(dlogits.view, "dlogits", DType::f32);
  expect_shape(dlogits, "dlogits", logits.rows, logits.cols);
  if (logits.rows == 0 || logits.cols == 0) return;
  device::cross_entropy_gradient({logits.rows, logits.cols}, group.rank() * logits.cols, vocab,
                                 options.label_smoothing, options.ignore_index, logits.view, targets, lse, dloss,
                                 dlogits.view);
}

}  // namespace dtrain::parallel::tp
