/** @file
 * libdtrain — data parallelism (DDP).
 *
 * Every rank holds a full replica of the model and computes gradients on its
 * share of the batch; a dt_ddp averages the gradients over the ranks of a
 * communicator while backward is still running. A step:
 *
 *   dt_ddp_set_local_weight(ddp, n);  // weighted only, before the first mark
 *   ... backward: as each gradient i becomes final, dt_ddp_mark_ready(ddp, i)
 *   dt_ddp_wait(ddp, -1);             // the gradients now hold the averages
 *   ... optimizer step
 *
 * Buckets: gradients are grouped into flat buckets of about `bucket_bytes`,
 * filled in reverse registration order (backward produces the last layers'
 * gradients first). A bucket's allreduce starts as soon as all its gradients
 * are marked and every earlier bucket has started, so communication overlaps
 * the rest of backward; marks may arrive in any order, and in different
 * orders on different ranks.
 *
 * Gradient accumulation (PyTorch's no_sync): dt_ddp_set_sync(ddp, 0) for the
 * micro-steps that only accumulate, during which marking does nothing and
 * dt_ddp_wait() returns at once; dt_ddp_set_sync(ddp, 1) before the last one.
 *
 * Averaging divides by the number of ranks or, with `weighted`, computes
 * sum_r(w_r g_r) / sum_r(w_r) from each rank's dt_ddp_set_local_weight(): with
 * g_r the mean gradient over a rank's own samples and w_r their count, the
 * result is the mean over all samples even when batch sizes differ by rank.
 *
 * Creation is collective: ranks compare the number, dtypes and shapes of
 * their gradients and their options, and every rank fails with
 * DT_ERR_MISMATCH (naming the first gradient or option that differs, and the
 * rank) rather than hanging or mixing unrelated data later.
 *
 * Ownership: the dt_ddp belongs to the caller (dt_ddp_destroy). It keeps its
 * communicator's state alive; destroying the dt_comm first makes every later
 * call that communicates return DT_ERR_ABORTED. Gradients are borrowed: their
 * memory must stay valid and in place until dt_ddp_destroy(); the DLTensor
 * structs themselves are only read during dt_ddp_create(). Gradients must be
 * floating point (f32, f64, f16, bf16), either all in host memory (kDLCPU,
 * kDLCUDAHost) or all on the communicator's CUDA device (kDLCUDA).
 *
 * CUDA gradients: buckets live on the device. dt_ddp_mark_ready() queues the
 * copy of gradient i after the work already queued on the trainer's stream
 * (`stream` in the options), so call it once backward has queued the
 * gradient's computation, not necessarily run it; it does not block. When
 * dt_ddp_wait() returns, the averages are written, visible to work on any
 * stream. f64 CUDA gradients travel only uncompressed (DT_ERR_UNSUPPORTED
 * otherwise), and where libdtrain has no usable CUDA device, CUDA gradients
 * give DT_ERR_UNSUPPORTED.
 *
 * Threads: dt_ddp_mark_ready() may be called from any thread, from several
 * at once (calls on one dt_ddp are serialised). While a step is in flight,
 * the communicator must run no other collective unless every rank issues it
 * at the same point of its marks.
 */
#ifndef DTRAIN_DDP_H
#define DTRAIN_DDP_H

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"

DT_BEGIN_DECLS

/** A data-parallel gradient synchronizer (opaque); see dt_ddp_create(). */
typedef struct dt_ddp dt_ddp;

/** The type gradients travel in. f32 and f64 gradients are cast down for the
 * allreduce and back; 16-bit gradients travel as they are. */
typedef enum dt_ddp_compression {
  DT_DDP_COMPRESS_NONE = 0,
  DT_DDP_COMPRESS_F16 = 1,
  DT_DDP_COMPRESS_BF16 = 2
} dt_ddp_compression;

/** Where a bucket is in the current step (see dt_ddp_bucket_state()). */
typedef enum dt_bucket_state {
  DT_BUCKET_WAITING = 0,   /**< some of its gradients are not marked yet; nothing sent */
  DT_BUCKET_IN_FLIGHT = 1, /**< its allreduce is running */
  DT_BUCKET_REDUCED = 2,   /**< its allreduce is done; dt_ddp_wait() copies the result back */
  DT_BUCKET_FAILED = 3     /**< its allreduce failed; dt_ddp_wait() reports why */
} dt_bucket_state;

/** Options for dt_ddp_create(); every rank must pass the same, but for `stream`.
 * Grows only at its end. */
typedef struct dt_ddp_options {
  unsigned version;               /**< DT_DDP_OPTIONS_VERSION */
  int64_t bucket_bytes;           /**< bucket size on the wire (after compression), >= 1;
                                     DT_UNDEF: 25 MiB */
  dt_ddp_compression compression; /**< DT_DDP_COMPRESS_NONE */
  int find_unused;                /**< nonzero: gradients not marked in a step count as zero
                                     from this rank; 0 or DT_UNDEF: dt_ddp_wait() fails */
  int weighted;                   /**< nonzero: weight ranks by dt_ddp_set_local_weight();
                                     0 or DT_UNDEF: uniform average */
  /* Version 2. */
  void *stream;                   /**< CUDA gradients: the cudaStream_t backward writes them
                                     on; NULL: the legacy default stream. Each rank its own;
                                     ignored for host gradients */
} dt_ddp_options;

