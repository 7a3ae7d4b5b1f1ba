/** @file
 * libdtrain — expert parallelism (mixture of experts): top-k routing with a
 * capacity limit, the auxiliary losses, and the all-to-all exchange that
 * takes each token to the ranks holding its experts (dispatch) and brings
 * the experts' outputs back (combine), each with its backward pass.
 *
 * These are functional calls on DLTensors: the caller's autograd (torch
 * through DLPack, a Rust or Julia trainer, plain C) wraps them, and the
 * caller runs the experts themselves on the tokens a dispatch delivers.
 *
 * Notation. T: this rank's tokens; E: experts in the layer (every rank of the
 * ep communicator agrees on it); k: experts per token; H: the hidden size of a
 * token; ep: the size of the ep communicator. Experts are spread over the ep
 * ranks in blocks: ep rank r holds the E/ep experts r*E/ep .. (r+1)*E/ep - 1
 * (its "local experts", numbered 0 .. E/ep - 1 in that order). E must be a
 * multiple of ep.
 *
 * A layer, forward:
 *
 *   dt_moe_route(logits, opts, weights, experts, &dropped);     local
 *   dt_moe_plan_create(&plan, ep, experts, H, opts);            collective
 *   dt_moe_plan_received(plan, &R);  dt_moe_plan_expert_counts(plan, counts, E/ep);
 *   dt_moe_dispatch(plan, x, received);                         collective
 *   expert l computes on rows [offset_l, offset_l + counts[l]) of `received`
 *     (the caller's own experts, or dt_moe_experts_forward())
 *   dt_moe_combine(plan, expert_out, weights, y);               collective
 *
 * and backward, in reverse:
 *
 *   dt_moe_combine_backward(plan, dy, weights, d_expert_out, d_weights);
 *   the experts' backward, from d_expert_out to d_received
 *   dt_moe_dispatch_backward(plan, d_received, dx);
 *   dt_moe_route_backward(logits, d_weights, opts, d_logits);
 *   dt_moe_balance_loss(...) / dt_moe_z_loss(...) add their gradients to d_logits
 *
 * What the layer computes: y[t] = sum over j in 0..k-1 with experts[t][j] >= 0
 * of weights[t][j] * f_e(x[t]), e = experts[t][j], where f_e is what the caller's
 * expert e returns for that row. A (token, choice) pair dropped by the
 * capacity limit (experts[t][j] = -1) contributes nothing; a token whose
 * pairs were all dropped gets y[t] = 0 (the caller adds the residual).
 *
 * Tensors. Host memory (kDLCPU, kDLCUDAHost) or a CUDA device (kDLCUDA), all
 * the tensors of a call in one place (DT_ERR_INVALID_ARGUMENT naming both
 * otherwise; the experts' `counts` may stay in host memory whatever the
 * others' place). Where the work runs:
 *   - dispatch, combine, their backward passes and the built-in experts run
 *     where their tensors are: on a device, kernels and cuBLAS on the
 *     calling thread's stream for that device, which first waits for the
 *     work the legacy default stream holds, and the exchanges over the ep
 *     communicator (NCCL, or its staged path); each call returns once its
 *     results are in place;
 *   - routing, the losses and dt_moe_plan_create() compute on the host,
 *     from copies of device tensors made in the call, and copy their
 *     results back before returning: their [T, E] and [T, k] matrices are
 *     small, and the plan needs the choices on the host anyway (it sizes
 *     the exchanges from them).
 * Contiguous row-major.
 * Scores, weights and tokens are float32 (another dtype: DT_ERR_UNSUPPORTED);
 * expert indices and counts are int64 (another dtype:
 * DT_ERR_INVALID_ARGUMENT). Every tensor has exactly the dimensions stated
 * ([T, E] is two-dimensional, [E] one-dimensional, [L, H, F] three); any
 * other shape is DT_ERR_INVALID_ARGUMENT naming the argument and giving both
 * shapes. T may be 0 on any rank.
 * Outputs must not overlap inputs.
 *
 * Gradient groups. With the customary mesh (dtrain/mesh.h: tp, cp, ep, dp,
 * pp), the ranks along ep hold different experts and see different tokens.
 * An expert's parameters are replicated only across the ranks that hold the
 * same experts, the expert-data-parallel group: every mesh dimension except
 * ep, tp and pp, i.e. DT_MOE_EXPERT_GRAD_DIMS = "dp,cp" (sum or average
 * expert gradients over dt_mesh_comm(mesh, "dp,cp")). Parameters outside the
 * experts (attention, the router, norms) are replicated across ep too and
 * reduce over DT_MOE_DENSE_GRAD_DIMS = "dp,cp,ep". Tensor-parallel experts
 * would additionally shard within tp, and pipeline stages hold different
 * layers, so neither tp nor pp is ever in a gradient group.
 *
 * Collectives. dt_moe_plan_create(), dt_moe_dispatch(), dt_moe_combine(),
 * dt_moe_combine_backward() and dt_moe_dispatch_backward() are collective over
 * the ep communicator and blocking (they return when done, within its
 * timeout). Each first agrees with the other ranks on what is being done:
 * ranks that disagree about E, k or H, or call different operations, are
 * refused with DT_ERR_MISMATCH on every rank (the message names the setting
 * and the ranks); a rank whose own arguments are invalid gets its own error
 * (DT_ERR_INVALID_ARGUMENT, DT_ERR_UNSUPPORTED, DT_ERR_INVALID_USAGE) and every
 * other rank DT_ERR_MISMATCH naming it. Nothing is exchanged then, and
 * nothing written. Only a NULL `plan` (or `ep` for dt_moe_plan_create()) is
 * refused on its own rank alone, there being no communicator to tell the
 * others through: they wait until the communicator's timeout. Errors of the
 * communicator (DT_ERR_ABORTED, DT_ERR_TIMEOUT, ...) as for any collective.
 * The routing calls, the losses, the built-in experts and the plan's
 * queries are local.
 *
 * Threads: one thread at a time per plan. Errors are per thread.
 */
