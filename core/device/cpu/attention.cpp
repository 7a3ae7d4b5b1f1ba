#include "device/cpu/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/tensor.hpp"
#include "device/cpu/exp.hpp"
#include "device/attention_heads.hpp"

namespace dtrain::device::cpu {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// Products on host memory.
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
             Matrix a, Matrix b, double beta, Matrix c) {
  device::product(TensorView{}, transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
}

// Rows [begin, end) whose positions increase: a layout's chunk (zigzag gives
// two per rank). Between runs, the causal mask is all or nothing often
// enough (half of the zigzag ring's chunk pairs) to skip the products.
struct Run {
  std::int64_t begin, end;
  std::int64_t size() const { return end - begin; }
};

std::vector<Run> runs_of(const std::int64_t* positions, std::int64_t rows, bool causal) {
  if (!causal) return {{0, rows}};
  std::vector<Run> runs;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (i == 0 || positions[i] <= positions[i - 1]) runs.push_back({i, i});
    runs.back().end = i + 1;
  }
  return runs;
}

// Whether some key of `keys` is visible to some query of `queries`.
bool sees(const AttentionShape& shape, AttentionPositions positions, Run queries, Run keys) {
  return !shape.causal || positions.k[keys.begin] <= positions.q[queries.end - 1];
}

// The end of the keys of `keys` that query i sees: positions increase
// along a run, so the visible keys are a prefix of it.
std::int64_t visible_end(const AttentionShape& shape, AttentionPositions positions, std::int64_t i, Run keys) {
  if (!shape.causal) return keys.end;
  return std::upper_bound(positions.k + keys.begin, positions.k + keys.end, positions.q[i]) - positions.k;
}

// The pairs of query and key runs with something visible.
struct RunPair {
  Run queries, keys;
};

// Queries of a pair that sees only part of its keys go in tiles of this
// many, each with the keys its last query sees: the products then skip all
// but a tile's worth of the hidden entries, where the whole pair would
// compute as many hidden as visible ones (a causal square).
constexpr std::int64_t kCausalTile = 128;

std::vector<RunPair> visible_pairs(const AttentionShape& shape, AttentionPositions positions) {
  std::vector<RunPair> pairs;
  const std::vector<Run> key_runs = runs_of(positions.k, shape.kv_rows, shape.causal);
  for (Run queries : runs_of(positions.q, shape.q_rows, shape.causal)) {
    for (Run keys : key_runs) {
      if (!sees(shape, positions, queries, keys)) continue;
      if (!shape.causal || positions.k[keys.end - 1] <= positions.q[queries.begin]) {
        pairs.push_back({queries, keys});
        continue;
      }
      for (std::int64_t first = queries.begin; first < queries.end; first += kCausalTile) {
        const Run tile{first, std::min(first + kCausalTile, queries.end)};
        const std::int64_t end = visible_end(shape, positions, tile.end - 1, keys);
        if (end > keys.begin) pairs.push_back({tile, {keys.begin, end}});
      }
    }
  }
  return pairs;
}

// The [queries, keys] part of a q_rows x kv_rows block matrix.
Matrix part(const AttentionShape& shape, float* block, RunPair pair) {
  return {block + pair.queries.begin * shape.kv_rows + pair.keys.begin, shape.kv_rows};
}

// part(scores) = scale * q_h k_g^T over the pair, for query head h.
void scores_of(const AttentionShape& shape, const float* q, const float* k, std::int64_t h, RunPair pair,
               float* scores) {
  const Heads heads{shape};
  product(false, true, pair.queries.size(), pair.keys.size(), shape.head_dim, shape.scale,
          from_row(heads.q(q, h), pair.queries.begin), from_row(heads.kv(k, h), pair.keys.begin), 0.0,
          part(shape, scores, pair));
}

