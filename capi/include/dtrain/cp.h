/** @file
 * libdtrain — context parallelism: attention over a sequence split between
 * the ranks of a communicator (ring attention, and all-to-all or "Ulysses"
 * attention), and the pieces it is made of (blockwise attention, merging
 * partial results, sequence layouts).
 *
 * Tensors. Every tensor is a contiguous row-major DLTensor. The attention
 * calls (dt_cp_attention, dt_cp_attention_merge and the ring and all-to-all
 * calls) take host memory (kDLCPU, kDLCUDAHost) or one CUDA device
 * (kDLCUDA), every tensor of a call where its first one is (else
 * DT_ERR_INVALID_ARGUMENT naming both places). CUDA tensors need a build
 * with CUDA and the device present (else DT_ERR_UNSUPPORTED); the ring and
 * all-to-all calls need a communicator that reaches them (NCCL, or the
 * staged path for ranks that share a device; see comm.h) and every rank's
 * tensors in the same kind of memory (else DT_ERR_MISMATCH on every rank).
 * On a device a call's work runs on a stream of the library's own that
 * first waits for the work queued before the call on the legacy default
 * stream (work on other streams that writes the inputs must be complete
 * before the call), and the call returns once its results are in place; the
 * ring's messages travel on a second stream of its own, so that they move
 * while the attention runs. The layout helpers (dt_cp_positions,
 * dt_cp_shard, dt_cp_unshard) take host memory only (kDLCUDA:
 * DT_ERR_UNSUPPORTED).
 *
 * Dtypes. The data tensors of an attention call (q, k, v, o, d_o, dq, dk,
 * dv; o and o_other for the merge) share one dtype, float32, float16 or
 * bfloat16 (else DT_ERR_INVALID_ARGUMENT); lse is float32 and positions int64
 * whatever it is. A call computes in float32: 16-bit tensors are widened
 * into float32 copies (in the same memory) and its outputs rounded once, to
 * nearest even. So a 16-bit output is within half a unit in the last place
 * (of the tensor's largest magnitude) of the float32 result from the same
 * values; the backward pass, which also starts from the rounded o of the
 * forward, gives gradients within one unit. The shapes:
 *
 *   q, o, dq       [s_q,  h_q,  d]   queries, outputs and their gradients
 *   k, v, dk, dv   [s_kv, h_kv, d]   keys, values and their gradients
 *   lse            [s_q,  h_q]       log-sum-exp of the scaled scores per
 *                                    query and head (natural logarithm)
 *   positions      [s]               int64 global token positions
 *
 * one row per token, then heads, then the head dimension. Grouped-query
 * attention: h_q must be a multiple of h_kv, and query head h attends with
 * key/value head h / (h_q / h_kv) (consecutive query heads share one, as
 * PyTorch's repeat_interleave of the key/value heads does).
 *
 * What attention computes, for query i and query head h, with g the
 * key/value head of h:
 *
 *   score(i, j) = scale * sum_c q[i, h, c] * k[j, g, c]
 *   visible(i, j) = not causal, or k_position[j] <= q_position[i]
 *   lse[i, h]  = log sum_{visible j} exp(score(i, j))
 *   o[i, h, :] = sum_{visible j} exp(score(i, j) - lse[i, h]) * v[j, g, :]
 *
 * A query that sees no key gets o = 0 and lse = -infinity. `scale` 0 means
 * 1 / sqrt(d); otherwise it must be positive and finite. `causal` is 0 or 1.
 * Products are float32 (BLAS on the host, cuBLAS on a device); softmax
 * statistics and merges are summed in double. On the host a causal block's
 * hidden parts are skipped; on a device the block is computed whole and
 * masked.
 *
 * Sequence layouts. A sequence of S tokens is split between cp ranks, each
 * holding S / cp rows, in one of two ways:
 *   DT_CP_CONTIGUOUS  rank r holds tokens [r * S/cp, (r + 1) * S/cp).
 *   DT_CP_ZIGZAG      the sequence is cut into 2 * cp chunks of S / (2 cp)
 *                     tokens; rank r holds chunk r followed by chunk
 *                     2 cp - 1 - r. With causal attention every rank then
 *                     has the same amount of work (in the contiguous layout
 *                     the last rank has 2 cp - 1 times the first rank's).
 * A rank's local rows are in increasing position order.
 *
 * Collectives: the ring and all-to-all calls are collective over `comm`
 * (every rank of it, e.g. the "cp" communicator of a dt_mesh) and blocking,
 * every rank passing its own shard of the same sequence. Before any data
 * moves, the ranks compare the layout, causal flag, scale and every shape:
 * ranks that disagree all get DT_ERR_MISMATCH (the message names the first
 * rank that differs from rank 0, and what differs); a rank whose own
 * arguments are invalid gets DT_ERR_INVALID_ARGUMENT (or DT_ERR_UNSUPPORTED)
 * and every other rank DT_ERR_MISMATCH naming it. Nothing is written then.
 * Failures of `comm` (DT_ERR_TIMEOUT, DT_ERR_REMOTE, DT_ERR_ABORTED, ...) are
 * those of any collective; outputs are then undefined. A ring call that
 * fails once its transfers have begun (DT_ERR_OUT_OF_MEMORY included) aborts
 * `comm`, so that no transfer outlives the call's buffers. The ring calls
 * exchange point-to-point messages on `comm`: the caller must not have sends
 * or receives of its own in flight on it meanwhile.
 *
 * The other calls are local. Outputs must not overlap inputs or each other.
 *
 * Threads: one thread at a time per communicator.
 */
