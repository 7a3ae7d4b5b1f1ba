/** @file
 * libdtrain — tensor parallelism: Megatron-LM's conjugate mappings,
 * column- and row-parallel linear layers (with sequence parallelism),
 * vocabulary-parallel embedding and cross-entropy, and weight sharding.
 *
 * Every call is functional: forward and backward on tensors the caller owns,
 * over `tp`, the communicator of the tensor-parallel group (for instance
 * dt_mesh_comm(mesh, "tp")). A trainer's own autograd wraps them. Calls are
 * collective over `tp` exactly as documented (every rank makes the same calls
 * with the same shapes and flags); a rank whose shapes differ from its peers'
 * gets DT_ERR_MISMATCH from the collective, as do its peers. They block until
 * their results are in place, within the communicator's deadline.
 *
 * Shapes. A tensor of ndim >= 2 is a matrix of rows x cols, where cols is the
 * last dimension and rows the product of the others (tokens: batch x
 * sequence). "T" below is the rows of the full sequence, "T/tp" this rank's
 * block of rows under sequence parallelism (rank r holds rows
 * [r*T/tp, (r+1)*T/tp)). Weights are stored as PyTorch stores nn.Linear's:
 * out_features x in_features, y = x W^T + b. A size that does not divide by
 * the group size is refused with DT_ERR_INVALID_ARGUMENT naming the size and
 * tp: the library does not pad.
 *
 * Memory: host memory (kDLCPU, kDLCUDAHost) or one CUDA device (kDLCUDA),
 * every tensor of a call where its first tensor is (else
 * DT_ERR_INVALID_ARGUMENT naming both places). CUDA tensors need a build with
 * CUDA and the device present (else DT_ERR_UNSUPPORTED), and a communicator
 * that reaches them (NCCL, or the staged path for ranks that share a device;
 * see comm.h). On a device the call's work (GEMMs, kernels, copies,
 * collectives) runs on a stream of the library's own that first waits for
 * the work queued before the call on the legacy default stream (stream 0;
 * work on other streams that writes the inputs must be complete before the
 * call), and the call returns once its results are in place on the device.
 * The embedding and the cross-entropy copy the token ids, the targets and a
 * few numbers per row (f32 statistics) to the host, where the ids are
 * checked and the group's statistics combined.
 *
 * Dtypes: linear layers take f32, f16 or bf16 (one
 * dtype per call; 16-bit products accumulate in f32, as the device layer's
 * GEMM does), the mappings and the sharding any of the eight dtypes; the
 * embedding and the cross-entropy take f32
 * tables and logits, i32 or i64 token ids and targets. Bad arguments return
 * DT_ERR_INVALID_ARGUMENT before anything is written or sent.
 *
 * Ownership: every tensor is borrowed for the call.
 */
#ifndef DTRAIN_TP_H
#define DTRAIN_TP_H

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"

DT_BEGIN_DECLS

/** Flags of the linear layers and the embedding; combine with |. */
#define DT_TP_SEQUENCE_PARALLEL 1u /**< activations outside the layer are split by rows (T/tp each) */
#define DT_TP_GATHER_OUTPUT 2u     /**< column-parallel: y is gathered to all out_features */
#define DT_TP_ACCUMULATE 4u        /**< backward adds into dweight, dbias and dtable instead of overwriting */

/**
 * The conjugate mappings: what a caller running its own GEMMs puts at the
 * edges of a tensor-parallel region. Each is a pair (forward, backward).
 */
typedef enum dt_tp_region {
  /* forward: out = in (a copy, or nothing when in place); backward: grad_in = allreduce-sum(grad_out). */
  DT_TP_COPY = 0,
  /* forward: out = allreduce-sum(in); backward: grad_in = grad_out. */
  DT_TP_REDUCE = 1,
  /* forward: out [rows, cols/tp] = this rank's block of in's columns;
     backward: grad_in [rows, cols] = grad_out gathered along the columns. */
  DT_TP_SCATTER = 2,
  /* forward: out [rows, cols*tp] = in gathered along the columns (rank r's
     block at columns [r*cols, (r+1)*cols)); backward: grad_in = this rank's block. */
  DT_TP_GATHER = 3,
  /* sequence parallelism: forward: out [rows*tp, cols] = in gathered along the
     rows; backward: grad_in [rows/tp, cols] = this rank's block of the rows of
     reduce-sum(grad_out) (a reduce-scatter). */
  DT_TP_SEQ_GATHER = 4,
  /* forward: out [rows/tp, cols] = this rank's rows of reduce-sum(in);
     backward: grad_in [rows*tp, cols] = grad_out gathered along the rows. */
  DT_TP_SEQ_REDUCE_SCATTER = 5
} dt_tp_region;

/**
 * The forward half of `region`: `input` -> `output` ("in" and "out" above;
 * both of one dtype). DT_TP_COPY and DT_TP_REDUCE may run in place (same
 * data pointer).
 * DT_TP_COPY, DT_TP_SCATTER communicate nothing; the others are collective.
 */
DT_API dt_status dt_tp_region_forward(dt_comm *tp, dt_tp_region region, const DLTensor *input,
                                      DLTensor *output);

