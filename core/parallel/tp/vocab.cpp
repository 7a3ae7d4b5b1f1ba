#include "parallel/tp/vocab.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/error.hpp"
#include "device/kernels.hpp"
#include "parallel/tp/local_math.hpp"

// The large work (rows of the table and of the logits) runs where the
// tensors are, on the device layer's kernels; what is per token (ids,
// targets, row statistics) is read on the host, which checks the ids and
// combines the ranks' statistics there.

namespace dtrain::parallel::tp {

namespace {

// `view` as host values of T (the queue's work so far included).
template <typename T>
std::vector<T> read(device::Queue& queue, const TensorView& view) {
  std::vector<T> values(static_cast<std::size_t>(view.count));
  queue.copy(values.data(), view.data, view.bytes());
  queue.synchronize();
  return values;
}

// Host values into a view of the queue's memory of the same count.
template <typename T>
void write(device::Queue& queue, const std::vector<T>& values, const TensorView& view) {
  queue.copy(view.data, values.data(), view.bytes());
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

// The tokens whose ids fall in this rank's slice [first, first + count):
// their positions, and their rows in the slice.
struct Hits {
  std::vector<std::int64_t> positions;
  std::vector<std::int64_t> rows;
};

Hits hits_in_slice(const std::vector<std::int64_t>& ids, std::int64_t first, std::int64_t count) {
  Hits hits;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const std::int64_t row = ids[t] - first;
    if (row < 0 || row >= count) continue;
    hits.positions.push_back(static_cast<std::int64_t>(t));
    hits.rows.push_back(row);
  }
  return hits;
}

// Indices in the queue's memory, for the row kernels.
class Indices {
 public:
  Indices(device::Queue& queue, const std::vector<std::int64_t>& values)
      : scratch_(queue, DType::i64, static_cast<std::int64_t>(values.size()), 1) {
    write(queue, values, view());
  }
  const TensorView& view() const { return scratch_.matrix().view; }