#ifndef DTRAIN_MOE_H
#define DTRAIN_MOE_H

#include <dlpack/dlpack.h>

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"

DT_BEGIN_DECLS

/** The mesh dimensions expert parameters reduce their gradients over (see above). */
#define DT_MOE_EXPERT_GRAD_DIMS "dp,cp"
/** The mesh dimensions the other parameters of an MoE model reduce over. */
#define DT_MOE_DENSE_GRAD_DIMS "dp,cp,ep"

/**
 * How router logits become scores s[t][e]:
 *   DT_MOE_SOFTMAX  s[t] = softmax(logits[t]) over the E experts (Switch, GShard, Mixtral);
 *   DT_MOE_SIGMOID  s[t][e] = 1 / (1 + exp(-logits[t][e])) (DeepSeek-V3).
 */
typedef enum dt_moe_scoring { DT_MOE_SOFTMAX = 0, DT_MOE_SIGMOID = 1 } dt_moe_scoring;

/**
 * Which (token, choice) pairs an expert over capacity drops. Every token
 * routes to an expert at most once, so an expert's pairs are its tokens:
 *   DT_MOE_DROP_BY_POSITION  it keeps its first `capacity` tokens (lowest token
 *                            index) and drops the later ones;
 *   DT_MOE_DROP_BY_SCORE     it keeps the `capacity` tokens with the highest
 *                            score s[t][e] (ties: the lower token index) and
 *                            drops the lowest-scoring ones.
 */
typedef enum dt_moe_drop_policy { DT_MOE_DROP_BY_POSITION = 0, DT_MOE_DROP_BY_SCORE = 1 } dt_moe_drop_policy;