/**
 * The backward half of `region`: the gradient of its forward's output,
 * `grad_out`, -> the gradient of its input, `grad_in`. Shapes are those of
 * the forward's `output` and `input`. DT_TP_COPY and DT_TP_REDUCE may run in place.
 * DT_TP_REDUCE, DT_TP_GATHER communicate nothing; the others are collective.
 */
DT_API dt_status dt_tp_region_backward(dt_comm *tp, dt_tp_region region, const DLTensor *grad_out,
                                       DLTensor *grad_in);

/**
 * Column-parallel linear: this rank holds `weight` [out/tp, in] (rows
 * [r*out/tp, (r+1)*out/tp) of the full weight) and `bias` [out/tp] (or NULL).
 *
 *   y_r = x W_r^T + b_r
 *
 * `x` is [T, in], the same on every rank; with DT_TP_SEQUENCE_PARALLEL it is
 * this rank's [T/tp, in] and is all-gathered first. `y` is [T, out/tp]; with
 * DT_TP_GATHER_OUTPUT it is [T, out], gathered along the columns.
 * Communication: none, or one allgather (sequence parallel), plus one
 * allgather when gathering the output. With sequence parallelism this rank's
 * own rows of y are computed while the other ranks' rows of x arrive.
 */
DT_API dt_status dt_tp_column_linear_forward(dt_comm *tp, const DLTensor *x, const DLTensor *weight,
                                             const DLTensor *bias, DLTensor *y, unsigned flags);

/**
 * Backward of dt_tp_column_linear_forward() with the same `x`, `weight` and
 * `flags`; `dy` has the shape of its `y`.
 *
 *   dW_r = dy_r^T x      db_r = sum over rows of dy_r
 *   dx   = sum over ranks of dy_r W_r   (allreduce; with sequence parallelism
 *                                        a reduce-scatter to this rank's rows)
 *
 * `dx` has the shape of `x` and may be NULL (no input gradient and no
 * communication for it; every rank must pass NULL then); `dbias` may be NULL
 * (and must be when the forward had no bias, or is simply not computed);
 * `dweight` may be NULL (no weight gradient, and with sequence parallelism
 * no gathering of `x`). A zero-bubble schedule splits the backward in two
 * calls with the same arguments: `dweight` NULL for the input gradient, then
 * `dx` NULL for the weight's (and the bias's).
 * The reduction of dx runs while dW and db are computed, and a gathering of
 * x while dx is computed. With sequence
 * parallelism, `x` is either this rank's [T/tp, in], which is gathered again
 * (as Megatron-LM does, to keep one copy of the activations), or the whole
 * [T, in] the caller kept from the forward (for instance gathered by
 * dt_tp_region_forward(DT_TP_SEQ_GATHER)), which costs no communication; `dx`
 * is this rank's [T/tp, in] either way. DT_TP_ACCUMULATE adds into dweight
 * and dbias. Communication: one allreduce (or reduce-scatter) when dx is
 * wanted, plus one allgather when x is gathered again.
 */
DT_API dt_status dt_tp_column_linear_backward(dt_comm *tp, const DLTensor *x, const DLTensor *weight,
                                              const DLTensor *dy, DLTensor *dx, DLTensor *dweight,
                                              DLTensor *dbias, unsigned flags);

/**
 * Row-parallel linear: this rank holds `weight` [out, in/tp] (columns
 * [r*in/tp, (r+1)*in/tp) of the full weight); `bias` [out] (or NULL) is the
 * whole bias, the same on every rank, added once after the reduction.
 *
 *   y = sum over ranks of x_r W_r^T + b
 *
 * `x` is [T, in/tp] (the output of a column-parallel layer). `y` is [T, out]
 * (an allreduce) or, with DT_TP_SEQUENCE_PARALLEL, this rank's [T/tp, out]
 * (a reduce-scatter). DT_TP_GATHER_OUTPUT is refused.
 */
DT_API dt_status dt_tp_row_linear_forward(dt_comm *tp, const DLTensor *x, const DLTensor *weight,
                                          const DLTensor *bias, DLTensor *y, unsigned flags);

/**
 * Backward of dt_tp_row_linear_forward(); `dy` has the shape of its `y` (with
 * sequence parallelism it is all-gathered to [T, out] first).
 *
 *   dx_r = dy W_r      dW_r = dy^T x_r      db = sum over rows of dy (the
 *                                           whole bias's gradient, the same on every rank)
 *
 * `dx` [T, in/tp], `dweight` and `dbias` may be NULL (a zero-bubble
 * schedule's two halves, as for dt_tp_column_linear_backward()).
 * Communication: none, or one allgather with sequence parallelism, during
 * which the rows of dx that follow this rank's own rows of dy are computed.
 */
DT_API dt_status dt_tp_row_linear_backward(dt_comm *tp, const DLTensor *x, const DLTensor *weight,
                                           const DLTensor *dy, DLTensor *dx, DLTensor *dweight,
                                           DLTensor *dbias, unsigned flags);

