// The GPT's own local math, on one rank's rows: layer norm, GELU, causal
// attention over the heads this rank holds, and the residual and position
// additions. Forward and backward, float32, row-major, host memory. Nothing
// here knows about ranks: the tensor-parallel layers are libdtrain's calls.
#pragma once

#include <cstdint>

namespace gpt {

// y = (x - mean) * rstd * g + b per row of `cols`; mean and rstd are saved
// (one per row) for the backward.
void layernorm_forward(const float *x, const float *g, const float *b, float *y, float *mean, float *rstd,
                       int64_t rows, int64_t cols);
// Adds the input gradient into `dx` (the residual branch's gradient is there
// already) and the parameter gradients into `dg` and `db`.
void layernorm_backward(const float *x, const float *mean, const float *rstd, const float *g, const float *dy,
                        float *dx, float *dg, float *db, int64_t rows, int64_t cols);

// GELU, tanh approximation (GPT-2's).
void gelu_forward(const float *x, float *y, int64_t n);
void gelu_backward(const float *x, const float *dy, float *dx, int64_t n);

// Causal self-attention of `heads` heads of `dim` each over `seqs` sequences
// of `len` tokens. `qkv` rows are [queries of every head | keys | values]
// (heads * dim each, head h at h * dim): the layout of a column-parallel
// QKV shard (DT_TP_SHARD_QKV). `out` rows are heads * dim; `probs` keeps the
// softmax [seqs, heads, len, len] for the backward.
void attention_forward(const float *qkv, float *out, float *probs, int64_t seqs, int64_t len, int64_t heads,
                       int64_t dim);
// Writes (not adds) `dqkv`, laid out like `qkv`.
void attention_backward(const float *qkv, const float *probs, const float *dout, float *dqkv, int64_t seqs,
                        int64_t len, int64_t heads, int64_t dim);

// Rows are sequences of `len` tokens whose positions are `where[0..len)`:
// x[r] += pos[where[r mod len]]; and its backward dpos[where[r mod len]] += dx[r].
void add_positions(float *x, const float *pos, const int64_t *where, int64_t rows, int64_t len, int64_t cols);
void positions_backward(const float *dx, float *dpos, const int64_t *where, int64_t rows, int64_t len,
                        int64_t cols);

// y[i] += x[i].
void add_into(float *y, const float *x, int64_t n);

}  // namespace gpt
