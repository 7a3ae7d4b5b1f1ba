/** @file
 * libdtrain — ZeRO stages 0–3 (stage 3 is FSDP): sharded optimizer state,
 * gradients and parameters.
 *
 * A dt_zero owns a model's parameters and gradients and trains them with an
 * optimizer (dtrain/optim.h) over the ranks of a communicator. What each rank
 * keeps, for Ψ parameters on N ranks (AdamW, 16-bit parameters):
 *
 *   stage 0  full parameters, full gradients, full optimizer  (2+2+12)Ψ
 *   stage 1  full parameters, full gradients, 1/N of the optimizer state
 *            and master weights                                4Ψ + 12Ψ/N
 *   stage 2  full parameters, 1/N of the gradients and of the optimizer
 *                                                              2Ψ + 14Ψ/N
 *   stage 3  1/N of everything; a unit's full parameters exist only
 *            between dt_zero_gather() and dt_zero_release()     16Ψ/N
 *
 * Layout. Parameters are grouped into units: contiguous runs of parameters in
 * registration order (forward order, first layer first), chosen by the
 * trainer (`unit_sizes`, typically one per layer) or else one per parameter
 * in stage 3 and buckets of about `bucket_bytes`, formed from the last
 * parameter backwards, in stages 0–2. Each unit is flattened and padded to a multiple of N
 * elements; rank r owns the r-th of its N equal shards, and updates only
 * those elements. Reductions run per unit, last unit first.
 *
 * A training step:
 *
 *   for each micro-step:
 *     forward:  for unit u = 0..U-1: dt_zero_gather(z, u);
 *                 dt_zero_gather_wait(z, u, -1); use dt_zero_parameter(z, i)
 *                 for the unit's i; dt_zero_release(z, u)
 *     backward: for unit u = U-1..0: gather and wait as above; add each
 *                 parameter's gradient into dt_zero_gradient(z, i) and
 *                 dt_zero_mark_ready(z, i); dt_zero_release(z, u)
 *     dt_zero_wait(z, -1)
 *   dt_zero_step(z, &info)
 *
 * In stages 0–2 gather, wait and release return at once, and parameters are
 * always whole, so a trainer written for stage 3 runs unchanged on all four.
 *
 * Gradients. dt_zero_gradient() hands out the buffer parameter i's gradient
 * is added into; it holds zeros at the start of a step (stages 0–1) or of the
 * micro-step (stages 2–3). A unit's reduction starts once all its parameters
 * are marked and every later unit's has started, so communication overlaps
 * the rest of backward. Stages 0–1 allreduce the full gradient buffer;
 * stages 2–3 reduce-scatter each unit into this rank's gradient shard, where
 * micro-steps add up, and then free the unit's buffer. Gradients are
 * averaged over the ranks.
 *
 * Gradient accumulation: micro-steps add up until dt_zero_step(). With
 * dt_zero_set_sync(z, 0), stages 0–1 skip the allreduce of that micro-step
 * (their gradients accumulate in the full buffer); stages 2–3 reduce anyway,
 * since they keep no full gradient. The result is the same either way.
 *
 * Prefetch (stage 3, `prefetch`): dt_zero_gather(u) also starts the gather
 * of the next unit in the direction of the gathers: u + 1 while they ascend
 * (forward), u - 1 while they descend (backward). Gathering the unit just
 * gathered again turns the direction around, as backward does when it
 * starts at the last unit of forward.
 *
 * With tensor or pipeline parallelism. The dt_zero's communicator holds the
 * replicas of this rank's part of the model (the data-parallel ranks: dp, or
 * dp x cp); the other parts live on other ranks. Gradient clipping needs the
 * norm of the whole model: pass the communicator over the ranks holding the
 * other parts (the tensor- and pipeline-parallel peers with this rank's
 * data-parallel coordinate, the mesh's tp x pp group) as `optim->comm`, and
 * list in `norm_excluded` the parameters this rank holds a copy of that a
 * peer there counts already (a layer norm's weight that every tensor-parallel
 * rank holds whole: leave it out on every tp rank but the first, as
 * Megatron-LM counts only parameters that are not tensor-parallel
 * duplicates). dt_zero_step() then sums the squared norm of the parameters
 * not excluded over the dt_zero's ranks (stages 1–3: shards) and over
 * `optim->comm` (an allreduce: every rank of it steps together), clips every
 * parameter, excluded ones included, by that one norm, and skips on inf/NaN
 * on every rank together.
 *
 * Checkpoints: dt_zero_save() writes each rank's shards of the master weights
 * and optimizer state and a metadata file describing the global tensors,
 * committed atomically; dt_zero_load() reads them on any number of ranks,
 * resharding as needed.
 *
 * Tensors: every parameter has the same dtype, float32, float16 or bfloat16,
 * and all are in host memory (kDLCPU, kDLCUDAHost) or all on the
 * communicator's CUDA device (kDLCUDA). The dt_zero keeps its parameters,
 * gradients, shards and optimizer state where the parameters given to
 * dt_zero_create() are, and describes them there (dt_zero_parameter(),
 * dt_zero_gradient()). Optimizer math, master weights (for 16-bit
 * parameters) and optimizer state are float32; gradients travel in the
 * parameters' dtype.
 *
 * CUDA streams. The trainer works on one stream (`stream` in the options;
 * NULL: the legacy default stream); the dt_zero queues its own work on a
 * stream of its own and orders the two without blocking where it can:
 * dt_zero_create() reads the initial parameters after the work queued on the
 * trainer's stream; work queued on that stream after dt_zero_gradient() sees
 * the zeroed buffer; a unit's reduction reads its gradients after the work
 * the trainer's stream held when the unit's last gradient was marked (so
 * mark a gradient once backward has queued its writes); dt_zero_release()
 * frees a unit after the work queued on the stream before it.
 * dt_zero_gather_wait(), dt_zero_wait() and dt_zero_step() return with their
 * results in place, for work on any stream; dt_zero_step() first waits for
 * the work queued on the trainer's stream, since it rewrites parameters
 * that work may read.
 *
 * Ownership: the dt_zero belongs to the caller (dt_zero_destroy()). It holds
 * its communicator's state: destroying the dt_comm first makes every later
 * call that communicates return DT_ERR_ABORTED. The parameter DLTensors given
 * to dt_zero_create() are only read during that call. The DLTensors filled by
 * dt_zero_parameter() and dt_zero_gradient() describe memory owned by the
 * dt_zero; their `shape` points into it too; they stay valid until the unit
 * is released (stage 3), the micro-step's reduction of the unit starts
 * (gradients, stages 2–3), or the dt_zero is destroyed.
 *
 * Collective calls (every rank, in the same order): create, wait, step,
 * save, load, and gathers in the same unit order. A rank's refusal of its
 * own arguments in create, save or load reaches the others as
 * DT_ERR_MISMATCH or DT_ERR_INVALID_ARGUMENT instead of a hang.
 *
 * Threads: one thread at a time per dt_zero, except dt_zero_mark_ready() and
 * dt_zero_gradient(), which backward engines may call from several threads.
 */