/** Options of an MoE layer; every rank of the ep communicator passes the same. Grows only at its end. */
typedef struct dt_moe_options {
  unsigned version;            /**< DT_MOE_OPTIONS_VERSION */
  int num_experts;             /**< E >= 1; required (DT_UNDEF is refused) */
  int top_k;                   /**< k, 1 <= k <= E; required */
  /* scoring, normalize and drop_policy also take DT_UNDEF for their defaults. */
  dt_moe_scoring scoring;      /**< default DT_MOE_SOFTMAX */
  int normalize;               /**< nonzero: weights renormalised to sum to 1 over the k choices (default 0) */
  double capacity_factor;      /**< > 0: capacity = ceil(capacity_factor * T * k / E) tokens per
                                  expert on each rank; <= 0: dropless (default 0) */
  dt_moe_drop_policy drop_policy; /**< with a capacity; default DT_MOE_DROP_BY_POSITION */
} dt_moe_options;

/** The version of dt_moe_options this header describes. */
#define DT_MOE_OPTIONS_VERSION 1u
/** A dt_moe_options with this version and every field at its default. */
#define DT_MOE_OPTIONS_INIT { DT_MOE_OPTIONS_VERSION, DT_UNDEF, DT_UNDEF, DT_MOE_SOFTMAX, 0, 0.0, DT_MOE_DROP_BY_POSITION }

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_MOE_OPTIONS_VERSION); num_experts and top_k are left DT_UNDEF for the
 * caller to set. DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version
 * newer than this library's.
 */
DT_API dt_status dt_moe_options_init(dt_moe_options *opts, unsigned version);

/**
 * Routes this rank's T tokens. Local. `logits` [T, E] float32 (E =
 * opts->num_experts). For every token t, with scores s[t] (see dt_moe_scoring):
 *   - its k experts are the k largest s[t][e], largest first, ties to the
 *     lower expert index (top-k of the scores);
 *   - weights[t][j] = s[t][experts_j], or with opts->normalize that divided
 *     by the sum of the k chosen scores;
 *   - with a capacity (capacity_factor > 0), each expert keeps at most
 *     capacity = ceil(capacity_factor * T * k / E) of its tokens, chosen by
 *     opts->drop_policy; a dropped pair keeps its weight (renormalisation is
 *     over all k chosen scores, dropped or not) but its expert index becomes -1.
 * Writes `weights` [T, k] float32, `experts` [T, k] int64 (an expert index in
 * 0..E-1, or -1 for a dropped pair) and `*dropped` (may be NULL), the number
 * of pairs set to -1 (0 when dropless).
 * DT_ERR_INVALID_ARGUMENT: a NULL tensor or opts, a wrong shape, num_experts
 * or top_k unset or out of range, an unknown scoring or drop policy.
 * DT_ERR_UNSUPPORTED: logits or weights not float32.
 */
DT_API dt_status dt_moe_route(const DLTensor *logits, const dt_moe_options *opts, DLTensor *weights,
                              DLTensor *experts, int64_t *dropped);

/**
 * The backward pass of dt_moe_route(): from `d_weights` [T, k] float32, the
 * gradient of the loss with respect to the weights it returned, writes
 * `d_logits` [T, E] float32 (overwritten), the gradient with respect to
 * `logits` [T, E] (the same logits and options as the forward pass; the
 * top-k choice is recomputed from them and is not differentiated). Dropped
 * pairs count like any other here: their weight's gradient is what
 * `d_weights` says (dt_moe_combine_backward() gives them 0). Local. Errors as
 * for dt_moe_route().
 */
DT_API dt_status dt_moe_route_backward(const DLTensor *logits, const DLTensor *d_weights,
                                       const dt_moe_options *opts, DLTensor *d_logits);

/**
 * The load-balancing loss of Switch Transformer over this rank's tokens
 * (Fedus et al. 2021, eq. 4, generalised to k as in GShard and Megatron-Core):
 *
 *   loss = E * sum_i f_i * P_i,   f_i = counts[i] / (T * k),
 *   P_i = (1/T) sum_t p[t][i],
 *
 * where counts[i] is the number of tokens whose top-k choice (before any
 * capacity drop) includes expert i, and p[t] the router probabilities:
 * softmax(logits[t]) with DT_MOE_SOFTMAX, and with DT_MOE_SIGMOID the scores
 * normalised per token, s[t][i] / sum_e s[t][e] (DeepSeek-V3's). A uniform
 * router gives 1. With T = 0 the loss is 0.
 * Writes `*loss` (unscaled), `counts` [E] int64 when not NULL, and when
 * `d_logits` [T, E] float32 is not NULL ADDS coeff * d loss / d logits to
 * it (f is a count, treated as a constant, as in the papers). Local. Errors
 * as for dt_moe_route(); `loss` NULL is DT_ERR_INVALID_ARGUMENT.
 */
