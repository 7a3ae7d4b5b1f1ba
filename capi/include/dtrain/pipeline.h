/*
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

#include "dtrain/common.h"
#include "dtrain/status.h"

DT_BEGIN_DECLS

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
  DT_PIPELINE_FORWARD = 0,         /* forward of (chunk, microbatch) */
  DT_PIPELINE_BACKWARD = 1,        /* input and weight gradients of (chunk, microbatch) */
  DT_PIPELINE_BACKWARD_INPUT = 2,  /* input gradient only (ZB_H1) */
  DT_PIPELINE_BACKWARD_WEIGHT = 3, /* weight gradient only (ZB_H1), after its BACKWARD_INPUT */
  DT_PIPELINE_SEND_ACTIVATION = 4, /* send the forward output of (chunk, microbatch) to peer */
  DT_PIPELINE_RECV_ACTIVATION = 5, /* receive the forward input of (chunk, microbatch) from peer */
  DT_PIPELINE_SEND_GRAD = 6,       /* send the input gradient of (chunk, microbatch) to peer */
  DT_PIPELINE_RECV_GRAD = 7        /* receive the output gradient of (chunk, microbatch) from peer */
} dt_pipeline_action_kind;

/** One step of a rank's list. A plain struct, fixed forever. */
typedef struct dt_pipeline_action {
  dt_pipeline_action_kind kind;
  int chunk;      /* this rank's model chunk, 0..chunks-1 (global stage chunk * stages + rank) */
  int microbatch; /* 0..microbatches-1 */
  int peer;       /* sends and receives: the other rank; compute actions: -1 */
} dt_pipeline_action;

/** Options for dt_pipeline_schedule_create(). Grows only at its end. */
typedef struct dt_pipeline_schedule_options {
  unsigned version;               /* DT_PIPELINE_SCHEDULE_OPTIONS_VERSION */
  dt_pipeline_schedule_kind kind; /* default DT_PIPELINE_1F1B */
  int stages;                     /* p >= 1 ranks in the pipeline group; no default (DT_UNDEF is refused) */
  int microbatches;               /* m >= 1; no default (DT_UNDEF is refused) */
  int chunks;                     /* v per rank; DT_UNDEF: 2 for INTERLEAVED_1F1B, 1 otherwise */
} dt_pipeline_schedule_options;

#define DT_PIPELINE_SCHEDULE_OPTIONS_VERSION 1u
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

DT_END_DECLS

#endif /* DTRAIN_PIPELINE_H */