// Scores of row i, columns `keys`, become probabilities exp(score - lse), 0
// where hidden or where the query sees no key at all (lse = -inf).
void to_probabilities(const AttentionShape& shape, AttentionPositions positions, float* row, std::int64_t i, Run keys,
                      double lse) {
  const std::int64_t end = lse == kMinusInfinity ? keys.begin : visible_end(shape, positions, i, keys);
  const auto shift = static_cast<float>(lse);
  for (std::int64_t j = keys.begin; j < end; ++j) row[j] = exp_of_nonpositive(row[j] - shift);
  std::fill(row + end, row + keys.end, 0.0F);
}

// Turns the visible pairs' scores into probabilities, row by row over every
// pair, and writes each row's log-sum-exp (summed in double) to
// lse[i * lse_stride]: the softmax of the forward pass, which needs whole rows.
// The exponentials are taken in float (device/cpu/exp.hpp): their arguments
// are at most 0, and a float's rounding of them is far below the results'
// tolerance.
void softmax_rows(const AttentionShape& shape, AttentionPositions positions, const std::vector<RunPair>& pairs,
                  float* scores, float* lse, std::int64_t lse_stride) {
  constexpr float kFloatMinusInfinity = -std::numeric_limits<float>::infinity();
  std::vector<float> top(static_cast<std::size_t>(shape.q_rows), kFloatMinusInfinity);
  std::vector<double> sum(static_cast<std::size_t>(shape.q_rows), 0.0);
  // visit(i, row of scores, first, end) over each row's visible keys of each pair.
  auto each_row = [&](auto&& visit) {
    for (RunPair pair : pairs) {
      for (std::int64_t i = pair.queries.begin; i < pair.queries.end; ++i) {
        visit(i, scores + i * shape.kv_rows, pair.keys, visible_end(shape, positions, i, pair.keys));
      }
    }
  };
  each_row([&](std::int64_t i, const float* row, Run keys, std::int64_t end) {
    float row_top = top[i];
    for (std::int64_t j = keys.begin; j < end; ++j) row_top = std::max(row_top, row[j]);
    top[i] = row_top;
  });
  each_row([&](std::int64_t i, float* row, Run keys, std::int64_t end) {
    const float row_top = top[i];
    for (std::int64_t j = keys.begin; j < end; ++j) row[j] = exp_of_nonpositive(row[j] - row_top);
    double row_sum = 0.0;
    for (std::int64_t j = keys.begin; j < end; ++j) row_sum += row[j];
    sum[i] += row_sum;
  });
  each_row([&](std::int64_t i, float* row, Run keys, std::int64_t end) {
    const auto scale = static_cast<float>(1.0 / sum[i]);
    for (std::int64_t j = keys.begin; j < end; ++j) row[j] *= scale;
    std::fill(row + end, row + keys.end, 0.0F);
  });
  for (std::int64_t i = 0; i < shape.q_rows; ++i) {
    lse[i * lse_stride] = top[i] == kFloatMinusInfinity ? kFloatMinusInfinity
                                                        : static_cast<float>(top[i] + std::log(sum[i]));
  }
}

}  // namespace

void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                       AttentionPositions positions, float* o, float* lse) {
  const Heads heads{shape};
  const std::vector<RunPair> pairs = visible_pairs(shape, positions);
  // Entries of hidden pairs are never written nor read.
  std::vector<float> p(static_cast<std::size_t>(shape.q_rows * shape.kv_rows));
  for (std::int64_t h = 0; h < shape.q_heads; ++h) {
    for (RunPair pair : pairs) scores_of(shape, q, k, h, pair, p.data());
    softmax_rows(shape, positions, pairs, p.data(), lse + h, shape.q_heads);
    for (std::int64_t i = 0; i < shape.q_rows; ++i) {
      std::fill_n(o + i * heads.q_ld() + h * shape.head_dim, shape.head_dim, 0.0F);
    }
    // o_h += p v_g, pair by pair.
    for (RunPair pair : pairs) {
      product(false, false, pair.queries.size(), shape.head_dim, pair.keys.size(), 1.0, part(shape, p.data(), pair),
              from_row(heads.kv(v, h), pair.keys.begin), 1.0, from_row(heads.q(o, h), pair.queries.begin));
    }
  }
}

