// Gathering rows of a table by index and scatter-adding rows into it, and
// summing MoE pairs' rows into their tokens (device/kernel_args.hpp):
// embeddings, and MoE dispatch and combine.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

// Calls body(i, row) for every index i, with the table row it names: -1 for
// an index outside a slice. A table that is not a slice must hold every
// index's row, checked before the first call.
template <typename Body>
void for_each_row(const IndexedRowsArgs& a, const char* what, Body&& body) {
  auto visit = [&](const auto* indices) {
    for (std::int64_t i = 0; !a.slice && i < a.count; ++i) {
      const std::int64_t index = indices[i];
      if (index < 0 || index >= a.table_rows) {
        raise(DT_ERR_INVALID_ARGUMENT, std::string(what) + ": indices[" + std::to_string(i) + "] = " +
                                           std::to_string(index) + " is outside the table's " +
                                           std::to_string(a.table_rows) + " rows");
      }
    }
    const std::int64_t first = a.slice ? a.first : 0;
    for (std::int64_t i = 0; i < a.count; ++i) {
      const std::int64_t row = static_cast<std::int64_t>(indices[i]) - first;
      body(i, row >= 0 && row < a.table_rows ? row : -1);
    }
  };
  if (a.index_dtype == DType::i32) {
    visit(static_cast<const std::int32_t*>(a.indices));
  } else {
    visit(static_cast<const std::int64_t*>(a.indices));
  }
}

template <typename E>
void scatter_add(const IndexedRowsArgs& a) {
  using Bits = typename E::Bits;
  const auto* rows = static_cast<const Bits*>(a.rows);
  auto* table = static_cast<Bits*>(a.table);
  for_each_row(a, "scatter_add_rows", [&](std::int64_t i, std::int64_t row) {
    if (row < 0) return;
    Bits* to = table + row * a.cols;
    const Bits* from = rows + i * a.cols;
    for (std::int64_t j = 0; j < a.cols; ++j) to[j] = E::store(E::load(to[j]) + E::load(from[j]));
  });
}

// DT_ERR_INVALID_ARGUMENT for a pair_rows entry outside [-1, table_rows).
void check_pair_rows(const PairRowsArgs& a, const char* what) {
  for (std::int64_t p = 0; p < a.tokens * a.k; ++p) {
    const std::int64_t row = a.pair_rows[p];
    if (row < -1 || row >= a.table_rows) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(what) + ": pair_rows[" + std::to_string(p) + "] = " +
                                         std::to_string(row) + " is outside the table's " +
                                         std::to_string(a.table_rows) + " rows");
    }
  }
}

// Output rows of at least this many bytes are streamed to memory around
// the caches: a combine's output is [T, H] with H in the thousands, which
// leaves the caches before the next layer reads it, and an ordinary store
// would first read in each line it writes (dtbench moe: combine 4-15 %
// faster at ep = 2).
constexpr std::size_t kStreamRowBytes = 4096;

// to = w[0] * from[0] + w[1] * from[1] + ..., rounded after each product
// and each addition in that order; zeros for n = 0. Streamed where `stream`
// and `to` is 16-byte aligned; end_streaming() then orders the stores
// before any that follow.
void sum_rows(const float* const* from, const float* w, int n, std::int64_t cols, float* to, bool stream) {
  if (n == 0) {
    std::fill(to, to + cols, 0.0f);
    return;
  }
  std::int64_t c = 0;
#if defined(__SSE2__)
  if (stream && reinterpret_cast<std::uintptr_t>(to) % 16 == 0) {
    for (; c + 4 <= cols; c += 4) {
      __m128 sum = _mm_mul_ps(_mm_set1_ps(w[0]), _mm_loadu_ps(from[0] + c));
      for (int p = 1; p < n; ++p) sum = _mm_add_ps(sum, _mm_mul_ps(_mm_set1_ps(w[p]), _mm_loadu_ps(from[p] + c)));
      _mm_stream_ps(to + c, sum);
    }
  }
#endif
  for (std::int64_t j = c; j < cols; ++j) to[j] = w[0] * from[0][j];
  for (int p = 1; p < n; ++p) {
    for (std::int64_t j = c; j < cols; ++j) to[j] += w[p] * from[p][j];
  }
}

void end_streaming(bool streamed) {
#if defined(__SSE2__)
  if (streamed) _mm_sfence();
#else
  (void)streamed;
#endif
}

}  // namespace

void gather_rows(const IndexedRowsArgs& args) {
  // A copy of bytes: any element size; all-zero bits are +0 in every floating format.
  const std::size_t row_bytes = static_cast<std::size_t>(args.cols) * dtype_size(args.dtype);
  const auto* table = static_cast<const std::byte*>(args.table);
  auto* rows = static_cast<std::byte*>(args.rows);
  for_each_row(args, "gather_rows", [&](std::int64_t i, std::int64_t row) {
    if (row < 0) {
      std::memset(rows + i * row_bytes, 0, row_bytes);
    } else {
      std::memcpy(rows + i * row_bytes, table + row * row_bytes, row_bytes);
    }
  });
}

void scatter_add_rows(const IndexedRowsArgs& args) {
  with_element(args.dtype, "scatter_add_rows", [&](auto e) { scatter_add<decltype(e)>(args); });
}

void pair_rows_sum(const PairRowsArgs& a) {
  check_pair_rows(a, "pair_rows_sum");
  const bool stream = static_cast<std::size_t>(a.cols) * sizeof(float) >= kStreamRowBytes;
  std::vector<const float*> from(static_cast<std::size_t>(a.k));
  std::vector<float> weights(static_cast<std::size_t>(a.k));
  for (std::int64_t t = 0; t < a.tokens; ++t) {
    int n = 0;
    for (std::int64_t p = t * a.k; p < (t + 1) * a.k; ++p) {
      const std::int64_t row = a.pair_rows[p];
      if (row < 0) continue;
      from[static_cast<std::size_t>(n)] = a.rows + row * a.cols;
      weights[static_cast<std::size_t>(n++)] = a.weights ? a.weights[p] : 1.0f;
    }
    sum_rows(from.data(), weights.data(), n, a.cols, a.out + t * a.cols, stream);
  }
  end_streaming(stream);
}

void pair_rows_sum_backward(const PairRowsArgs& a) {
  check_pair_rows(a, "pair_rows_sum_backward");
  for (std::int64_t p = 0; p < a.tokens * a.k; ++p) {
    const std::int64_t row = a.pair_rows[p];
    if (row < 0) {
      a.d_weights[p] = 0.0f;
      continue;
    }
    const float* d_token = a.d_out + (p / a.k) * a.cols;
    const float* from = a.rows + row * a.cols;
    float* d_row = a.d_rows + row * a.cols;
    const float w = a.weights[p];
    double dot = 0.0;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      dot += static_cast<double>(d_token[c]) * from[c];
      d_row[c] = w * d_token[c];
    }
    a.d_weights[p] = static_cast<float>(dot);
  }
}

}  // namespace dtrain::device::cpu