/** The version of dt_ddp_options this header describes. */
#define DT_DDP_OPTIONS_VERSION 2u
/** A dt_ddp_options with this version and every field at its default. */
#define DT_DDP_OPTIONS_INIT \
  { DT_DDP_OPTIONS_VERSION, DT_UNDEF, DT_DDP_COMPRESS_NONE, DT_UNDEF, DT_UNDEF, NULL }

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_DDP_OPTIONS_VERSION). Only the fields that version has are written.
 * DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer than this
 * library's.
 */
DT_API dt_status dt_ddp_options_init(dt_ddp_options *opts, unsigned version);

/**
 * Creates a DDP over the `n` gradients `grads[0..n)` (registration order:
 * forward order, first layer first). Collective over `comm`. `opts` NULL:
 * defaults. DT_ERR_INVALID_ARGUMENT for a NULL, non-floating, non-compact or
 * overlapping gradient, gradients that mix host and device memory, device
 * gradients on a device other than the communicator's or misaligned for it,
 * or a bad option; DT_ERR_UNSUPPORTED for CUDA gradients on a communicator
 * without a CUDA device, or float64 CUDA gradients with compression (the
 * other ranks then get DT_ERR_MISMATCH saying which rank refused);
 * DT_ERR_MISMATCH when ranks disagree about the gradients or options. The
 * result belongs to the caller.
 */
DT_API dt_status dt_ddp_create(dt_ddp **out, dt_comm *comm, const DLTensor *const *grads, size_t n,
                               const dt_ddp_options *opts);

/**
 * Destroys `ddp` (NULL: no-op). Allreduces still in flight are waited for,
 * within the communicator's deadline, since they write into the DDP's buffers.
 */
DT_API dt_status dt_ddp_destroy(dt_ddp *ddp);

/**
 * Gradient `index` is final for this step: it is copied into its bucket, and
 * the bucket's allreduce starts once the bucket is complete and every earlier
 * bucket has started. Does nothing with sync off. DT_ERR_INVALID_ARGUMENT for
 * an index >= n; DT_ERR_INVALID_USAGE for an index already marked in this step.
 */
DT_API dt_status dt_ddp_mark_ready(dt_ddp *ddp, size_t index);

/**
 * Turns averaging on (nonzero) or off (0) for the steps that follow; on at
 * creation. DT_ERR_INVALID_USAGE while a step has marked gradients that
 * dt_ddp_wait() has not finished.
 */
DT_API dt_status dt_ddp_set_sync(dt_ddp *ddp, int sync);

/**
 * This rank's weight in the average, from the next step on (1 until set):
 * finite and >= 0, for example the number of samples in this rank's batch.
 * DT_ERR_INVALID_ARGUMENT otherwise; DT_ERR_INVALID_USAGE without the
 * `weighted` option or after the step's first mark.
 */
DT_API dt_status dt_ddp_set_local_weight(dt_ddp *ddp, double weight);

/**
 * Finishes the step: starts the buckets not started yet, waits for all of
 * them for at most `timeout_ms` (negative: the communicator's deadline) and
 * leaves the averaged gradients in place. With sync off, returns DT_OK at
 * once and changes nothing.
 *
 * Gradients never marked in this step: DT_ERR_INVALID_USAGE naming them, the
 * step abandoned and every gradient left as it was; or, with `find_unused`,
 * they count as zero from this rank and receive the average like the others.
 * Weights that add up to zero: DT_ERR_INVALID_USAGE. After DT_ERR_TIMEOUT,
 * DT_ERR_REMOTE or DT_ERR_TRANSPORT the communicator is broken and some
 * gradients may already hold their averages. The next step starts afresh in
 * every case.
 */
DT_API dt_status dt_ddp_wait(dt_ddp *ddp, int timeout_ms);

/** The number of buckets. */
DT_API dt_status dt_ddp_bucket_count(const dt_ddp *ddp, size_t *out);

/** The bucket that holds gradient `index`; bucket 0 starts first. */
DT_API dt_status dt_ddp_bucket_of(const dt_ddp *ddp, size_t index, size_t *out);

/** Where bucket `bucket` is in the current step; never blocks. */
DT_API dt_status dt_ddp_bucket_state(const dt_ddp *ddp, size_t bucket, dt_bucket_state *out);

/**
 * Makes replicas start identical: every rank's `params[0..n)` become those of
 * rank `root`. Collective over `comm` and blocking (the communicator's
 * deadline). Any supported dtype, integer buffers included, all in host
 * memory or all on the communicator's CUDA device (ordered as a collective
 * with a NULL stream is, see comm.h; in place on return). DT_ERR_MISMATCH
 * on every rank when ranks disagree about the count, dtypes, shapes or root;
 * DT_ERR_INVALID_ARGUMENT on a rank whose own tensors or root are bad (the
 * others then get DT_ERR_MISMATCH).
 */
DT_API dt_status dt_ddp_broadcast_parameters(dt_comm *comm, DLTensor *const *params, size_t n, int root);

DT_END_DECLS

#endif /* DTRAIN_DDP_H */