 private:
  Scratch scratch_;
};

// dst rows at `to` += src rows at `from` (host index lists of one length).
void add_rows(device::Queue& queue, const Matrix& src, const std::vector<std::int64_t>& from, const Matrix& dst,
              const std::vector<std::int64_t>& to) {
  if (from.empty()) return;
  const Indices sources(queue, from), targets(queue, to);
  const Scratch picked(queue, src.view.dtype, static_cast<std::int64_t>(from.size()), src.cols);
  device::gather_rows(src.cols, src.view, sources.view(), picked.matrix().view);
  device::scatter_add_rows(src.cols, picked.matrix().view, targets.view(), dst.view);
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
  const Hits hits = hits_in_slice(tokens, group.rank() * table.rows, table.rows);
  add_rows(queue, table, hits.rows, contribution.matrix(), hits.positions);
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
  const Hits hits = hits_in_slice(tokens, group.rank() * dtable.rows, dtable.rows);
  add_rows(queue, grad, hits.positions, dtable, hits.rows);
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

// What the softmax over this rank's columns gives: exp(z - local_lse) on
// every row, and local_lse = log of the row's sum of exp(z) here.
class LocalSoftmax {
 public:
  LocalSoftmax(device::Queue& queue, const Matrix& logits)
      : probabilities_(queue, DType::f32, logits.rows, logits.cols), lse_(queue, DType::f32, logits.rows, 1) {
    if (logits.rows > 0 && logits.cols > 0) {
      device::softmax({logits.rows, logits.cols}, logits.view, probabilities_.matrix().view, lse_.matrix().view);
    }
  }
  const Matrix& probabilities() const { return probabilities_.matrix(); }
  const TensorView& lse() const { return lse_.matrix().view; }

 private:
  Scratch probabilities_, lse_;
};

// The flat index (row * cols + column) of each row's target in this rank's
// columns, for the rows whose target is here.
struct TargetsHere {
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> flat;
};

TargetsHere targets_here(const std::vector<std::int64_t>& targets, std::int64_t first, std::int64_t cols) {
  const Hits hits = hits_in_slice(targets, first, cols);
  TargetsHere here{hits.positions, {}};
  for (std::size_t i = 0; i < hits.rows.size(); ++i) here.flat.push_back(hits.positions[i] * cols + hits.rows[i]);
  return here;
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

  const std::int64_t rows = logits.rows;
  // Per row, on the device: this rank's log-sum-exp, its sum of logits, and
  // the target's logit where the target is here.
  const LocalSoftmax local(queue, logits);
  const Scratch row_sums(queue, DType::f32, rows, 1);
  if (rows > 0 && logits.cols > 0) sum_each_row(queue, logits, row_sums.matrix().view);
  const TargetsHere here = targets_here(labels, group.rank() * logits.cols, logits.cols);
  const Scratch picked(queue, DType::f32, static_cast<std::int64_t>(here.flat.size()), 1);
  if (!here.flat.empty()) {
    const Indices at(queue, here.flat);
    device::gather_rows(1, logits.view, at.view(), picked.matrix().view);
  }

  // Combined over the ranks on the host: the maxima first, so that every
  // later sum is of exponentials no larger than 1.
  const std::vector<float> local_lse = read<float>(queue, local.lse());
  const std::vector<float> local_sums = read<float>(queue, row_sums.matrix().view);
  const std::vector<float> target_logits = read<float>(queue, picked.matrix().view);
  std::vector<float> maxima(local_lse);
  group.allreduce_max(TensorView{maxima.data(), rows, DType::f32});
  // [sum of exp(lse_r - max), target logit, sum of logits] per row, reduced at once.
  std::vector<float> sums(static_cast<std::size_t>(3 * rows), 0.0f);
  for (std::int64_t t = 0; t < rows; ++t) {
    sums[3 * t] = static_cast<float>(std::exp(static_cast<double>(local_lse[t]) - maxima[t]));
    sums[3 * t + 2] = local_sums[t];
  }
  for (std::size_t i = 0; i < here.rows.size(); ++i) sums[3 * here.rows[i] + 1] = target_logits[i];
  group.allreduce_sum(TensorView{sums.data(), 3 * rows, DType::f32}, TensorView{sums.data(), 3 * rows, DType::f32});
  const double s = options.label_smoothing;
  std::vector<float> lse_out(static_cast<std::size_t>(rows)), loss_out(static_cast<std::size_t>(rows));
  for (std::int64_t t = 0; t < rows; ++t) {
    const double row_lse = maxima[t] + std::log(static_cast<double>(sums[3 * t]));
    lse_out[t] = static_cast<float>(row_lse);
    const double nll = row_lse - sums[3 * t + 1];
    const double smooth = row_lse - sums[3 * t + 2] / static_cast<double>(vocab);
    loss_out[t] = labels[t] == options.ignore_index ? 0.0f : static_cast<float>((1.0 - s) * nll + s * smooth);
  }
  write(queue, lse_out, lse);
  write(queue, loss_out, loss);
}

void cross_entropy_backward(Group& group, const Matrix& logits, const TensorView& targets, const TensorView& lse,
                            const TensorView& dloss, const Matrix& dlogits, CrossEntropyOptions options) {
  device::Queue& queue = group.queue();
  const std::vector<std::int64_t> labels = read_ids(queue, targets, "targets");
  const std::int64_t vocab = logits.cols * group.size();
  check_cross_entropy(logits, labels, lse, options, vocab);
  expect_dtype(dloss, "dloss", DType::f32);
  expect_count(dloss, "dloss", logits.rows);
  expect_dtype(dlogits.view, "dlogits", DType::f32);
  expect_shape(dlogits, "dlogits", logits.rows, logits.cols);
  const std::int64_t rows = logits.rows;
  if (rows == 0 || logits.cols == 0) return;

  // dlogits[t][j] = dloss[t] (exp(z[t][j] - lse[t]) - s/V - (1 - s) [j is the target]),
  // zero on ignored rows; exp(z - lse) is the local softmax scaled by exp(local_lse - lse).
  const LocalSoftmax local(queue, logits);
  const std::vector<float> local_lse = read<float>(queue, local.lse());
  const std::vector<float> whole_lse = read<float>(queue, lse);
  const std::vector<float> scale = read<float>(queue, dloss);
  const double s = options.label_smoothing;
  std::vector<float> factors(static_cast<std::size_t>(rows)), terms(static_cast<std::size_t>(rows));
  for (std::int64_t t = 0; t < rows; ++t) {
    if (labels[t] == options.ignore_index) continue;
    factors[t] = static_cast<float>(scale[t] * std::exp(static_cast<double>(local_lse[t]) - whole_lse[t]));
    terms[t] = static_cast<float>(-scale[t] * s / static_cast<double>(vocab));
  }
  const Scratch row_factors(queue, DType::f32, rows, 1), row_terms(queue, DType::f32, rows, 1);
  write(queue, factors, row_factors.matrix().view);
  write(queue, terms, row_terms.matrix().view);
  scale_each_row(row_factors.matrix().view, local.probabilities(), dlogits);
  add_to_each_row(queue, row_terms.matrix().view, dlogits);

  const TargetsHere here = targets_here(labels, group.rank() * logits.cols, logits.cols);
  std::vector<float> target_terms;
  std::vector<std::int64_t> target_at;
  for (std::size_t i = 0; i < here.rows.size(); ++i) {
    const std::int64_t t = here.rows[i];
    if (labels[t] == options.ignore_index) continue;
    target_terms.push_back(static_cast<float>(-scale[t] * (1.0 - s)));
    target_at.push_back(here.flat[i]);
  }
  if (target_terms.empty()) return;
  const Scratch values(queue, DType::f32, static_cast<std::int64_t>(target_terms.size()), 1);
  write(queue, target_terms, values.matrix().view);
  const Indices at(queue, target_at);
  device::scatter_add_rows(1, values.matrix().view, at.view(), dlogits.view);
}

}  // namespace dtrain::parallel::tp
