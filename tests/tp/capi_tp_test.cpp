// Tensor parallelism through the C API, one process per rank, against the
// dense layers computed in double by every rank from the same seeded full
// weights: each layer forward and backward, plain and sequence parallel, a
// Megatron MLP block, the vocabulary-parallel embedding and cross-entropy,
// the mappings and the sharding helpers. Then refusals and a rank whose
// shapes differ from its peers'.
//
// CTest runs this alone (tp = 1) and under dtrun with 2, 3 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "tp/dense.hpp"

namespace {

using dtrain::testing::add_row;
using dtrain::testing::column_sums;
using dtrain::testing::cols_of;
using dtrain::testing::Dense;
using dtrain::testing::F32;
using dtrain::testing::matmul;
using dtrain::testing::random_dense;
using dtrain::testing::relative_error;
using dtrain::testing::rows_of;

constexpr double kTolerance = 1e-5;  // f32 against double, relative to the largest value

class Tp : public dtrain::testing::WorldFixture {
 protected:
  // Sizes every group size of 1 to 4 divides.
  static constexpr std::int64_t T = 12, H = 8, F = 24, V = 24;

  Dense row_block(const Dense& d) const { return rows_of(d, rank_ * d.rows / size_, d.rows / size_); }
  Dense col_block(const Dense& d) const { return cols_of(d, rank_ * d.cols / size_, d.cols / size_); }

  void expect_close(const F32& got, const Dense& want, const std::string& what) {
    EXPECT_LE(relative_error(got, want), kTolerance) << what << " on rank " << rank_ << " of " << size_;
  }
};

TEST_F(Tp, ColumnParallelLinearMatchesTheDenseLayer) {
  const Dense x = random_dense(T, H, 1), w = random_dense(F, H, 2), b = random_dense(F, 1, 3),
              dy = random_dense(T, F, 4);
  const Dense y = add_row(matmul(x, w, false, true), b);
  const Dense dx = matmul(dy, w), dw = matmul(dy, x, true, false), db = column_sums(dy);
  for (unsigned flags : {0u, DT_TP_GATHER_OUTPUT, DT_TP_SEQUENCE_PARALLEL, DT_TP_SEQUENCE_PARALLEL | DT_TP_GATHER_OUTPUT}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL, gather = flags & DT_TP_GATHER_OUTPUT;
    F32 x_in(sp ? row_block(x) : x), w_r(row_block(w)), b_r(row_block(b));
    F32 y_out(T, gather ? F : F / size_);
    ASSERT_EQ(dt_tp_column_linear_forward(comm_, &x_in, &w_r, &b_r.flat(), &y_out, flags), DT_OK) << dt_error_last();
    expect_close(y_out, gather ? y : col_block(y), "y");

    F32 dy_in(gather ? dy : col_block(dy)), dx_out(sp ? T / size_ : T, H), dw_out(F / size_, H), db_out(F / size_, 1);
    ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_in, &w_r, &dy_in, &dx_out, &dw_out, &db_out.flat(), flags),
              DT_OK)
        << dt_error_last();
    expect_close(dx_out, sp ? row_block(dx) : dx, "dx");
    expect_close(dw_out, row_block(dw), "dweight");
    expect_close(db_out, row_block(db), "dbias");
    if (sp) {
      // The whole x the forward gathered gives the same gradients without gathering again.
      F32 x_whole(x), dx_again(T / size_, H), dw_again(F / size_, H);
      ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_whole, &w_r, &dy_in, &dx_again, &dw_again, nullptr, flags),
                DT_OK)
          << dt_error_last();
      expect_close(dx_again, row_block(dx), "dx from the whole x");
      expect_close(dw_again, row_block(dw), "dweight from the whole x");
    }
  }
}

