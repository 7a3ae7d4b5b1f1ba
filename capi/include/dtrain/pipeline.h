/** @file
 * libdtrain — pipeline schedules as data.
 *
 * A dt_pipeline_schedule lists, for every rank of a pipeline group, the
 * actions that rank runs in one training step, in order: forwards and
 * backwards of its model chunks on micro-batches, and the sends and
 * receives of activations and gradients between ranks. Building one is pure
 * computation: no communicator, no memory beyond the lists.
 *
 * Shape. `stages` = p ranks, `microbatches` = m, `chunks` = v model chunks
 * per rank. Chunk c of rank r is global stage c * p + r (Megatron's
 * interleaving), so the model runs through ranks 0..p-1 v times. With v = 1
 * the global stage is the rank. Ranks, chunks and micro-batches count from 0.
 *
 * Kinds (values fixed forever):
 *   DT_PIPELINE_GPIPE             every forward, then every backward, in
 *                                 micro-batch order. m micro-batches in flight.
 *   DT_PIPELINE_1F1B              rank r runs min(p - r - 1, m) forwards, then
 *                                 alternates one forward and one backward,
 *                                 then runs the remaining backwards. At most
 *                                 p - r micro-batches in flight on rank r
 *                                 (p on stage 0).
 *   DT_PIPELINE_INTERLEAVED_1F1B  1F1B over v >= 2 chunks per rank, as
 *                                 Megatron-Core: the k-th forward of a rank
 *                                 is chunk (k / p) mod v, micro-batch
 *                                 (k / (p v)) p + k mod p; its k-th backward
 *                                 is chunk v - 1 - (k / p) mod v, same
 *                                 micro-batch; rank r warms up
 *                                 with min((v - 1) p + 2 (p - r - 1), v m)
 *                                 forwards. m must be a multiple of p.
 *   DT_PIPELINE_ZB_H1             zero-bubble H1 (Qi et al., 2023): 1F1B's
 *                                 order with each backward split into
 *                                 BACKWARD_INPUT (B) and BACKWARD_WEIGHT (W);
 *                                 rank r runs its Ws in the order of its Bs,
 *                                 r behind: the W of its j-th B (from 0)
 *                                 follows its (j + r)-th B where there is
 *                                 one; the Ws left close the list. The Ws
 *                                 fill time the rank would otherwise wait.
 *                                 Peak in flight as 1F1B's on stage 0:
 *                                 min(p, m), on every rank.
 * GPIPE, 1F1B and INTERLEAVED_1F1B use one BACKWARD action (input and
 * weight gradients together); ZB_H1 uses BACKWARD_INPUT and
 * BACKWARD_WEIGHT and never BACKWARD. Every (chunk, micro-batch) of a rank
 * is forwarded once and backwarded once (ZB_H1: one B, then later one W).
 *
 * Communication. Each forward of a global stage s > 0 is immediately
 * preceded by RECV_ACTIVATION from the rank of stage s - 1, and each
 * forward of a stage s < v p - 1 immediately followed by SEND_ACTIVATION to
 * the rank of stage s + 1. Each BACKWARD / BACKWARD_INPUT of a stage
 * s < v p - 1 is immediately preceded by RECV_GRAD from the rank of stage
 * s + 1, and each of a stage s > 0 immediately followed by SEND_GRAD to the
 * rank of stage s - 1. BACKWARD_WEIGHT communicates nothing. With p = 1
 * there is no send or receive at all (the chunks of one rank hand over
 * locally). A send or receive carries the chunk and micro-batch of the
 * compute action it serves, so the message
 *   SEND_ACTIVATION (rank r, chunk c, micro-batch i)  matches
 *   RECV_ACTIVATION (rank (r + 1) mod p, chunk c + (r == p - 1), micro-batch i)
 *   SEND_GRAD       (rank r, chunk c, micro-batch i)  matches
 *   RECV_GRAD       (rank (r - 1) mod p, chunk c - (r == 0), micro-batch i)
 * and each send has exactly one matching receive. A tag built from (kind of
 * message, the sender's chunk, micro-batch) therefore identifies a message.
 *
 * Ordering guarantees, for an executor that runs each rank's list in order,
 * posts sends without waiting for them (waiting for all of them at the end
 * of the list, or before reusing a buffer, is fine) and blocks in receives:
 *   - it cannot deadlock: every send is posted right after the compute
 *     that produces its data and every receive sits right before the
 *     compute that needs it, so a rank blocks only where the computation
 *     itself must wait for another rank, and each kind's compute order lets
 *     every rank's list run to its end that way (checked by simulating all
 *     ranks together for every kind, 1 <= p <= 16, 1 <= m <= 64, v = 2
 *     and 3);
 *   - pairs are in a consistent order: for every sender, receiver and
 *     message kind (activation or gradient), the sender's sends come in the
 *     same order as the receiver's matching receives, so FIFO matching on
 *     one tag per direction is also correct;
 *   - compute order respects the dependencies: a forward of stage s runs
 *     after the forward of s - 1 on that micro-batch, a backward of s after
 *     the backward of s + 1 and after its own forward, a W after its B.
 *
 * Ownership: the dt_pipeline_schedule belongs to the caller
 * (dt_pipeline_schedule_destroy()). It is immutable, so any number of
 * threads may read one at once.
 */