#ifndef DTRAIN_ZERO_H
#define DTRAIN_ZERO_H

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/optim.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"

DT_BEGIN_DECLS

/** A model trained with sharded data parallelism (ZeRO, FSDP) (opaque); see dt_zero_create(). */
typedef struct dt_zero dt_zero;

/** Options for dt_zero_create(); every rank must pass the same, but for `stream`.
 * Grows only at its end. */
typedef struct dt_zero_options {
  unsigned version;          /**< DT_ZERO_OPTIONS_VERSION */
  int stage;                 /**< 0, 1, 2 or 3 (default 1) */
  int64_t bucket_bytes;      /**< stages 0–2 without unit_sizes: unit size in bytes, >= 1;
                                DT_UNDEF: 25 MiB */
  /** Unit u holds the next unit_sizes[u] > 0 parameters; they add up to the
     number of parameters. NULL: one unit per parameter in stage 3, buckets
     of bucket_bytes in stages 0–2. Read during dt_zero_create() only. */
  const size_t *unit_sizes;
  size_t unit_count;         /**< entries in unit_sizes */
  int prefetch;              /**< stage 3: nonzero prefetches the next unit (default 1) */
  /* Version 2. */
  void *stream;              /**< CUDA parameters: the cudaStream_t the trainer reads parameters
                                and writes gradients on; NULL: the legacy default stream. Each
                                rank its own; ignored in host memory */
  /* Version 3. */
  /** Indices of parameters left out of the gradient norm on this rank
     because a rank of `optim->comm` counts the same gradient (see "With
     tensor or pipeline parallelism"); they are still clipped and updated.
     Each index < n, none repeated; needs `optim->comm`. NULL: none. Read
     during dt_zero_create() only; the dt_zero's ranks must pass the same. */
  const size_t *norm_excluded;
  size_t norm_excluded_count; /**< entries in norm_excluded */
} dt_zero_options;

/** The version of dt_zero_options this header describes. */
#define DT_ZERO_OPTIONS_VERSION 3u
/** A dt_zero_options with this version and every field at its default. */
#define DT_ZERO_OPTIONS_INIT { DT_ZERO_OPTIONS_VERSION, 1, DT_UNDEF, NULL, 0, 1, NULL, NULL, 0 }