TEST_F(Tp, RowParallelLinearMatchesTheDenseLayer) {
  const Dense x = random_dense(T, F, 5), w = random_dense(H, F, 6), b = random_dense(H, 1, 7),
              dy = random_dense(T, H, 8);
  const Dense y = add_row(matmul(x, w, false, true), b);
  const Dense dx = matmul(dy, w), dw = matmul(dy, x, true, false), db = column_sums(dy);
  for (unsigned flags : {0u, DT_TP_SEQUENCE_PARALLEL}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL;
    F32 x_r(col_block(x)), w_r(col_block(w)), bias(b);
    F32 y_out(sp ? T / size_ : T, H);
    ASSERT_EQ(dt_tp_row_linear_forward(comm_, &x_r, &w_r, &bias.flat(), &y_out, flags), DT_OK) << dt_error_last();
    expect_close(y_out, sp ? row_block(y) : y, "y");

    F32 dy_in(sp ? row_block(dy) : dy), dx_out(T, F / size_), dw_out(H, F / size_), db_out(H, 1);
    ASSERT_EQ(dt_tp_row_linear_backward(comm_, &x_r, &w_r, &dy_in, &dx_out, &dw_out, &db_out.flat(), flags), DT_OK)
        << dt_error_last();
    expect_close(dx_out, col_block(dx), "dx");
    expect_close(dw_out, col_block(dw), "dweight");
    expect_close(db_out, db, "dbias");
  }
}

TEST_F(Tp, MlpBlockPlainAndSequenceParallelMatchTheDenseBlock) {
  // y = relu(x W1^T + b1) W2^T + b2
  const Dense x = random_dense(T, H, 9), w1 = random_dense(F, H, 10), b1 = random_dense(F, 1, 11),
              w2 = random_dense(H, F, 12), b2 = random_dense(H, 1, 13), dy = random_dense(T, H, 14);
  Dense hidden = add_row(matmul(x, w1, false, true), b1), active = hidden, dactive;
  for (auto& v : active.v) v = std::max(v, 0.0);
  const Dense y = add_row(matmul(active, w2, false, true), b2);
  dactive = matmul(dy, w2);
  for (std::size_t i = 0; i < dactive.v.size(); ++i) dactive.v[i] *= hidden.v[i] > 0 ? 1.0 : 0.0;
  const Dense dx = matmul(dactive, w1), dw1 = matmul(dactive, x, true, false), dw2 = matmul(dy, active, true, false);

  for (unsigned flags : {0u, DT_TP_SEQUENCE_PARALLEL}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL;
    const std::int64_t mine = sp ? T / size_ : T;
    F32 x_in(sp ? row_block(x) : x), w1_r(row_block(w1)), b1_r(row_block(b1)), w2_r(col_block(w2)), b2_all(b2);
    F32 h(T, F / size_), y_out(mine, H);
    ASSERT_EQ(dt_tp_column_linear_forward(comm_, &x_in, &w1_r, &b1_r.flat(), &h, flags), DT_OK) << dt_error_last();
    F32 a(T, F / size_);
    for (std::size_t i = 0; i < a.v.size(); ++i) a.v[i] = std::max(h.v[i], 0.0f);
    ASSERT_EQ(dt_tp_row_linear_forward(comm_, &a, &w2_r, &b2_all.flat(), &y_out, flags), DT_OK) << dt_error_last();
    expect_close(y_out, sp ? row_block(y) : y, "y");

    F32 dy_in(sp ? row_block(dy) : dy), da(T, F / size_), dw2_r(H, F / size_), db2(H, 1);
    ASSERT_EQ(dt_tp_row_linear_backward(comm_, &a, &w2_r, &dy_in, &da, &dw2_r, &db2.flat(), flags), DT_OK);
    for (std::size_t i = 0; i < da.v.size(); ++i) da.v[i] = h.v[i] > 0 ? da.v[i] : 0.0f;
    F32 dx_out(mine, H), dw1_r(F / size_, H), db1_r(F / size_, 1);
    ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_in, &w1_r, &da, &dx_out, &dw1_r, &db1_r.flat(), flags), DT_OK)
        << dt_error_last();
    expect_close(dx_out, sp ? row_block(dx) : dx, "dx");
    expect_close(dw1_r, row_block(dw1), "dW1");
    expect_close(dw2_r, col_block(dw2), "dW2");
  }
}

