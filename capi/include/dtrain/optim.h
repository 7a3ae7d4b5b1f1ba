/** @file
 * libdtrain — optimizers: SGD and AdamW over the trainer's tensors.
 *
 * A dt_optimizer updates a set of parameter tensors from their gradient
 * tensors, both owned by the caller. One step:
 *   1. the global L2 norm of the gradients is computed (summed over the ranks
 *      of `comm` when the tensors are this rank's shard of a sharded model);
 *   2. when any gradient holds inf or NaN the step is skipped: parameters,
 *      gradients and optimizer state stay as they are, and a dynamic loss
 *      scale is lowered;
 *   3. otherwise the gradients are divided by the loss scale and, when their
 *      norm exceeds max_grad_norm, scaled down to it; the update is applied
 *      with those gradients, which are also written back into the gradient
 *      tensors (as clip-by-norm and unscaling do in place elsewhere).
 *
 * Precision: the math is float32. float16 and bfloat16 parameters get float32
 * master weights, made from the parameters at creation and owned by the
 * optimizer: each step updates the master and stores it, rounded to nearest
 * even, into the parameter. Optimizer state (momentum, moments) is float32.
 *
 * Tensors: parameters and gradients are float32, float16 or bfloat16, all of
 * them in host memory (kDLCPU, kDLCUDAHost) or all on one CUDA device
 * (kDLCUDA, one device_id); a mix is refused with DT_ERR_INVALID_ARGUMENT.
 * Each gradient has its parameter's dtype and shape. No two tensors may
 * overlap. Host tensors are updated by vectorised CPU loops. CUDA tensors are
 * updated on their device by fused multi-tensor kernels (one launch for every
 * tensor of a step), with the master weights and optimizer state in that
 * device's memory; the gradient norm is reduced there and only its value
 * comes back to the host. Their data must be memory of that device (or
 * managed memory), aligned to its element size (DT_ERR_INVALID_ARGUMENT
 * otherwise).
 * kDLCUDA tensors are refused with DT_ERR_UNSUPPORTED where this build has no
 * CUDA support or the process sees no CUDA device.
 *
 * Ordering on the device: the optimizer's kernels run on a stream of its own
 * that waits for work queued before the call on the legacy default stream
 * (stream 0), and dt_optimizer_step() and dt_optimizer_zero_grad() return
 * once their work on the device is done. Gradients produced on any other
 * stream must be complete (that stream synchronised) before the call.
 *
 * Ownership: the dt_optimizer returned through `out` belongs to the caller
 * (dt_optimizer_destroy(), which accepts NULL). The DLTensor structs are read
 * during dt_optimizer_create(); the memory they describe is borrowed until
 * the optimizer is destroyed, and the optimizer writes parameters and
 * gradients only inside dt_optimizer_step() and dt_optimizer_zero_grad().
 *
 * Threads: one thread at a time per optimizer.
 */
#ifndef DTRAIN_OPTIM_H
#define DTRAIN_OPTIM_H

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"

DT_BEGIN_DECLS

/** An optimizer over borrowed parameter and gradient tensors (opaque); see dt_optimizer_create(). */
typedef struct dt_optimizer dt_optimizer;

/** The update rule of a dt_optimizer. */
typedef enum dt_optimizer_kind {
  DT_OPTIM_SGD = 0,   /**< SGD with optional momentum, Nesterov momentum and L2 weight decay */
  DT_OPTIM_ADAMW = 1  /**< Adam with decoupled weight decay and bias correction */
} dt_optimizer_kind;

/**
 * Options for dt_optimizer_create(). Grows only at its end. The formulas are
 * PyTorch's torch.optim.SGD and torch.optim.AdamW, and the loss scaler
 * follows torch.cuda.amp.GradScaler.
 */
typedef struct dt_optimizer_options {
  unsigned version;        /**< DT_OPTIMIZER_OPTIONS_VERSION */
  dt_optimizer_kind kind;  /**< the update rule (default DT_OPTIM_ADAMW) */
  float lr;                /**< learning rate, >= 0 (default 1e-3) */
  float weight_decay;      /**< >= 0; SGD: added to the gradient (L2), AdamW: decoupled (default 0) */
  float momentum;          /**< SGD, in [0, 1); 0: plain SGD (default 0) */
  float dampening;         /**< SGD, in [0, 1] (default 0) */
  int nesterov;            /**< SGD, 0 or 1; 1 needs momentum > 0 and dampening 0 (default 0) */
  float beta1;             /**< AdamW, in [0, 1) (default 0.9) */
  float beta2;             /**< AdamW, in [0, 1) (default 0.999) */
  float eps;               /**< AdamW, > 0 (default 1e-8) */
  float max_grad_norm;     /**< > 0: clip the global gradient norm to this; <= 0: no clipping */
  float loss_scale;        /**< the factor the gradients arrive multiplied by, > 0 (default 1) */
  int dynamic_loss_scale;  /**< 0 or 1: adjust loss_scale as below (default 0) */
  float growth_factor;     /**< dynamic: the scale grows by this after growth_interval clean steps, > 1 (default 2) */
  float backoff_factor;    /**< dynamic: the scale shrinks by this on inf/NaN, in (0, 1) (default 0.5) */
  int growth_interval;     /**< dynamic: clean steps between growths, > 0; DT_UNDEF: 2000 */
  /** NULL: the tensors are the whole model. Otherwise they are this rank's
     shard of a model sharded over `comm`'s ranks: every step sums the squared
     gradient norm over them (an allreduce, so every rank must step together),
     which also makes all ranks skip together. Borrowed; it must stay open
     while the optimizer steps. Leave it NULL for replicated (DDP) tensors. */
  dt_comm *comm;
} dt_optimizer_options;