DT_API dt_status dt_moe_balance_loss(const DLTensor *logits, const dt_moe_options *opts, double coeff,
                                     double *loss, DLTensor *counts, DLTensor *d_logits);

/**
 * The router z-loss of ST-MoE (Zoph et al. 2022, eq. 5) over this rank's
 * tokens: loss = (1/T) sum_t (log sum_e exp(logits[t][e]))^2; 0 when T = 0.
 * `logits` [T, E] float32 with any E >= 1. Writes `*loss` (unscaled) and, when
 * `d_logits` [T, E] float32 is not NULL, ADDS coeff * d loss / d logits =
 * coeff * (2/T) * lse[t] * softmax(logits[t]) to it. Local.
 * DT_ERR_INVALID_ARGUMENT: NULL logits or loss, a wrong shape;
 * DT_ERR_UNSUPPORTED: not float32.
 */
DT_API dt_status dt_moe_z_loss(const DLTensor *logits, double coeff, double *loss, DLTensor *d_logits);

/**
 * The routing of one MoE layer's step across the ep communicator: which rows
 * go where, the counts every rank exchanged, and what the backward passes
 * need from the forward ones.
 */
typedef struct dt_moe_plan dt_moe_plan;

/**
 * Plans the exchange of this rank's tokens routed as `experts` [T, k] int64
 * (what dt_moe_route() wrote: indices in 0..E-1, or -1 for a pair that goes
 * nowhere; a token names an expert at most once) for tokens of `hidden` = H
 * >= 1 elements, over `ep`. Collective over `ep`: the ranks agree on E, k and
 * H (DT_ERR_MISMATCH on every rank otherwise), then exchange how many rows
 * each sends to each expert (one allgather of E int64 per rank) and the
 * number of rows all ranks send (one allreduce).
 * Of `opts` only num_experts and top_k matter here (the other fields must
 * still be valid); k must equal experts' second dimension.
 *
 * How rows travel. Where a rank's rows for one local expert come to at
 * least DTRAIN_MOE_EXCHANGE_BYTES bytes on average (an integer, default
 * 65536; 0: always), dispatch and combine move them with one all-to-all per
 * local expert that lands each row in its place; below, with one
 * all-to-all and a pass that reorders the rows on the experts' side, which
 * costs less than many small exchanges. The results are the same either
 * way. Ranks that set different values use their mean; a value that is not
 * an integer in 0..2^31-1 is refused with DT_ERR_INVALID_ARGUMENT, and
 * every other rank gets DT_ERR_MISMATCH.
 *
 * Straight copies. Where the ranks of `ep` run on one host, share memory
 * for their collectives and may read and write each other's memory (the
 * same user, ptrace allowed; not with DTRAIN_UCX_LOCAL_BYTES=0 or
 * DTRAIN_UCX_SINGLE_COPY_BYTES=0), host rows of a layer whose ranks
 * send at least DTRAIN_MOE_DIRECT_BYTES bytes of rows on average (default
 * 262144; 0: always; refused and averaged as above) skip the exchanges:
 * each rank writes its rows, taken from the token matrix, straight to their
 * places at the experts' ranks, and reads them back straight into its own
 * memory, DTRAIN_MOE_DIRECT_ROUND_BYTES of rows at a time (default 1048576,
 * this rank's alone; at least 1), which combine sums while they are in
 * cache. Every row is copied once, as by a raw all-to-all. Each such call
 * also makes two small collectives over `ep` (the addresses of the rows,
 * then that every rank's copies are done); a rank whose copies failed gets
 * their error, and every other rank DT_ERR_REMOTE naming it. Results are
 * the same as by exchanges. Peers copy into and out of a call's tensors
 * until every rank has said it is done: a call that ends in a timeout or
 * an abort of `ep` (the communicator then broken) may leave a stalled
 * peer still writing `received` or `d_expert_out`: after such a failure
 * those tensors hold no defined values, and a rank should not free them
 * before the job's other ranks have exited.
 *
 * Order of the rows a rank receives ("expert-major"): one contiguous block
 * per local expert, in local expert order; within a block, by source rank
 * (the rank in `ep`), and within a source, by token index at the source.
 * dt_moe_plan_expert_counts() gives the block sizes.
 *
 * Where rows travel: the plan's exchanges run in the place of the tensors
 * of its first dispatch, combine or backward call (host memory, or that
 * CUDA device, where it then keeps its indices and scratch rows); a later
 * call with tensors elsewhere is refused with DT_ERR_INVALID_ARGUMENT on its
 * rank ("... a plan keeps the place of its first call") and DT_ERR_MISMATCH
 * on the others. Every rank of a call must pass the same kind of memory
 * (host or CUDA): ranks that differ all get DT_ERR_MISMATCH. `experts` itself
 * may be anywhere.
 *
 * The plan keeps a reference to `ep`'s communicator (the caller may destroy
 * `ep` first; calls that communicate then fail with DT_ERR_ABORTED) and
 * belongs to the caller: dt_moe_plan_destroy(). One plan serves one forward
 * and backward pass of one layer; the tensors it is given must match it.
 * DT_ERR_INVALID_ARGUMENT: `out`, `ep`, `experts` or `opts` NULL, E not a
 * multiple of ep, k or E out of range, an index outside -1..E-1 or repeated in
 * a row, `hidden` < 1.
 */