/**
 * Bytes this rank holds now, by purpose. The caller sets `version`
 * (DT_ZERO_MEMORY_VERSION, or use the _INIT macro); the library writes the
 * other fields of that version. Grows only at its end.
 */
typedef struct dt_zero_memory {
  unsigned version;        /**< DT_ZERO_MEMORY_VERSION */
  int64_t parameters;      /**< full parameters (stages 0–2), or shards plus gathered units (stage 3) */
  int64_t gradients;       /**< full gradients (stages 0–1), or the gradient shard (stages 2–3) */
  int64_t optimizer_state; /**< float32 momentum / moments of the elements this rank updates */
  int64_t master_weights;  /**< float32 copies of the 16-bit parameters this rank updates */
  int64_t communication;   /**< unit gradient buffers of stages 2–3 and scratch space */
  int64_t padding;         /**< elements added to make units divisible by N, in bytes, included above */
  int64_t peak;            /**< the largest total of the five above since creation */
} dt_zero_memory;

/** The version of dt_zero_memory this header describes. */
#define DT_ZERO_MEMORY_VERSION 1u
/** A dt_zero_memory with this version and every field at its default. */
#define DT_ZERO_MEMORY_INIT { DT_ZERO_MEMORY_VERSION, 0, 0, 0, 0, 0, 0, 0 }

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_ZERO_OPTIONS_VERSION). DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a
 * version newer than this library's.
 */
DT_API dt_status dt_zero_options_init(dt_zero_options *opts, unsigned version);

/**
 * Creates a dt_zero over `n` > 0 parameters whose dtypes, shapes and initial
 * values are `params[0..n)` (read here only; rank 0's values are used on
 * every rank, so replicas start identical). Collective over `comm`.
 * `optim` NULL: AdamW with its defaults. `optim->comm`: NULL when the
 * parameters are the whole model (the dt_zero sums the norm over `comm`
 * itself); otherwise the ranks holding the model's other parts (see "With
 * tensor or pipeline parallelism"), which the dt_zero holds like `comm` and
 * allreduces on in dt_zero_step() (so nothing else may use it then); it must
 * not be `comm`. `opts` NULL:
 * defaults. DT_ERR_INVALID_ARGUMENT for a bad tensor, mixed dtypes or a bad
 * option (`optim->comm` equal to `comm`, a bad `norm_excluded`), parameters that mix host and device memory or sit on a device
 * other than the communicator's; DT_ERR_UNSUPPORTED for kDLCUDA tensors in
 * a build or on a machine without CUDA, or on a communicator without a CUDA
 * device; DT_ERR_MISMATCH when ranks disagree about the parameters or
 * options. The result belongs to the
 * caller.
 */
DT_API dt_status dt_zero_create(dt_zero **out, dt_comm *comm, const DLTensor *const *params, size_t n,
                                const dt_optimizer_options *optim, const dt_zero_options *opts);

/** Destroys `z` (NULL: no-op), waiting for communication still in flight within the deadline. */
DT_API dt_status dt_zero_destroy(dt_zero *z);

/**
 * Fills `out` with parameter `index`'s full tensor (its registered dtype and
 * shape, compact, memory owned by `z` where the parameters are: host
 * memory, or kDLCUDA on their device). Stage 3: only while its unit is
 * gathered and waited for, DT_ERR_INVALID_USAGE otherwise.
 */
DT_API dt_status dt_zero_parameter(dt_zero *z, size_t index, DLTensor *out);

/**
 * Fills `out` with the buffer parameter `index`'s gradient is added into in
 * this micro-step (see the top of this header). DT_ERR_INVALID_USAGE once
 * the gradient is marked in this micro-step.
 */
DT_API dt_status dt_zero_gradient(dt_zero *z, size_t index, DLTensor *out);

/**
 * Gradient `index` is final for this micro-step; its unit's reduction starts
 * when the unit is complete. DT_ERR_INVALID_ARGUMENT for an index >= n;
 * DT_ERR_INVALID_USAGE when already marked in this micro-step.
 */
DT_API dt_status dt_zero_mark_ready(dt_zero *z, size_t index);

/**
 * Ends a micro-step: starts the reductions not started yet and waits for all
 * of them for at most `timeout_ms` (negative: the communicator's deadline).
 * DT_ERR_INVALID_USAGE naming the gradients never marked. The micro-step is
 * then abandoned: stages 0–1 keep what it added in the full buffer; stages
 * 2–3 keep the share of the units whose reduction had already finished (a
 * unit's buffer is freed as soon as it is reduced) and drop the rest; either
 * way dt_zero_step() refuses until a micro-step under sync ends in
 * dt_zero_wait().
 */