// A zero-bubble schedule's two halves: the input gradient alone (dweight
// NULL), then the weight's and the bias's alone (dx NULL), for both layers
// and plain and sequence parallel, give the one-call gradients.
TEST_F(Tp, BackwardSplitsIntoInputAndWeightHalves) {
  const Dense x = random_dense(T, H, 31), w = random_dense(F, H, 32), dy = random_dense(T, F, 33);
  const Dense dx = matmul(dy, w), dw = matmul(dy, x, true, false), db = column_sums(dy);
  for (unsigned flags : {0u, DT_TP_SEQUENCE_PARALLEL}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL;
    F32 x_in(sp ? row_block(x) : x), w_r(row_block(w)), dy_r(col_block(dy));
    F32 dx_out(sp ? T / size_ : T, H), dw_out(F / size_, H), db_out(F / size_, 1);
    ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_in, &w_r, &dy_r, &dx_out, nullptr, nullptr, flags), DT_OK)
        << dt_error_last();
    expect_close(dx_out, sp ? row_block(dx) : dx, "column dx alone");
    ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_in, &w_r, &dy_r, nullptr, &dw_out, &db_out.flat(), flags),
              DT_OK)
        << dt_error_last();
    expect_close(dw_out, row_block(dw), "column dweight alone");
    expect_close(db_out, row_block(db), "column dbias alone");

    // Row-parallel: x [T, F/tp], weight [H, F/tp]; its dy is the transpose-free [T, H].
    const Dense xr = random_dense(T, F, 34), wr = random_dense(H, F, 35), dyr = random_dense(T, H, 36);
    F32 xr_in(col_block(xr)), wr_in(col_block(wr)), dyr_in(sp ? row_block(dyr) : dyr);
    F32 dxr(T, F / size_), dwr(H, F / size_);
    ASSERT_EQ(dt_tp_row_linear_backward(comm_, &xr_in, &wr_in, &dyr_in, &dxr, nullptr, nullptr, flags), DT_OK)
        << dt_error_last();
    ASSERT_EQ(dt_tp_row_linear_backward(comm_, &xr_in, &wr_in, &dyr_in, nullptr, &dwr, nullptr, flags), DT_OK)
        << dt_error_last();
    expect_close(dxr, col_block(matmul(dyr, wr)), "row dx alone");
    expect_close(dwr, col_block(matmul(dyr, xr, true, false)), "row dweight alone");
  }
}

TEST_F(Tp, AccumulateAddsIntoTheGradients) {
  const Dense x = random_dense(T, H, 15), w = random_dense(F, H, 16), dy = random_dense(T, F, 17);
  Dense twice = matmul(dy, x, true, false);
  for (auto& v : twice.v) v *= 2;
  F32 x_in(x), w_r(row_block(w)), dy_r(col_block(dy)), dw(F / size_, H);
  for (unsigned flags : {0u, DT_TP_ACCUMULATE}) {
    ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_in, &w_r, &dy_r, nullptr, &dw, nullptr, flags), DT_OK)
        << dt_error_last();
  }
  expect_close(dw, row_block(twice), "dweight after two backwards, the second accumulating");
}

TEST_F(Tp, VocabularyParallelEmbeddingMatchesALookup) {
  const Dense table = random_dense(V, H, 18), dout = random_dense(T, H, 19);
  std::vector<std::int64_t> ids(T);
  for (std::int64_t t = 0; t < T; ++t) ids[t] = (t * 7 + 3) % V;
  ids[1] = ids[0];  // a repeated id sums its gradients
  std::int64_t n = T;
  DLTensor ids_t{ids.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, &n, nullptr, 0};
  Dense out(T, H), dtable(V, H);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      out.at(t, h) = table.at(ids[t], h);
      dtable.at(ids[t], h) += dout.at(t, h);
    }
  for (unsigned flags : {0u, DT_TP_SEQUENCE_PARALLEL}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    const bool sp = flags & DT_TP_SEQUENCE_PARALLEL;
    F32 table_r(row_block(table)), got(sp ? T / size_ : T, H);
    ASSERT_EQ(dt_tp_embedding_forward(comm_, &table_r, &ids_t, &got, flags), DT_OK) << dt_error_last();
    expect_close(got, sp ? row_block(out) : out, "embedding");
    F32 dout_in(sp ? row_block(dout) : dout), dtable_r(V / size_, H, 99.0f);
    ASSERT_EQ(dt_tp_embedding_backward(comm_, &ids_t, &dout_in, &dtable_r, flags), DT_OK) << dt_error_last();
    expect_close(dtable_r, row_block(dtable), "dtable");
  }
  ids[2] = V;
  F32 table_r(row_block(table)), got(T, H);
  EXPECT_EQ(dt_tp_embedding_forward(comm_, &table_r, &ids_t, &got, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("ids[2] is 24, outside the vocabulary [0, 24)"), std::string::npos)
      << dt_error_last();
}