#ifndef DTRAIN_PIPELINE_H
#define DTRAIN_PIPELINE_H

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"

DT_BEGIN_DECLS

/** A pipeline schedule: every rank's list of actions (opaque); see dt_pipeline_schedule_create(). */
typedef struct dt_pipeline_schedule dt_pipeline_schedule;

/** The schedule's algorithm (see the top of this header). Values fixed forever. */
typedef enum dt_pipeline_schedule_kind {
  DT_PIPELINE_GPIPE = 0,
  DT_PIPELINE_1F1B = 1,
  DT_PIPELINE_INTERLEAVED_1F1B = 2,
  DT_PIPELINE_ZB_H1 = 3
} dt_pipeline_schedule_kind;

/** What one action does. Values fixed forever. */
typedef enum dt_pipeline_action_kind {
  DT_PIPELINE_FORWARD = 0,         /**< forward of (chunk, microbatch) */
  DT_PIPELINE_BACKWARD = 1,        /**< input and weight gradients of (chunk, microbatch) */
  DT_PIPELINE_BACKWARD_INPUT = 2,  /**< input gradient only (ZB_H1) */
  DT_PIPELINE_BACKWARD_WEIGHT = 3, /**< weight gradient only (ZB_H1), after its BACKWARD_INPUT */
  DT_PIPELINE_SEND_ACTIVATION = 4, /**< send the forward output of (chunk, microbatch) to peer */
  DT_PIPELINE_RECV_ACTIVATION = 5, /**< receive the forward input of (chunk, microbatch) from peer */
  DT_PIPELINE_SEND_GRAD = 6,       /**< send the input gradient of (chunk, microbatch) to peer */
  DT_PIPELINE_RECV_GRAD = 7        /**< receive the output gradient of (chunk, microbatch) from peer */
} dt_pipeline_action_kind;

/** One step of a rank's list. A plain struct, fixed forever. */
typedef struct dt_pipeline_action {
  dt_pipeline_action_kind kind; /**< what to do */
  int chunk;      /**< this rank's model chunk, 0..chunks-1 (global stage chunk * stages + rank) */
  int microbatch; /**< 0..microbatches-1 */
  int peer;       /**< sends and receives: the other rank; compute actions: -1 */
} dt_pipeline_action;

/** Options for dt_pipeline_schedule_create(). Grows only at its end. */
typedef struct dt_pipeline_schedule_options {
  unsigned version;               /**< DT_PIPELINE_SCHEDULE_OPTIONS_VERSION */
  dt_pipeline_schedule_kind kind; /**< default DT_PIPELINE_1F1B */
  int stages;                     /**< p >= 1 ranks in the pipeline group; no default (DT_UNDEF is refused) */
  int microbatches;               /**< m >= 1; no default (DT_UNDEF is refused) */
  int chunks;                     /**< v per rank; DT_UNDEF: 2 for INTERLEAVED_1F1B, 1 otherwise */
} dt_pipeline_schedule_options;

/** The version of dt_pipeline_schedule_options this header describes. */
#define DT_PIPELINE_SCHEDULE_OPTIONS_VERSION 1u
/** A dt_pipeline_schedule_options with this version and every field at its default. */
#define DT_PIPELINE_SCHEDULE_OPTIONS_INIT \
  { DT_PIPELINE_SCHEDULE_OPTIONS_VERSION, DT_PIPELINE_1F1B, DT_UNDEF, DT_UNDEF, DT_UNDEF }

/** The most stages * microbatches * chunks one schedule may have. */
#define DT_PIPELINE_SCHEDULE_MAX_UNITS 1048576

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_PIPELINE_SCHEDULE_OPTIONS_VERSION): those of
 * DT_PIPELINE_SCHEDULE_OPTIONS_INIT. DT_ERR_INVALID_ARGUMENT for NULL,
 * version 0 or a version newer than this library's.
 */