void attention_merge(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o, float* lse,
                     const float* o_other, const float* lse_other) {
  for (std::int64_t r = 0; r < rows * heads; ++r) {
    const double a = lse[r];
    const double b = lse_other[r];
    float* o_row = o + r * head_dim;
    const float* other_row = o_other + r * head_dim;
    if (a == kMinusInfinity && b == kMinusInfinity) {
      std::fill(o_row, o_row + head_dim, 0.0F);
      continue;
    }
    const double top = std::max(a, b);
    const double merged = top + std::log(std::exp(a - top) + std::exp(b - top));
    const double wa = std::exp(a - merged);
    const double wb = std::exp(b - merged);
    for (std::int64_t c = 0; c < head_dim; ++c) {
      o_row[c] = static_cast<float>(wa * o_row[c] + wb * other_row[c]);
    }
    lse[r] = static_cast<float>(merged);
  }
}

void attention_output_dot(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* d_o,
                         const float* o, float* delta) {
  for (std::int64_t r = 0; r < rows * heads; ++r) {
    double sum = 0.0;
    for (std::int64_t c = 0; c < head_dim; ++c) sum += static_cast<double>(d_o[r * head_dim + c]) * o[r * head_dim + c];
    delta[r] = static_cast<float>(sum);
  }
}

void attention_backward(const AttentionShape& shape, const AttentionGradientInputs& in, AttentionPositions positions, float* dq,
                        float* dk, float* dv) {
  const Heads heads{shape};
  const auto block = static_cast<std::size_t>(shape.q_rows * shape.kv_rows);
  std::vector<float> p(block);
  std::vector<float> ds(block);
  for (RunPair pair : visible_pairs(shape, positions)) {
    const Matrix p_part = part(shape, p.data(), pair);
    const Matrix ds_part = part(shape, ds.data(), pair);
    const Run rows = pair.queries;
    const Run cols = pair.keys;
    for (std::int64_t h = 0; h < shape.q_heads; ++h) {
      scores_of(shape, in.q, in.k, h, pair, p.data());
      for (std::int64_t i = rows.begin; i < rows.end; ++i) {
        to_probabilities(shape, positions, p.data() + i * shape.kv_rows, i, cols, in.lse[i * shape.q_heads + h]);
      }
      // dp = d_o_h v_g^T, then ds = p (dp - delta) scale, in place.
      product(false, true, rows.size(), cols.size(), shape.head_dim, 1.0, from_row(heads.q(in.d_o, h), rows.begin),
              from_row(heads.kv(in.v, h), cols.begin), 0.0, ds_part);
      for (std::int64_t i = rows.begin; i < rows.end; ++i) {
        const double row_delta = in.delta[i * shape.q_heads + h];
        for (std::int64_t j = cols.begin; j < cols.end; ++j) {
          const std::size_t e = static_cast<std::size_t>(i * shape.kv_rows + j);
          ds[e] = static_cast<float>(p[e] * (ds[e] - row_delta) * shape.scale);
        }
      }
      // dq_h += ds k_g; dk_g += ds^T q_h; dv_g += p^T d_o_h.
      product(false, false, rows.size(), shape.head_dim, cols.size(), 1.0, ds_part,
              from_row(heads.kv(in.k, h), cols.begin), 1.0, from_row(heads.q(dq, h), rows.begin));
      product(true, false, cols.size(), shape.head_dim, rows.size(), 1.0, ds_part,
              from_row(heads.q(in.q, h), rows.begin), 1.0, from_row(heads.kv(dk, h), cols.begin));
      product(true, false, cols.size(), shape.head_dim, rows.size(), 1.0, p_part,
              from_row(heads.q(in.d_o, h), rows.begin), 1.0, from_row(heads.kv(dv, h), cols.begin));
    }
  }
}

}  // namespace dtrain::device::cpu