#ifndef DTRAIN_CP_H
#define DTRAIN_CP_H

#include <dlpack/dlpack.h>

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"

DT_BEGIN_DECLS

/** How a sequence is split between the ranks of a context-parallel group (see above). */
typedef enum dt_cp_layout { DT_CP_CONTIGUOUS = 0, DT_CP_ZIGZAG = 1 } dt_cp_layout;

/**
 * The global positions of the S / cp tokens rank `cp_rank` of `cp_size` holds
 * in `layout`, into `positions` (int64, [s_local], s_local = S / cp). Local.
 * DT_ERR_INVALID_ARGUMENT: an unknown layout; cp_size < 1; cp_rank outside
 * 0..cp_size-1; `positions` NULL, not int64, not one-dimensional, or (zigzag)
 * of odd length.
 */
DT_API dt_status dt_cp_positions(dt_cp_layout layout, int cp_size, int cp_rank, DLTensor *positions);

/**
 * Copies the rows of `full` ([S, ...], any dtype) that rank `cp_rank` of
 * `cp_size` holds in `layout` into `local` ([S / cp_size, ...], the same
 * dtype and trailing dimensions), in local order. Local: the caller provides
 * the whole sequence. DT_ERR_INVALID_ARGUMENT: an unknown layout; cp_size < 1;
 * cp_rank out of range; a NULL or 0-dimensional tensor; S not divisible by
 * cp_size (contiguous) or by 2 * cp_size (zigzag); `local` of another shape
 * or dtype (the message gives both); `local` and `full` overlapping.
 */
DT_API dt_status dt_cp_shard(dt_cp_layout layout, int cp_size, int cp_rank, const DLTensor *full, DLTensor *local);

/**
 * The reverse of dt_cp_shard(): writes the rows of `local` to their places
 * in `full`, leaving the rows other ranks hold untouched (so that calling it
 * with every rank's shard rebuilds the sequence). Same shapes and errors as
 * dt_cp_shard().
 */
DT_API dt_status dt_cp_unshard(dt_cp_layout layout, int cp_size, int cp_rank, const DLTensor *local,
                               DLTensor *full);

/**
 * Blockwise attention (see above) of the queries `q` against one block of
 * keys and values `k`, `v`, into `o` and `lse`. `q_positions` ([s_q]) and
 * `k_positions` ([s_kv]) are the tokens' global positions (int64); they are
 * required when `causal` is 1 and ignored (may be NULL) when it is 0. Local.
 * DT_ERR_INVALID_ARGUMENT: a NULL tensor; dtypes other than those above
 * (one of float32, float16 and bfloat16 for q, k, v and o; float32 for
 * lse; int64 for positions); shapes other than those above (h_q not a multiple of h_kv,
 * head dimensions or lengths that differ, a zero dimension); causal not 0 or
 * 1; a bad scale; overlapping outputs; tensors in two places (the
 * positions are where q is). DT_ERR_UNSUPPORTED: CUDA memory without a
 * usable device.
 */
DT_API dt_status dt_cp_attention(const DLTensor *q, const DLTensor *k, const DLTensor *v,
                                 const DLTensor *q_positions, const DLTensor *k_positions, int causal,
                                 double scale, DLTensor *o, DLTensor *lse);