DT_API dt_status dt_zero_wait(dt_zero *z, int timeout_ms);

/**
 * Turns the allreduce of stages 0–1 on (nonzero, the default) or off for the
 * micro-steps that follow (see "Gradient accumulation"). DT_ERR_INVALID_USAGE
 * in the middle of a micro-step.
 */
DT_API dt_status dt_zero_set_sync(dt_zero *z, int sync);

/**
 * Applies the optimizer to the gradients accumulated since the last step
 * (dtrain/optim.h: global norm over all shards, clipping, loss scale,
 * skipped on inf/NaN), makes the parameters whole again (stages 1–2:
 * allgather of the updated shards) and zeroes the gradients. Collective.
 * DT_ERR_INVALID_USAGE when the last micro-step was not ended with
 * dt_zero_wait() under sync, or a stage 3 unit is still gathered. `info`
 * may be NULL; otherwise its version must be set.
 */
DT_API dt_status dt_zero_step(dt_zero *z, dt_optimizer_step_info *info);

/**
 * Starts making unit `unit` whole (stage 3: allgather of its shards), plus
 * the prefetch described at the top. Does not block. Stages 0–2: returns at
 * once. DT_ERR_INVALID_ARGUMENT for a unit >= the unit count.
 */
DT_API dt_status dt_zero_gather(dt_zero *z, size_t unit);

/**
 * Waits until unit `unit` is whole, for at most `timeout_ms` (negative: the
 * communicator's deadline); then dt_zero_parameter() serves its parameters.
 * Gathers it first if dt_zero_gather() was not called. Stages 0–2: returns
 * at once.
 */
DT_API dt_status dt_zero_gather_wait(dt_zero *z, size_t unit, int timeout_ms);

/**
 * Hands unit `unit`'s full parameters back (stage 3: their memory is freed;
 * views of them become invalid). Stages 0–2: returns at once.
 * DT_ERR_INVALID_USAGE for a unit that is not gathered.
 */
DT_API dt_status dt_zero_release(dt_zero *z, size_t unit);

/** The number of units. */
DT_API dt_status dt_zero_unit_count(const dt_zero *z, size_t *out);

/** Sets the learning rate of the next steps (>= 0, finite). */
DT_API dt_status dt_zero_set_lr(dt_zero *z, float lr);

/** The current loss scale: what to multiply the next loss by (1 without loss scaling). */
DT_API dt_status dt_zero_loss_scale(const dt_zero *z, float *out);

/**
 * Fills `out` (its version set) with this rank's memory now and its peak.
 * In host memory a dt_zero keeps the buffers it releases (gathered units,
 * unit gradient buffers) for the next buffer of the same size, so that a
 * step does not map and fault in fresh pages for them; the fields above
 * count only buffers in use, and what is in use plus what is kept never
 * exceeds `peak`. CUDA memory goes back to the device's stream-ordered pool.
 */
DT_API dt_status dt_zero_memory_usage(const dt_zero *z, dt_zero_memory *out);

/**
 * Writes a checkpoint into directory `dir` (created if missing), replacing
 * the one there: each rank's shards of the master weights (the parameters
 * themselves when they are float32) and optimizer state, in
 * `shard-<rank>-<generation>.bin`, and rank 0's `metadata` (the generation,
 * world size, stage, dtype, optimizer kind, step count, loss scale, every
 * parameter's shape, and which elements and SHA-256 each shard file holds,
 * by index in the concatenation of all parameters). Collective; call
 * between steps.
 *
 * Atomic and durable: the shard files of a new generation are written and
 * fsynced first; once every rank has confirmed, rank 0 renames the new
 * metadata over the old (fsyncing the directory), which commits the save;
 * then it removes the files of earlier generations and of interrupted
 * saves (other files in `dir` are left alone). A save that fails or is
 * killed at any point before the commit leaves the previous checkpoint in
 * `dir` loadable and unchanged; after the commit, the new one.
 * DT_ERR_IO, on every rank, when a file cannot be written (a full disk
 * among them); the error of the communicator when a rank fails.
 */
DT_API dt_status dt_zero_save(dt_zero *z, const char *dir);

/**
 * Loads the checkpoint in `dir`, written on any number of ranks and any
 * stage, resharding it to this dt_zero's ranks and units. Collective; call
 * between steps. DT_ERR_INVALID_ARGUMENT, on every rank, for a missing,
 * truncated, corrupt or foreign file, or a checkpoint of other parameters
 * (count, dtype, shapes) or another optimizer kind; dt_error_last() says
 * which file and why. Either every rank loads everything or nothing changes.
 */
DT_API dt_status dt_zero_load(dt_zero *z, const char *dir);

DT_END_DECLS

#endif /* DTRAIN_ZERO_H */