DT_API dt_status dt_pipeline_schedule_options_init(dt_pipeline_schedule_options *opts, unsigned version);

/**
 * Builds the schedule `opts` describes and stores it in `*out` (the
 * caller's; free it with dt_pipeline_schedule_destroy()). On any error
 * nothing is allocated and `*out` is left as it was.
 * DT_ERR_INVALID_ARGUMENT, with dt_error_last() naming the argument or
 * field, for: `out` or `opts` NULL; opts->version 0 or newer than this
 * library's; a kind that is not a dt_pipeline_schedule_kind; stages or
 * microbatches below 1 (DT_UNDEF included); chunks other than 1 (or
 * DT_UNDEF) for GPIPE, 1F1B and ZB_H1; chunks below 2 for
 * INTERLEAVED_1F1B; microbatches not a multiple of stages for
 * INTERLEAVED_1F1B; stages * microbatches * chunks above
 * DT_PIPELINE_SCHEDULE_MAX_UNITS.
 */
DT_API dt_status dt_pipeline_schedule_create(dt_pipeline_schedule **out, const dt_pipeline_schedule_options *opts);

/** Frees `s` (NULL: no-op). Always DT_OK. */
DT_API dt_status dt_pipeline_schedule_destroy(dt_pipeline_schedule *s);

/**
 * The number of actions of rank `rank` (0..stages-1) in `*out`.
 * DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`, or a rank out of range.
 */
DT_API dt_status dt_pipeline_schedule_length(const dt_pipeline_schedule *s, int rank, size_t *out);

/**
 * Action `index` (0..length-1) of rank `rank` in `*out`.
 * DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`, a rank out of range or
 * an index past the end; `*out` is then unchanged.
 */
DT_API dt_status dt_pipeline_schedule_action(const dt_pipeline_schedule *s, int rank, size_t index,
                                             dt_pipeline_action *out);

/**
 * The fraction of a step each rank spends idle, in [0, 1), from the kind's
 * closed form. It is exact for a simulation in which every chunk's forward
 * takes 1 unit and its backward 2 (ZB_H1: FORWARD, BACKWARD_INPUT and
 * BACKWARD_WEIGHT 1 unit each), communication is free, and each action
 * starts as soon as its rank is free and its inputs have arrived:
 *   GPIPE, 1F1B        (p - 1) / (m + p - 1)
 *   INTERLEAVED_1F1B   (p - 1) / (v m + p - 1)
 *   ZB_H1              (p - 1 + e) / (3 m + p - 1 + e), e = max(0, p - m)
 * (ZB_H1 with m >= p idles (p - 1) units against 1F1B's 3 (p - 1): a third.)
 * DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`.
 */
DT_API dt_status dt_pipeline_schedule_bubble_fraction(const dt_pipeline_schedule *s, double *out);

/**
 * The most (chunk, micro-batch) pairs whose activations rank `rank` keeps
 * at once, counted along its list: a pair is alive from its FORWARD until
 * its BACKWARD, or its BACKWARD_WEIGHT for ZB_H1 (the weight gradient
 * still reads the saved inputs). 1F1B: min(p - rank, m); GPIPE: m.
 * DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`, or a rank out of range.
 */
DT_API dt_status dt_pipeline_schedule_peak_in_flight(const dt_pipeline_schedule *s, int rank, int *out);