/**
 * Vocabulary-parallel embedding: this rank holds rows [r*V/tp, (r+1)*V/tp) of
 * the [V, H] table as `table` [V/tp, H] (f32). `ids` (i32 or i64, T of them,
 * the same on every rank, each in [0, V)) select rows; each rank contributes
 * the rows it holds (zeros elsewhere) and the contributions are summed:
 * `output` is [T, H] (an allreduce) or, with DT_TP_SEQUENCE_PARALLEL, this
 * rank's [T/tp, H] (a reduce-scatter). An id outside [0, V) is refused.
 */
DT_API dt_status dt_tp_embedding_forward(dt_comm *tp, const DLTensor *table, const DLTensor *ids,
                                         DLTensor *output, unsigned flags);

/**
 * Backward of dt_tp_embedding_forward(): `dout` has the shape of its `output`
 * (all-gathered first with sequence parallelism); `dtable` [V/tp, H] gets,
 * for each id this rank holds, the sum of the rows of dout with that id
 * (overwritten, or added to with DT_TP_ACCUMULATE).
 */
DT_API dt_status dt_tp_embedding_backward(dt_comm *tp, const DLTensor *ids, const DLTensor *dout,
                                          DLTensor *dtable, unsigned flags);

/**
 * Vocabulary-parallel cross-entropy on `logits` [T, V/tp] (f32; rank r holds
 * classes [r*V/tp, (r+1)*V/tp)) against `targets` (i32 or i64, T of them, the
 * same on every rank). Writes, for each row t, `loss`[t] (f32) and the
 * log-sum-exp of the whole row, `lse`[t] (f32, for the backward):
 *
 *   loss = (1 - s) (lse - z_target) + s (lse - mean over V of z)
 *
 * with s = `label_smoothing` in [0, 1). A row whose target is `ignore_index`
 * has loss 0 (and lse still written); any other target outside [0, V) is
 * refused. The maximum, the sum of exponentials, the target logit and (with
 * smoothing) the sum of logits are reduced over `tp` in two allreduces; the
 * row maximum is subtracted first, so logits of magnitude 1e4 are exact.
 */
DT_API dt_status dt_tp_cross_entropy_forward(dt_comm *tp, const DLTensor *logits, const DLTensor *targets,
                                             DLTensor *loss, DLTensor *lse, float label_smoothing,
                                             int64_t ignore_index);

/**
 * Backward of dt_tp_cross_entropy_forward() with its `logits`, `targets`,
 * `lse`, `label_smoothing` and `ignore_index`, for `dloss` [T] (f32): writes
 * this rank's `dlogits` [T, V/tp] (f32; may be `logits` itself):
 *
 *   dlogits[t, j] = dloss[t] (exp(z[t, j] - lse[t]) - (1 - s) [j == target] - s / V)
 *
 * and zero on ignored rows. Local: communicates nothing.
 */
DT_API dt_status dt_tp_cross_entropy_backward(dt_comm *tp, const DLTensor *logits, const DLTensor *targets,
                                              const DLTensor *lse, const DLTensor *dloss, DLTensor *dlogits,
                                              float label_smoothing, int64_t ignore_index);

/** How a full weight is split over the tensor-parallel ranks. */
typedef enum dt_tp_shard_kind {
  /* By rows (dimension 0): column-parallel weights [out, in] and biases
     [out], vocabulary-parallel tables [V, H]. Rank r: rows [r*R/tp, (r+1)*R/tp). */
  DT_TP_SHARD_ROWS = 0,
  /* By columns (the last dimension): row-parallel weights [out, in].
     Rank r: columns [r*C/tp, (r+1)*C/tp) of every row. */
  DT_TP_SHARD_COLUMNS = 1,
  /* A fused query-key-value weight [(q + 2 kv) d, in] (or bias [(q + 2 kv) d]):
     the query rows of q heads of d rows each, then the key rows of kv heads,
     then the value rows of kv heads. Rank r gets its q/tp query heads, then
     its kv/tp key heads, then its kv/tp value heads: a [(q + 2 kv) d / tp, in]
     block in the same layout, so that its attention uses its own heads
     (grouped-query attention stays grouped). */
  DT_TP_SHARD_QKV = 2
} dt_tp_shard_kind;

/**
 * Copies rank `rank`'s shard of `full` into `local` (the same dtype, any of
 * the eight) for a group of `size` ranks. `q_heads` and `kv_heads` describe a
 * DT_TP_SHARD_QKV weight (both divisible by `size`, the rows by q + 2 kv) and
 * are ignored otherwise. Local: for initialising every rank from one full
 * weight (made from one seed) or a checkpoint.
 */
DT_API dt_status dt_tp_shard(dt_tp_shard_kind kind, const DLTensor *full, DLTensor *local, int rank, int size,
                             int q_heads, int kv_heads);

/**
 * The inverse of dt_tp_shard(), collective over `tp`: every rank passes its
 * `local` shard and receives the whole weight in `full`.
 */
DT_API dt_status dt_tp_unshard(dt_comm *tp, dt_tp_shard_kind kind, const DLTensor *local, DLTensor *full,
                               int q_heads, int kv_heads);

DT_END_DECLS

#endif /* DTRAIN_TP_H */