TEST_F(Tp, VocabularyParallelCrossEntropyMatchesLogSoftmax) {
  Dense logits = random_dense(T, V, 20, 3.0);
  for (std::int64_t j = 0; j < V; ++j) logits.at(5, j) = (j % 2 ? 1e4 : -1e4) + j;  // magnitude 1e4
  std::vector<std::int32_t> targets(T);
  for (std::int64_t t = 0; t < T; ++t) targets[t] = static_cast<std::int32_t>((t * 5 + 1) % V);
  targets[3] = -100;  // ignored
  std::int64_t n = T;
  DLTensor targets_t{targets.data(), {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &n, nullptr, 0};
  const Dense dloss = random_dense(T, 1, 21);
  for (float smoothing : {0.0f, 0.1f}) {
    SCOPED_TRACE("label smoothing " + std::to_string(smoothing));
    Dense loss(T, 1), lse(T, 1), dlogits(T, V);
    for (std::int64_t t = 0; t < T; ++t) {
      double m = -INFINITY, s = 0, mean = 0;
      for (std::int64_t j = 0; j < V; ++j) m = std::max(m, logits.at(t, j));
      for (std::int64_t j = 0; j < V; ++j) s += std::exp(logits.at(t, j) - m), mean += logits.at(t, j) / V;
      lse.v[t] = m + std::log(s);
      const bool ignored = targets[t] == -100;
      loss.v[t] = ignored ? 0 : (1 - smoothing) * (lse.v[t] - logits.at(t, targets[t])) + smoothing * (lse.v[t] - mean);
      for (std::int64_t j = 0; j < V; ++j) {
        const double p = std::exp(logits.at(t, j) - lse.v[t]);
        dlogits.at(t, j) = ignored ? 0 : dloss.v[t] * (p - (j == targets[t] ? 1 - smoothing : 0) - smoothing / V);
      }
    }
    F32 logits_r(col_block(logits)), loss_out(T, 1), lse_out(T, 1), dloss_in(dloss), dlogits_out(T, V / size_);
    ASSERT_EQ(dt_tp_cross_entropy_forward(comm_, &logits_r, &targets_t, &loss_out.flat(), &lse_out.flat(), smoothing,
                                          -100),
              DT_OK)
        << dt_error_last();
    for (float v : loss_out.v) ASSERT_TRUE(std::isfinite(v));
    expect_close(loss_out, loss, "loss");
    expect_close(lse_out, lse, "lse");
    ASSERT_EQ(dt_tp_cross_entropy_backward(comm_, &logits_r, &targets_t, &lse_out.flat(), &dloss_in.flat(),
                                           &dlogits_out, smoothing, -100),
              DT_OK)
        << dt_error_last();
    // lse is f32: at magnitude 1e4 it carries 1e4 * 2^-24 of rounding, and
    // the probabilities of that row as much relative error. The other rows
    // are held to the usual bound, that one to 1e-3.
    const Dense want = col_block(dlogits);
    F32 huge_row(1, V / size_);
    Dense huge_want(1, V / size_);
    for (std::int64_t j = 0; j < V / size_; ++j) {
      std::swap(huge_row.v[j], dlogits_out.v[5 * (V / size_) + j]);
      huge_want.v[j] = want.at(5, j);
    }
    Dense rest = want;
    for (std::int64_t j = 0; j < V / size_; ++j) rest.at(5, j) = 0;
    expect_close(dlogits_out, rest, "dlogits of the ordinary rows");
    EXPECT_LE(relative_error(huge_row, huge_want), 1e-3) << "dlogits of the row of magnitude 1e4";
  }
}

TEST_F(Tp, MappingsMoveWhatTheyPromise) {
  const Dense a = random_dense(T, F, 22);
  Dense sum = a;
  for (auto& v : sum.v) v *= size_;  // every rank contributes the same a
  struct Case {
    dt_tp_region region;
    Dense in, out;
  };
  const std::vector<Case> forward = {
      {DT_TP_COPY, a, a},
      {DT_TP_REDUCE, a, sum},
      {DT_TP_SCATTER, a, col_block(a)},
      {DT_TP_SEQ_REDUCE_SCATTER, a, row_block(sum)},
  };
  for (const Case& c : forward) {
    SCOPED_TRACE("region " + std::to_string(c.region));
    F32 in(c.in), out(c.out.rows, c.out.cols);
    ASSERT_EQ(dt_tp_region_forward(comm_, c.region, &in, &out), DT_OK) << dt_error_last();
    expect_close(out, c.out, "forward");
  }
  // Gathers: every rank contributes its block of a, and gets all of a.
  F32 cols(col_block(a)), rows(row_block(a)), whole_c(T, F), whole_r(T, F);
  ASSERT_EQ(dt_tp_region_forward(comm_, DT_TP_GATHER, &cols, &whole_c), DT_OK) << dt_error_last();
  expect_close(whole_c, a, "gather forward");
  ASSERT_EQ(dt_tp_region_forward(comm_, DT_TP_SEQ_GATHER, &rows, &whole_r), DT_OK) << dt_error_last();
  expect_close(whole_r, a, "sequence gather forward");
  // Backwards are the conjugates' forwards.
  F32 g(a), copy_back(T, F), scatter_back(T, F), gather_back(T, F / size_), seq_back(T / size_, F);
  ASSERT_EQ(dt_tp_region_backward(comm_, DT_TP_COPY, &g, &copy_back), DT_OK);
  expect_close(copy_back, sum, "copy backward");
  ASSERT_EQ(dt_tp_region_backward(comm_, DT_TP_GATHER, &g, &gather_back), DT_OK);
  expect_close(gather_back, col_block(a), "gather backward");
  ASSERT_EQ(dt_tp_region_backward(comm_, DT_TP_SCATTER, &cols, &scatter_back), DT_OK);
  expect_close(scatter_back, a, "scatter backward");
  ASSERT_EQ(dt_tp_region_backward(comm_, DT_TP_SEQ_GATHER, &g, &seq_back), DT_OK);
  expect_close(seq_back, row_block(sum), "sequence gather backward");
  // In place.
  ASSERT_EQ(dt_tp_region_forward(comm_, DT_TP_REDUCE, &g, &g), DT_OK);
  expect_close(g, sum, "reduce in place");
}

TEST_F(Tp, ShardsPutBackTogetherIntoTheWeight) {
  const int q = 2 * size_, kv = size_, d = 2;
  const Dense qkv = random_dense((q + 2 * kv) * d, H, 23);
  for (dt_tp_shard_kind kind : {DT_TP_SHARD_ROWS, DT_TP_SHARD_COLUMNS, DT_TP_SHARD_QKV}) {
    SCOPED_TRACE("kind " + std::to_string(kind));
    const Dense& full = kind == DT_TP_SHARD_COLUMNS ? random_dense(H, F, 24) : qkv;
    F32 full_in(full), local(kind == DT_TP_SHARD_COLUMNS ? full.rows : full.rows / size_,
                             kind == DT_TP_SHARD_COLUMNS ? full.cols / size_ : full.cols),
        back(full.rows, full.cols);
    ASSERT_EQ(dt_tp_shard(kind, &full_in, &local, rank_, size_, q, kv), DT_OK) << dt_error_last();
    if (kind == DT_TP_SHARD_QKV) {
      // The rank's query heads, then its key heads, then its value heads.
      const std::int64_t qb = q / size_ * d, kb = kv / size_ * d;
      Dense want(qb + 2 * kb, H);
      const Dense parts[3] = {rows_of(full, rank_ * qb, qb), rows_of(full, q * d + rank_ * kb, kb),
                              rows_of(full, (q + kv) * d + rank_ * kb, kb)};
      std::size_t at = 0;
      for (const Dense& p : parts)
        for (double v : p.v) want.v[at++] = v;
      expect_close(local, want, "qkv shard");
    }
    ASSERT_EQ(dt_tp_unshard(comm_, kind, &local, &back, q, kv), DT_OK) << dt_error_last();
    expect_close(back, full, "unsharded");
  }
}

TEST_F(Tp, SizesThatDoNotDivideAreRefusedNamingTheSizeAndTp) {
  if (size_ < 2) GTEST_SKIP() << "every size divides by tp = 1";
  F32 full(size_ * 3 + 1, H), local(3, H);
  EXPECT_EQ(dt_tp_shard(DT_TP_SHARD_ROWS, &full, &local, rank_, size_, 0, 0), DT_ERR_INVALID_ARGUMENT);
  const std::string says = "(" + std::to_string(size_ * 3 + 1) + ") does not divide by tp = " + std::to_string(size_);
  EXPECT_NE(std::string(dt_error_last()).find(says), std::string::npos) << dt_error_last();
  F32 x(T + 1, F / size_), w(H, F / size_), y(1, H);
  EXPECT_EQ(dt_tp_row_linear_forward(comm_, &x, &w, nullptr, &y, DT_TP_SEQUENCE_PARALLEL), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("does not divide by tp"), std::string::npos) << dt_error_last();
}

TEST_F(Tp, BadArgumentsAreRefusedAndChangeNothing) {
  F32 x(T, H), w(F, H), y(T, F, 7.0f), wrong(T, F + 1, 7.0f);
  EXPECT_EQ(dt_tp_column_linear_forward(nullptr, &x, &w, nullptr, &y, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_tp_column_linear_forward(comm_, &x, &w, nullptr, &wrong, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("y is [12, 25] but must be"), std::string::npos) << dt_error_last();
  EXPECT_EQ(dt_tp_column_linear_forward(comm_, &x, &w, nullptr, &y, 64u), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_tp_row_linear_forward(comm_, &x, &w, nullptr, &y, DT_TP_GATHER_OUTPUT), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_tp_region_forward(comm_, static_cast<dt_tp_region>(9), &x, &y), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_tp_shard(static_cast<dt_tp_shard_kind>(7), &x, &y, 0, 1, 0, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_tp_shard(DT_TP_SHARD_ROWS, &x, &x, 1, 1, 0, 0), DT_ERR_INVALID_ARGUMENT);
  F32 logits(T, V), loss(T, 1), lse(T, 1);
  std::vector<std::int64_t> targets(T, 0);
  std::int64_t n = T;
  DLTensor targets_t{targets.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, &n, nullptr, 0};
  EXPECT_EQ(dt_tp_cross_entropy_forward(comm_, &logits, &targets_t, &loss.flat(), &lse.flat(), 1.0f, -100),
            DT_ERR_INVALID_ARGUMENT);
  for (float v : y.v) ASSERT_EQ(v, 7.0f);
  for (float v : wrong.v) ASSERT_EQ(v, 7.0f);
}

TEST_F(Tp, ARankWithOtherShapesGetsAMismatchOnEveryRank) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks to disagree";
  const std::int64_t rows = rank_ == 0 ? 4 : 6;
  F32 x(rows, F / size_), w(H, F / size_), y(rows, H);
  EXPECT_EQ(dt_tp_row_linear_forward(comm_, &x, &w, nullptr, &y, 0), DT_ERR_MISMATCH) << dt_error_last();
}

}  // namespace