/**
 * The executor: dt_pipeline runs one rank's list of a schedule, calling the
 * trainer's stage functions and moving activations and gradients between
 * the ranks of the pipeline group.
 *
 * Activations. Every activation that crosses a chunk boundary, and its
 * gradient, is one flat vector of `activation_elements` elements of
 * `activation_dtype` (the same at every boundary; a trainer reshapes it in
 * its callbacks and pads a smaller boundary). The executor owns these
 * buffers, in host memory (kDLCPU): about one per activation or gradient
 * on its way (received and not yet consumed, produced and not yet sent),
 * taken from a pool that is reused from step to step. A tensor handed to a callback is
 * valid only during that call; the trainer copies what it keeps (its saved
 * activations for backward are its own).
 *
 * Callbacks, each called on the thread that called dt_pipeline_step():
 *   forward(user, chunk, microbatch, input, output)
 *     for each FORWARD. `input` is the activation from the previous global
 *     stage, NULL on global stage 0 (the trainer reads its own micro-batch);
 *     `output` is where the trainer writes its activation for the next
 *     stage, NULL on the last global stage, where forward computes and keeps
 *     the micro-batch's loss itself (there is no loss callback).
 *   backward(user, chunk, microbatch, grad_output, grad_input)
 *     for each BACKWARD (input and weight gradients; the trainer accumulates
 *     its weight gradients over micro-batches) and each BACKWARD_INPUT of
 *     ZB_H1 (input gradient only). `grad_output` is the gradient of this
 *     chunk's output, NULL on the last global stage, which starts from its
 *     loss; `grad_input` is where the trainer writes the gradient of this
 *     chunk's input, NULL on global stage 0.
 *   backward_weight(user, chunk, microbatch)
 *     for each BACKWARD_WEIGHT of ZB_H1: the weight gradient of a
 *     micro-batch whose BACKWARD_INPUT ran earlier. Required for ZB_H1,
 *     refused for the other kinds.
 *   chunk_done(user, chunk)  (optional, NULL: none)
 *     once per chunk and step, right after the chunk's last BACKWARD or
 *     BACKWARD_WEIGHT of the step: its weight gradients are complete, so a
 *     trainer may start their data-parallel reduction here.
 * A callback returns DT_OK to go on; any other status ends the step.
 *
 * Messages. The executor posts the receives a compute action needs before
 * running the compute action that precedes it, so a message may arrive
 * while this rank computes; it waits for a receive right before the
 * compute that reads it. Sends are non-blocking: after each compute
 * action the buffers of completed sends go back to the pool, and
 * dt_pipeline_step() waits for the rest before it returns. Every wait has
 * the communicator's deadline.
 *
 * Timeline. With DTRAIN_TRACE_FILE set (docs/observability.md), each
 * compute action becomes a span of the Chrome trace, named as its kind is
 * spelt here ("FORWARD", "BACKWARD", "BACKWARD_INPUT", "BACKWARD_WEIGHT"),
 * category "pipeline", args step (this dt_pipeline's step count from 0),
 * chunk, microbatch and stage (the global stage); and each wait for a
 * message becomes a span "WAIT_ACTIVATION" or "WAIT_GRAD", category
 * "pipeline_wait", args step, chunk, microbatch and peer. Both go on the
 * thread "pipeline <comm label> (stage <rank> of <stages>)" of the rank,
 * beside its communicator's operations, so `dtrun`'s merged trace shows
 * the schedule as it ran on every rank. Without DTRAIN_TRACE_FILE nothing
 * is recorded.
 *
 * Failures. When a callback returns non-OK, dt_pipeline_step() returns that
 * status with dt_error_last() naming this rank and the action ("rank 1:
 * FORWARD of chunk 0, micro-batch 3: the callback returned ..."). When a
 * send or receive fails (a peer died: DT_ERR_REMOTE; no message within the
 * deadline: DT_ERR_TIMEOUT) the step returns that status naming this rank,
 * the action and the peer. Either way the executor aborts the communicator
 * so that no operation is left pending on its buffers: the communicator is
 * broken from then on (every later call on it, and every later step of a
 * pipeline of two stages or more, returns DT_ERR_ABORTED). The other ranks learn of the failure through
 * their own waits: DT_ERR_REMOTE when the failed rank's process ends,
 * otherwise DT_ERR_TIMEOUT at their deadline; none of them hangs.
 *
 * Ownership: the dt_pipeline belongs to the caller (dt_pipeline_destroy());
 * it keeps the communicator's connection alive (the caller may destroy the
 * dt_comm first) and copies what it needs of the schedule (which the caller
 * may destroy at once). One thread at a time per dt_pipeline.
 */
typedef struct dt_pipeline dt_pipeline;

/** The trainer's forward of (chunk, microbatch); see the callbacks above. */
typedef dt_status (*dt_pipeline_forward_fn)(void *user, int chunk, int microbatch, const DLTensor *input,
                                            DLTensor *output);
/** The trainer's backward of (chunk, microbatch); see the callbacks above. */
typedef dt_status (*dt_pipeline_backward_fn)(void *user, int chunk, int microbatch, const DLTensor *grad_output,
                                             DLTensor *grad_input);
/** ZB_H1's weight-gradient half of a backward; see the callbacks above. */
typedef dt_status (*dt_pipeline_backward_weight_fn)(void *user, int chunk, int microbatch);
/** A chunk's gradients are complete for this step; see the callbacks above. */
typedef dt_status (*dt_pipeline_chunk_done_fn)(void *user, int chunk);