DT_API dt_status dt_moe_plan_create(dt_moe_plan **out, dt_comm *ep, const DLTensor *experts, int64_t hidden,
                                    const dt_moe_options *opts);

/** Destroys `plan` (NULL: no-op). */
DT_API dt_status dt_moe_plan_destroy(dt_moe_plan *plan);

/** The global index of this rank's first local expert (rank * E/ep) and the number of local experts, E/ep. */
DT_API dt_status dt_moe_plan_local_experts(const dt_moe_plan *plan, int *first, int *count);

/** R: the number of rows this rank receives in dt_moe_dispatch() (the sum of the expert counts); may be 0. */
DT_API dt_status dt_moe_plan_received(const dt_moe_plan *plan, int64_t *rows);

/**
 * The rows this rank receives for each local expert, into counts[0..n-1]: the
 * block sizes of the expert-major order (block l starts at the sum of
 * counts[0..l-1]). `n` must equal E/ep (DT_ERR_INVALID_ARGUMENT otherwise,
 * nothing written).
 */
DT_API dt_status dt_moe_plan_expert_counts(const dt_moe_plan *plan, int64_t *counts, int n);

/**
 * Sends every kept pair's token to the rank of its expert: `tokens` [T, H]
 * float32 in, `received` [R, H] float32 out, in the expert-major order above
 * (row for pair (t, j) = tokens[t]). Collective over the plan's ep.
 */
DT_API dt_status dt_moe_dispatch(dt_moe_plan *plan, const DLTensor *tokens, DLTensor *received);

/**
 * The reverse exchange and the weighted sum: `expert_out` [R, H] float32 (the
 * experts' outputs, row for row in the order dt_moe_dispatch() delivered) goes
 * back to the tokens' ranks, and output[t] = sum over kept pairs (t, j) of
 * weights[t][j] * (the row that came back for (t, j)); `weights` [T, k]
 * float32, `output` [T, H] float32 (overwritten; 0 for a token with no kept
 * pair). The plan keeps the rows that came back (T*k*H floats at most) for
 * dt_moe_combine_backward(). Collective over the plan's ep.
 */
DT_API dt_status dt_moe_combine(dt_moe_plan *plan, const DLTensor *expert_out, const DLTensor *weights,
                                DLTensor *output);