/** The version of dt_optimizer_options this header describes. */
#define DT_OPTIMIZER_OPTIONS_VERSION 1u
/** A dt_optimizer_options with this version and every field at its default. */
#define DT_OPTIMIZER_OPTIONS_INIT                                                         \
  { DT_OPTIMIZER_OPTIONS_VERSION, DT_OPTIM_ADAMW, 1e-3f, 0.0f, 0.0f, 0.0f, 0, 0.9f, 0.999f, \
    1e-8f, 0.0f, 1.0f, 0, 2.0f, 0.5f, DT_UNDEF, NULL }

/**
 * What one dt_optimizer_step() did. The caller sets `version`
 * (DT_OPTIMIZER_STEP_INFO_VERSION, or use the _INIT macro); the library
 * writes the other fields of that version. Grows only at its end.
 */
typedef struct dt_optimizer_step_info {
  unsigned version;   /**< DT_OPTIMIZER_STEP_INFO_VERSION */
  int skipped;        /**< 1: a gradient held inf or NaN and nothing was updated */
  double grad_norm;   /**< global L2 norm of the unscaled gradients before clipping (inf or NaN when skipped) */
  int64_t step;       /**< steps applied so far; skipped steps do not count */
  float loss_scale;   /**< the scale to multiply the next loss by */
} dt_optimizer_step_info;

/** The version of dt_optimizer_step_info this header describes. */
#define DT_OPTIMIZER_STEP_INFO_VERSION 1u
/** A dt_optimizer_step_info with this version and every field at its default. */
#define DT_OPTIMIZER_STEP_INFO_INIT { DT_OPTIMIZER_STEP_INFO_VERSION, 0, 0.0, 0, 0.0f }

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_OPTIMIZER_OPTIONS_VERSION). Only the fields that version has are
 * written. DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer
 * than this library's.
 */
DT_API dt_status dt_optimizer_options_init(dt_optimizer_options *opts, unsigned version);

/**
 * Creates an optimizer over `n` > 0 parameters `params[i]` with their
 * gradients `grads[i]`. `opts` NULL: AdamW with the defaults. Makes the
 * float32 master weights of float16/bfloat16 parameters and zeroed optimizer
 * state. DT_ERR_INVALID_ARGUMENT for a bad tensor, a gradient that does not
 * match its parameter, overlapping tensors or a bad option (dt_error_last()
 * names it), or tensors on more than one device; DT_ERR_UNSUPPORTED for
 * kDLCUDA tensors without CUDA support or a device; DT_ERR_OUT_OF_MEMORY when
 * the device cannot hold the master weights and state. Nothing is written on
 * failure. The optimizer belongs to the caller (dt_optimizer_destroy()).
 */
DT_API dt_status dt_optimizer_create(dt_optimizer **out, DLTensor *params, DLTensor *grads, size_t n,
                                     const dt_optimizer_options *opts);

/**
 * Takes one step (see the top of this header). `info` may be NULL; otherwise
 * its version must be set. With a `comm`, a failed allreduce returns its
 * error and nothing is updated.
 */
DT_API dt_status dt_optimizer_step(dt_optimizer *opt, dt_optimizer_step_info *info);

/** Sets every gradient to zero. */
DT_API dt_status dt_optimizer_zero_grad(dt_optimizer *opt);

/** Sets the learning rate of the next steps (>= 0, finite), e.g. for a schedule. */
DT_API dt_status dt_optimizer_set_lr(dt_optimizer *opt, float lr);

/** The current learning rate. */
DT_API dt_status dt_optimizer_lr(const dt_optimizer *opt, float *out);

/** The current loss scale: what to multiply the next loss by (1 without loss scaling). */
DT_API dt_status dt_optimizer_loss_scale(const dt_optimizer *opt, float *out);

/** Destroys `opt` (NULL: no-op), freeing master weights and state. The tensors stay the caller's. */
DT_API dt_status dt_optimizer_destroy(dt_optimizer *opt);

DT_END_DECLS

#endif /* DTRAIN_OPTIM_H */