/**
 * Merges a second partial attention result (`o_other`, `lse_other`) of the
 * same queries against other keys into (`o`, `lse`), in place:
 *
 *   lse' = log(exp(lse) + exp(lse_other))
 *   o'   = exp(lse - lse') * o + exp(lse_other - lse') * o_other
 *
 * so that merging the results of disjoint key blocks gives attention over
 * their union. Where both lse are -infinity, o becomes 0 and lse stays
 * -infinity. o, o_other: [s, h, d], one dtype of float32, float16 and
 * bfloat16; lse, lse_other: float32 [s, h].
 * Local. DT_ERR_INVALID_ARGUMENT for NULL tensors, other dtypes or shapes.
 */
DT_API dt_status dt_cp_attention_merge(DLTensor *o, DLTensor *lse, const DLTensor *o_other,
                                       const DLTensor *lse_other);

/**
 * Ring attention, forward. Each rank holds its shard of the sequence in
 * `layout` (q: [s_local, h_q, d]; k, v: [s_local, h_kv, d], the same s_local
 * on every rank, even for zigzag) and gets `o` and `lse` for its own queries
 * against the whole sequence, positions following from the layout: exactly
 * dt_cp_attention() of its queries against the keys and values of every
 * rank. The key/value blocks travel around the ring of ranks (rank r sends
 * to r + 1 and receives from r - 1, cp - 1 times); the next block's transfer
 * is under way while the current one is computed. Collective and blocking
 * (see above). DT_ERR_INVALID_ARGUMENT, besides those of dt_cp_attention():
 * `comm` NULL, an unknown layout, an odd s_local with DT_CP_ZIGZAG (a
 * sequence not divisible by 2 * cp), k and v of another length than q.
 */
DT_API dt_status dt_cp_ring_attention_forward(dt_comm *comm, dt_cp_layout layout, int causal, double scale,
                                              const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *o,
                                              DLTensor *lse);

/**
 * Ring attention, backward: from the gradient `d_o` of the output
 * ([s_local, h_q, d]) and what the forward call took and returned (q, k, v,
 * o, lse, unchanged), the gradients of this rank's queries, keys and values
 * (`dq` like q, `dk` and `dv` like k), overwritten. Attention probabilities
 * are recomputed block by block from lse; dq accumulates on this rank. The
 * dk/dv accumulator of each other rank's block travels around the ring with
 * its keys and values, gathering the contribution of each rank it visits,
 * and reaches its owner last; a rank's own contribution to its own block
 * stays home, half of it computed before the first block arrives and half
 * while the accumulator comes home. Collective and blocking; the errors of
 * dt_cp_ring_attention_forward().
 */
DT_API dt_status dt_cp_ring_attention_backward(dt_comm *comm, dt_cp_layout layout, int causal, double scale,
                                               const DLTensor *q, const DLTensor *k, const DLTensor *v,
                                               const DLTensor *o, const DLTensor *lse, const DLTensor *d_o,
                                               DLTensor *dq, DLTensor *dk, DLTensor *dv);

/**
 * All-to-all (Ulysses) attention, forward: the same arguments, results and
 * errors as dt_cp_ring_attention_forward(), computed another way. An
 * all-to-all over `comm` gives each rank every token of h_q / cp query heads
 * and h_kv / cp key/value heads (rank j gets heads [j h / cp, (j + 1) h / cp)),
 * each rank attends over the whole sequence for those heads, and a second
 * all-to-all returns o and lse to the ranks holding the tokens. Fewer, larger
 * messages than the ring, but every rank holds the whole sequence for its
 * heads. DT_ERR_INVALID_ARGUMENT besides: h_q or h_kv not divisible by the
 * size of `comm`.
 */
DT_API dt_status dt_cp_ulysses_attention_forward(dt_comm *comm, dt_cp_layout layout, int causal, double scale,
                                                 const DLTensor *q, const DLTensor *k, const DLTensor *v,
                                                 DLTensor *o, DLTensor *lse);

/**
 * All-to-all (Ulysses) attention, backward: the same arguments, results and
 * errors as dt_cp_ring_attention_backward() (and those of
 * dt_cp_ulysses_attention_forward()), through the same two all-to-alls.
 */
DT_API dt_status dt_cp_ulysses_attention_backward(dt_comm *comm, dt_cp_layout layout, int causal, double scale,
                                                  const DLTensor *q, const DLTensor *k, const DLTensor *v,
                                                  const DLTensor *o, const DLTensor *lse, const DLTensor *d_o,
                                                  DLTensor *dq, DLTensor *dk, DLTensor *dv);

DT_END_DECLS

#endif /* DTRAIN_CP_H */