/**
 * The backward pass of dt_moe_combine(), after it, with the same `weights`:
 * from `d_out` [T, H] float32 (the gradient with respect to `output`) writes
 *   d_weights [T, k] float32: d_weights[t][j] = dot(d_out[t], row of (t, j))
 *     for a kept pair, 0 for a dropped one;
 *   d_expert_out [R, H] float32: for each received row, weights[t][j] * d_out[t]
 *     of its pair, delivered to the expert's rank in the expert-major order.
 * Collective over the plan's ep. DT_ERR_INVALID_USAGE (this rank;
 * DT_ERR_MISMATCH on the others) before dt_moe_combine() ran on this plan.
 */
DT_API dt_status dt_moe_combine_backward(dt_moe_plan *plan, const DLTensor *d_out, const DLTensor *weights,
                                         DLTensor *d_expert_out, DLTensor *d_weights);

/**
 * The backward pass of dt_moe_dispatch(): `d_received` [R, H] float32 (the
 * gradient with respect to what dispatch delivered) goes back to the tokens'
 * ranks, and d_tokens[t] = the sum of the rows of its kept pairs (unweighted;
 * 0 for a token with none); `d_tokens` [T, H] float32, overwritten.
 * Collective over the plan's ep.
 */
DT_API dt_status dt_moe_dispatch_backward(dt_moe_plan *plan, const DLTensor *d_received, DLTensor *d_tokens);

/**
 * The activation between an expert MLP's two matrices (the formulas are
 * PyTorch's): DT_MOE_GELU_TANH 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
 * DT_MOE_GELU_ERF 0.5 x (1 + erf(x / sqrt(2))); DT_MOE_SILU x / (1 + exp(-x)).
 */
typedef enum dt_moe_activation { DT_MOE_GELU_TANH = 0, DT_MOE_GELU_ERF = 1, DT_MOE_SILU = 2 } dt_moe_activation;

/**
 * A built-in expert: L two-layer MLPs on rows grouped by expert, as
 * dt_moe_dispatch() delivers them (L = E/ep local experts, `counts` from
 * dt_moe_plan_expert_counts()). Local. With block l the counts[l] rows of `x`
 * starting at counts[0] + ... + counts[l-1]:
 *
 *   hidden_l = X_l W1[l]                  [counts[l], F]
 *   Y_l      = act(hidden_l) W2[l]        [counts[l], H]
 *
 * `x` [R, H], `counts` [L] int64 (each >= 0, summing to R), `w1` [L, H, F],
 * `w2` [L, F, H], all float32 but counts; writes `hidden` [R, F] (the
 * pre-activation, which dt_moe_experts_backward() needs) and `y` [R, H].
 * Products go through the device layer's GEMM (OpenBLAS on the host,
 * cuBLAS on a device); `counts` is read on the host (it may be in host
 * memory while the others are on a device).
 * DT_ERR_INVALID_ARGUMENT: a NULL or malformed tensor, shapes that do not fit
 * together, a negative count or counts not summing to R, an unknown
 * activation; DT_ERR_UNSUPPORTED: a float tensor not float32.
 */
DT_API dt_status dt_moe_experts_forward(const DLTensor *x, const DLTensor *counts, const DLTensor *w1,
                                        const DLTensor *w2, dt_moe_activation activation, DLTensor *hidden,
                                        DLTensor *y);

/**
 * The backward pass of dt_moe_experts_forward(), from `dy` [R, H] and the
 * forward's `x`, `counts`, `w1`, `w2`, `activation` and saved `hidden`:
 * writes (overwriting) `dx` [R, H], `dw1` [L, H, F] and `dw2` [L, F, H]; an
 * expert with no rows gets zero gradients. Local. Errors as for the forward.
 */
DT_API dt_status dt_moe_experts_backward(const DLTensor *x, const DLTensor *counts, const DLTensor *w1,
                                         const DLTensor *w2, dt_moe_activation activation, const DLTensor *hidden,
                                         const DLTensor *dy, DLTensor *dx, DLTensor *dw1, DLTensor *dw2);

DT_END_DECLS

#endif /* DTRAIN_MOE_H */