/** Options for dt_pipeline_create(). Grows only at its end. */
typedef struct dt_pipeline_options {
  unsigned version;                              /**< DT_PIPELINE_OPTIONS_VERSION */
  int64_t activation_elements;                   /**< >= 1 elements per activation; no default (0 is refused) */
  DLDataType activation_dtype;                   /**< one of the eight dtypes; default float32 */
  dt_pipeline_forward_fn forward;                /**< required */
  dt_pipeline_backward_fn backward;              /**< required */
  dt_pipeline_backward_weight_fn backward_weight; /**< ZB_H1 only, and required there */
  dt_pipeline_chunk_done_fn chunk_done;          /**< optional */
  void *user;                                    /**< passed first to every callback */
} dt_pipeline_options;

/** The version of dt_pipeline_options this header describes. */
#define DT_PIPELINE_OPTIONS_VERSION 1u
/** A dt_pipeline_options with this version and every field at its default. */
#define DT_PIPELINE_OPTIONS_INIT \
  { DT_PIPELINE_OPTIONS_VERSION, 0, { kDLFloat, 32, 1 }, NULL, NULL, NULL, NULL, NULL }

/**
 * What one dt_pipeline_step() measured on this rank. The caller sets
 * `version` (DT_PIPELINE_STEP_INFO_INIT); the step writes the other fields
 * of that version. Grows only at its end.
 */
typedef struct dt_pipeline_step_info {
  unsigned version;         /**< DT_PIPELINE_STEP_INFO_VERSION */
  double step_seconds;      /**< the whole step, from its start until every send completed */
  double recv_wait_seconds; /**< time blocked waiting for receives: this rank's idle time */
  double comm_wait_seconds; /**< time blocked in any wait: receives and sends */
  double bubble_fraction;   /**< recv_wait_seconds / step_seconds (0 for an empty step) */
  int peak_in_flight;       /**< the most (chunk, micro-batch) pairs alive at once, as in
                               dt_pipeline_schedule_peak_in_flight() */
} dt_pipeline_step_info;

/** The version of dt_pipeline_step_info this header describes. */
#define DT_PIPELINE_STEP_INFO_VERSION 1u
/** A dt_pipeline_step_info with this version and every field at its default. */
#define DT_PIPELINE_STEP_INFO_INIT { DT_PIPELINE_STEP_INFO_VERSION, 0.0, 0.0, 0.0, 0.0, 0 }

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_PIPELINE_OPTIONS_VERSION): those of DT_PIPELINE_OPTIONS_INIT.
 * DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer than this
 * library's.
 */
DT_API dt_status dt_pipeline_options_init(dt_pipeline_options *opts, unsigned version);

/**
 * Creates an executor for this rank of `comm`, the pipeline group (e.g.
 * dt_mesh_comm(mesh, "pp")): its rank r runs rank r's list of `schedule`.
 * Local: nothing is sent, so every rank of the group must create its
 * executor with the same schedule and activation options. `*out` is the
 * caller's (dt_pipeline_destroy()); on error it is left as it was.
 * DT_ERR_INVALID_ARGUMENT, naming the argument or field, for: `out`,
 * `comm`, `schedule` or `opts` NULL; opts->version 0 or newer than this
 * library's; a communicator whose size is not the schedule's stages;
 * activation_elements below 1; an activation dtype libdtrain does not
 * accept; forward or backward NULL; backward_weight NULL for a ZB_H1
 * schedule, or set for any other kind.
 */
DT_API dt_status dt_pipeline_create(dt_pipeline **out, dt_comm *comm, const dt_pipeline_schedule *schedule,
                                    const dt_pipeline_options *opts);

/** Frees `p` (NULL: no-op). Always DT_OK. */
DT_API dt_status dt_pipeline_destroy(dt_pipeline *p);

/**
 * Runs one training step: this rank's actions, in order, calling the
 * callbacks as the top of this section describes, and returns once every
 * callback ran and every send completed. `info` (NULL: not wanted)
 * receives the step's measurements when the step succeeds.
 * DT_ERR_INVALID_ARGUMENT for a NULL `p` or an `info` version this library
 * does not write (nothing runs then). A callback's non-OK status, or
 * DT_ERR_REMOTE / DT_ERR_TIMEOUT / DT_ERR_TRANSPORT from a send or
 * receive, ends the step as described under "Failures"; DT_ERR_ABORTED
 * when the communicator was already broken (with stages >= 2: a single
 * stage never communicates).
 */
DT_API dt_status dt_pipeline_step(dt_pipeline *p, dt_pipeline_step_info *info);

DT_END_DECLS

#endif /* DTRAIN_PIPELINE_H */
