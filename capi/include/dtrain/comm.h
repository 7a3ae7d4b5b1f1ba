/** @file
 * libdtrain — communicators, collectives and requests.
 *
 * Ownership: a dt_comm* or dt_request* returned through an `out` argument
 * belongs to the caller, who releases it with dt_comm_destroy() or
 * dt_request_free(); both accept NULL. Tensors are borrowed (see tensor.h).
 *
 * Threads: a communicator is bound to one thread, the one that created it
 * (dt_comm_create(), dt_comm_split(), dt_mesh_comm()), until
 * dt_comm_bind_thread() says otherwise. Its collectives, point-to-point
 * calls and splits (this header) called from another thread return
 * DT_ERR_INVALID_USAGE and change nothing: two threads' calls could be
 * ordered differently on different ranks, pairing the wrong buffers, and no
 * rank could tell. Queries, dt_comm_stats(), dt_comm_abort() (which never
 * blocks) and dt_comm_destroy() may come from any thread, as may waits on a
 * request. Strategies built on a communicator (ddp.h, zero.h, tp.h, ...)
 * order its use themselves and follow their own headers' thread rules.
 * Unbound (dt_comm_bind_thread(comm, 0)), any thread may call, one at a
 * time: a thread that starts an operation while another thread is starting
 * one, or is inside a blocking one, gets DT_ERR_INVALID_USAGE naming both
 * calls, and the communicator breaks; threads that take turns must still
 * make the same calls in the same order on every rank.
 *
 * Asynchrony: an operation that communicates ends with `dt_request **req`.
 * NULL means blocking: the call returns when the operation is done or the
 * communicator's deadline has passed. Otherwise the call returns at once with a
 * request, finished with dt_request_wait() or dt_request_test(). Collectives
 * on one communicator complete in the order they were issued; point-to-point
 * messages are matched by peer and tag. Buffers must stay valid until the
 * operation completes.
 *
 * Failures: after DT_ERR_TIMEOUT, DT_ERR_REMOTE or DT_ERR_TRANSPORT (or an
 * abort) the communicator is broken: every later call on it returns
 * DT_ERR_ABORTED until it is destroyed. A call refused with
 * DT_ERR_INVALID_ARGUMENT changes nothing and leaves the communicator usable.
 */
#ifndef DTRAIN_COMM_H
#define DTRAIN_COMM_H

#include "dtrain/common.h"
#include "dtrain/status.h"
#include "dtrain/tensor.h"

DT_BEGIN_DECLS

/** A communicator: a group of ranks that run collectives together (opaque). */
typedef struct dt_comm dt_comm;
/** A non-blocking operation in flight (opaque); see dt_request_wait(). */
typedef struct dt_request dt_request;

/** The transport of a communicator's collectives. */
typedef enum dt_backend {
  DT_BACKEND_AUTO = 0, /**< NCCL for CUDA tensors when every rank has its own GPU and NCCL loads; UCX otherwise */
  DT_BACKEND_UCX = 1,  /**< UCX */
  DT_BACKEND_NCCL = 2  /**< NCCL for CUDA tensors, required */
} dt_backend;

/** How a reduction combines the ranks' elements. */
typedef enum dt_reduce_op {
  DT_SUM = 0, /**< the sum */
  DT_AVG = 1, /**< floating-point dtypes only */
  DT_MAX = 2, /**< the largest */
  DT_MIN = 3, /**< the smallest */
  DT_PROD = 4 /**< the product */
} dt_reduce_op;

/**
 * The out-of-band allgather a caller may supply for rendezvous (for example an
 * MPI_Allgather). Every rank contributes `bytes` bytes from `send`; `recv`
 * receives world_size * bytes, in rank order. Returns DT_OK or an error.
 */
typedef dt_status (*dt_oob_allgather_fn)(void *user, const void *send, void *recv, size_t bytes);

/** Options for dt_comm_create(). Grows only at its end. */
typedef struct dt_comm_options {
  unsigned version;        /**< DT_COMM_OPTIONS_VERSION */
  int rank;                /**< DT_UNDEF: from the environment */
  int world_size;          /**< DT_UNDEF: from the environment */
  const char *store;       /**< "host:port" of the rendezvous store; NULL: environment */
  const char *auth_token;  /**< shared secret; NULL: DTRAIN_AUTH_TOKEN */
  dt_backend backend;      /**< DT_BACKEND_AUTO (0) unless set */
  int device;              /**< CUDA ordinal; DT_UNDEF: the local rank modulo the devices, or CPU */
  int timeout_ms;          /**< DT_UNDEF: DTRAIN_TIMEOUT_MS or 300000 */
  dt_oob_allgather_fn oob_allgather; /**< NULL: rendezvous through the store */
  void *oob_user;          /**< passed to oob_allgather */
} dt_comm_options;

/** The version of dt_comm_options this header describes. */
#define DT_COMM_OPTIONS_VERSION 1u
/** A dt_comm_options with this version and every field at its default. */
#define DT_COMM_OPTIONS_INIT                                                     \
  { DT_COMM_OPTIONS_VERSION, DT_UNDEF, DT_UNDEF, NULL, NULL, DT_BACKEND_AUTO,     \
    DT_UNDEF, DT_UNDEF, NULL, NULL }

/**
 * Fills `opts` with the defaults of options version `version` (pass
 * DT_COMM_OPTIONS_VERSION). Only the fields that version has are written.
 * DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer than this
 * library's.
 */
DT_API dt_status dt_comm_options_init(dt_comm_options *opts, unsigned version);

/**
 * Creates a communicator. `opts` NULL takes everything from the environment.
 * A world of one needs no store and no peer. The new communicator belongs to
 * the caller (dt_comm_destroy()).
 *
 * Network exposure (UCX backend): the ranks first compare their hosts
 * through the rendezvous. When all share one host (one kernel boot, one
 * network namespace), UCX uses shared memory and loopback only; otherwise it
 * uses the interfaces named by DTRAIN_NET_IFNAME (a name or comma-separated
 * list), by default the one through which the host reaches the store, and
 * the host's RDMA ports. DTRAIN_NET_IFNAME, when set, applies to every job; a
 * UCX_NET_DEVICES set by the user is left as it is. Every TCP listener UCX
 * opens beyond loopback takes connections from the job's hosts' addresses
 * alone (a socket filter drops other sources). UCX authenticates no peer:
 * processes on the job's hosts, or sending from their addresses, can still
 * connect. DT_ERR_INVALID_ARGUMENT: DTRAIN_NET_IFNAME names an interface
 * this host lacks.
 */
DT_API dt_status dt_comm_create(dt_comm **out, const dt_comm_options *opts);

/**
 * Splits `parent` like MPI_Comm_split: ranks with the same `color` form a new
 * communicator, ordered by `key` and then by parent rank. Collective over
 * `parent`. `color` DT_UNDEF leaves this rank out (`*out` set to NULL);
 * other negative colors are invalid. The result belongs to the caller and
 * outlives nothing: destroy it before its parent.
 */
DT_API dt_status dt_comm_split(dt_comm **out, dt_comm *parent, int color, int key);

/**
 * Binds `comm` to the calling thread (`bind` nonzero): from then on only this
 * thread may run its collectives, point-to-point calls and splits, and any
 * other gets DT_ERR_INVALID_USAGE (see "Threads" above). Call it when a
 * communicator moves to another thread, a worker that trains say. `bind`
 * 0 unbinds it: any thread may call, one at a time, and the program orders
 * the calls alike on every rank. Local: talks to no other rank.
 */
DT_API dt_status dt_comm_bind_thread(dt_comm *comm, int bind);

/** This process's rank in `comm`, 0 to size - 1, into *out. */
DT_API dt_status dt_comm_rank(const dt_comm *comm, int *out);
/** The number of ranks in `comm` into *out. */
DT_API dt_status dt_comm_size(const dt_comm *comm, int *out);

/**
 * Aborts every pending and future operation on `comm`: waiters return
 * DT_ERR_ABORTED. Safe from any thread at any time; never blocks.
 */
DT_API dt_status dt_comm_abort(dt_comm *comm);

/** Destroys `comm` (NULL: no-op). Pending operations are aborted first. */
DT_API dt_status dt_comm_destroy(dt_comm *comm);

/* Collectives. `send == recv` (same data pointer) is in place. `req` NULL:
 * blocking.
 *
 * `stream` is a cudaStream_t of the communicator's device, for operations on
 * CUDA tensors; it is ignored (never dereferenced) when every tensor is host
 * memory. cudaStreamLegacy ((void *)1) and cudaStreamPerThread ((void *)2)
 * are accepted, as in DLPack. NULL means the communicator's own stream, which
 * waits for work queued on the legacy default stream but for no other: work
 * on other streams that writes the tensors must be finished (e.g.
 * cudaStreamSynchronize) before the call.
 *   - NCCL path: the operation is queued on `stream`, after the work already
 *     queued there, and work queued there later sees its results; the
 *     request completes when a CUDA event recorded on `stream` after it has.
 *   - Staged path (UCX through pinned host memory): the copies wait on the
 *     device for the work queued on `stream` so far (the caller is not
 *     blocked), so the tensors are read after the caller's writes. Results
 *     are written by the library's own streams and are in place when the
 *     request completes; `stream` is not ordered after them, so wait for the
 *     request before using them.
 * A blocking call returns with the results in place on either path.
 *
 * Every rank calls the same collectives in the same order with the same
 * arguments (counts, dtype, op, root, as each says). With
 * DTRAIN_CHECK_COLLECTIVES=1 in every rank's environment (when the
 * communicator is created), the ranks compare each collective's call
 * first, whatever the backend: ranks that disagree about its kind, count,
 * dtype, op, root or per-rank counts, or that skipped one, all get
 * DT_ERR_MISMATCH, and dt_error_last() names each rank's call ("rank 0
 * called allreduce(4096 float32, sum), rank 1 called allgather(4096
 * float32)"). A blocking call is refused before anything moves and the
 * communicator stays usable; a non-blocking one is refused when waited for
 * or tested, and then the communicator is broken (its operation was
 * queued). The check adds one small collective to each; it is off by
 * default. */

/** recv[i] = op over ranks of send[i]; send and recv have the same count and dtype. */
DT_API dt_status dt_allreduce(dt_comm *comm, const DLTensor *send, DLTensor *recv,
                              dt_reduce_op op, void *stream, dt_request **req);

/** send holds size * count elements; rank r receives block r reduced over ranks. */
DT_API dt_status dt_reduce_scatter(dt_comm *comm, const DLTensor *send, DLTensor *recv,
                                   dt_reduce_op op, void *stream, dt_request **req);

/** send holds count elements; recv holds size * count, in rank order. */
DT_API dt_status dt_allgather(dt_comm *comm, const DLTensor *send, DLTensor *recv,
                              void *stream, dt_request **req);

/** `buf` on `root` is copied into `buf` on every rank. */
DT_API dt_status dt_broadcast(dt_comm *comm, DLTensor *buf, int root, void *stream,
                              dt_request **req);

/** send and recv hold size * count elements; block j of send goes to rank j. */
DT_API dt_status dt_alltoall(dt_comm *comm, const DLTensor *send, DLTensor *recv,
                             void *stream, dt_request **req);

/**
 * Like dt_alltoall with per-rank element counts. Blocks are packed in rank
 * order: send_counts[j] elements go to rank j, recv_counts[j] come from rank j.
 * Both arrays have `size` entries, none negative; their sums may not exceed the
 * tensors' counts. A count that disagrees with the peer's gives DT_ERR_MISMATCH:
 * on every rank, with no recv written, where all ranks run on one host (the
 * collectives then go through shared memory and every rank sees every
 * rank's counts); otherwise on the rank that receives it.
 */
DT_API dt_status dt_alltoallv(dt_comm *comm, const DLTensor *send, const int64_t *send_counts,
                              DLTensor *recv, const int64_t *recv_counts, void *stream,
                              dt_request **req);

/* Rooted and uneven collectives. Every rank calls them with the same root,
 * dtype, op and recv_counts, and with the counts said for each. Over UCX
 * (host tensors, and CUDA tensors staged through host memory) the ranks
 * first exchange what they were asked to do: ranks that disagree about any
 * of these, or about which of these five operations they call, all get
 * DT_ERR_MISMATCH before any data moves, and no recv is written. Where all
 * ranks run on one host (the collectives then go through shared memory,
 * DTRAIN_UCX_LOCAL_BYTES) this holds for allgatherv and reduce_scatterv,
 * and for rooted calls where a rank's data takes more than one mailbox
 * piece (DTRAIN_UCX_LOCAL_BYTES, a scatter root's blocks counted together)
 * or is read in a single copy (DTRAIN_UCX_SINGLE_COPY_BYTES). In the other
 * rooted calls a rank is sure to see a disagreement only with a rank it
 * receives from:
 *   - a rank that only sends (the root of dt_broadcast and dt_scatter, the
 *     other ranks of dt_gather and dt_reduce) returns once its data is in
 *     shared memory, without waiting for its peers (up to three such calls
 *     ahead of the slowest rank), and sees no disagreement; the scatter
 *     root's own block is copied to its recv then;
 *   - the root of dt_gather and dt_reduce receives from every rank and gets
 *     DT_ERR_MISMATCH if any disagrees with it, writing no recv;
 *   - the other ranks of dt_broadcast and dt_scatter receive from the root
 *     alone and get DT_ERR_MISMATCH, writing nothing, if the root disagrees
 *     with them.
 * DTRAIN_CHECK_COLLECTIVES=1 makes every rank compare every call first, on
 * any path. Over NCCL
 * (CUDA tensors) disagreement is not detected, as for the other collectives
 * there: it ends in DT_ERR_TIMEOUT at the deadline. Arguments are checked on
 * each rank before anything starts: DT_ERR_INVALID_ARGUMENT for a NULL comm
 * or tensor the rank uses, a root outside [0, size), send and recv of
 * different dtypes, a NULL counts array, a negative count, counts that add up
 * to more than their tensor holds, a tensor of the wrong count, or an op the
 * dtype does not allow (DT_AVG needs a floating-point dtype). An invalid
 * argument starts nothing on that rank; ranks whose arguments were valid
 * then wait for it until their deadline, but for a rank that only sends
 * through shared memory (above), which returns: the ranks are then out of
 * step (the refusing rank's next call meets the refused one), and the
 * communicator is best destroyed. A backend that lacks one of these
 * operations refuses it with DT_ERR_UNSUPPORTED naming itself and the
 * operation. */

/**
 * recv = op over ranks of send, on `root` alone. send has the same count on
 * every rank. On the root recv has send's count and dtype; recv == send
 * (same data pointer) is in place. Off the root `recv` is ignored: neither
 * checked nor written, and it may be NULL.
 */
DT_API dt_status dt_reduce(dt_comm *comm, const DLTensor *send, DLTensor *recv, dt_reduce_op op,
                           int root, void *stream, dt_request **req);

/**
 * Every rank's send (count elements, the same count on every rank) lands in
 * block r (elements [r * count, (r + 1) * count)) of recv on `root`, which
 * holds size * count elements. On the root send may be recv's block `root`
 * (in place); any other overlap is undefined. Off the root `recv` is
 * ignored (neither checked nor written) and may be NULL.
 */
DT_API dt_status dt_gather(dt_comm *comm, const DLTensor *send, DLTensor *recv, int root,
                           void *stream, dt_request **req);

/**
 * Block r of send on `root` (elements [r * count, (r + 1) * count), send
 * holding size * count elements) is copied into recv (count elements, the
 * same count on every rank) of rank r. On the root recv may be send's block
 * `root` (in place); any other overlap is undefined. Off the root `send` is
 * ignored (neither checked nor read) and may be NULL.
 */
DT_API dt_status dt_scatter(dt_comm *comm, const DLTensor *send, DLTensor *recv, int root,
                            void *stream, dt_request **req);

/**
 * Like dt_allgather with a count per rank: recv_counts has `size` entries,
 * the same on every rank, none negative (zeros allowed); send holds exactly
 * recv_counts[rank] elements. Rank r's send lands in recv at elements
 * [recv_counts[0] + ... + recv_counts[r - 1], ... + recv_counts[r]), packed in
 * rank order; the counts may add up to less than recv holds, and the
 * elements past their sum are not written. send may be this rank's block of
 * recv (in place); any other overlap is undefined.
 */
DT_API dt_status dt_allgatherv(dt_comm *comm, const DLTensor *send, DLTensor *recv,
                               const int64_t *recv_counts, void *stream, dt_request **req);

/**
 * Like dt_reduce_scatter with a count per rank: send holds blocks packed in
 * rank order, block r having recv_counts[r] elements (the counts have
 * `size` entries, the same on every rank, none negative, zeros allowed, and
 * add up to at most send's count; elements past their sum are not read);
 * recv holds exactly recv_counts[rank] elements and receives block `rank`
 * reduced with `op` over the ranks. recv may be this rank's block of send
 * (in place); any other overlap is undefined.
 */
DT_API dt_status dt_reduce_scatterv(dt_comm *comm, const DLTensor *send, const int64_t *recv_counts,
                                    DLTensor *recv, dt_reduce_op op, void *stream, dt_request **req);

/** Point-to-point. `tag` >= 0; messages between two ranks with one tag arrive in order. */
DT_API dt_status dt_send(dt_comm *comm, const DLTensor *buf, int peer, int tag, void *stream,
                         dt_request **req);
/** Receives into `buf` what `peer` sends with dt_send() and the same `tag`; see dt_send(). */
DT_API dt_status dt_recv(dt_comm *comm, DLTensor *buf, int peer, int tag, void *stream,
                         dt_request **req);

/** What a dt_p2p_op does: values fixed forever. */
typedef enum dt_p2p_kind { DT_P2P_SEND = 0, DT_P2P_RECV = 1 } dt_p2p_kind;

/** One send or receive of a dt_p2p_group(), as dt_send / dt_recv take it. */
typedef struct dt_p2p_op {
  int kind;               /**< a dt_p2p_kind */
  const DLTensor *tensor; /**< sent from, or received into */
  int peer;               /**< the other rank, 0 <= peer < size (oneself included) */
  int tag;                /**< >= 0; matches the peer's dt_send / dt_recv / group op with this tag */
} dt_p2p_op;

/**
 * Starts the `count` (>= 1) sends and receives of `ops` together, every one
 * posted before any is waited for, and completes them as one: a single
 * request (or, with req NULL, one return) for the group, DT_OK once every op
 * has completed, otherwise the first error. Because nothing waits before
 * everything is posted, patterns that deadlock with blocking calls (each rank
 * sending a large buffer to both ring neighbours before receiving) complete.
 * Each op matches the peer's messages exactly as dt_send / dt_recv would
 * (and may be matched by them): same tag and size, messages with one tag
 * between two ranks arrive in the order posted, a size that differs from the
 * peer's gives DT_ERR_MISMATCH. A send to oneself is buffered, as dt_send's
 * is: the group does not wait for its receive (except over NCCL, below).
 * Every op is checked before any starts; one bad op (kind not a
 * dt_p2p_kind, NULL or invalid tensor, peer out of range, negative tag), ops
 * NULL or count < 1 gives DT_ERR_INVALID_ARGUMENT naming it ("ops[2].peer
 * ...") and starts nothing. A tensor may not appear in two ops of a group
 * that write it. Where CUDA tensors go through NCCL, a group mixing host and
 * CUDA tensors is refused with DT_ERR_UNSUPPORTED, as any NCCL operation that
 * mixes them; over NCCL tags select nothing, as for dt_send / dt_recv there
 * (messages between two ranks match in the order posted), and a group's
 * message to oneself must be received within the same group.
 */
DT_API dt_status dt_p2p_group(dt_comm *comm, const dt_p2p_op *ops, int count, void *stream,
                              dt_request **req);

/** Returns when every rank has entered the barrier. */
DT_API dt_status dt_barrier(dt_comm *comm);

/**
 * Waits for `req` for at most `timeout_ms` (negative: the communicator's
 * deadline). Returns the operation's status, or DT_ERR_TIMEOUT. Waiting again
 * on a finished request returns the same status.
 */
DT_API dt_status dt_request_wait(dt_request *req, int timeout_ms);

/** DT_OK when done, DT_INPROGRESS while running, or the operation's error. */
DT_API dt_status dt_request_test(dt_request *req);

/**
 * Releases `req` (NULL: no-op). An operation still running goes on; its
 * buffers must stay valid until it completes or the communicator is destroyed.
 */
DT_API void dt_request_free(dt_request *req);

/**
 * The kinds of operation a communicator counts (dt_comm_stats). Values are
 * fixed forever; DT_OP_ALL asks for the sum over every kind.
 */
typedef enum dt_op_kind {
  DT_OP_ALL = 0,
  DT_OP_ALLREDUCE = 1,
  DT_OP_REDUCE_SCATTER = 2,
  DT_OP_ALLGATHER = 3,
  DT_OP_BROADCAST = 4,
  DT_OP_ALLTOALL = 5,
  DT_OP_ALLTOALLV = 6,
  DT_OP_BARRIER = 7,
  DT_OP_REDUCE = 8,
  DT_OP_GATHER = 9,
  DT_OP_SCATTER = 10,
  DT_OP_ALLGATHERV = 11,
  DT_OP_REDUCE_SCATTERV = 12,
  DT_OP_SEND = 13,
  DT_OP_RECV = 14,
  DT_OP_P2P_GROUP = 15
} dt_op_kind;

/**
 * What a communicator's operations of one kind added up to on this rank,
 * since it was created (dt_comm_stats). The caller sets `version`
 * (DT_OP_STATS_VERSION, or use the _INIT macro); the library writes the
 * other fields of that version. Grows only at its end.
 *
 * An operation counts once it has finished, successfully or not; one still
 * running does not. `bytes` is the size of this rank's buffer the operation
 * is about: the send tensor (allreduce, reduce_scatter, allgather,
 * alltoall, alltoallv, reduce, gather, allgatherv, reduce_scatterv, send),
 * the buffer of a broadcast, the receive tensor of scatter and recv, all the
 * tensors of a p2p_group together, and 0 for a barrier. `seconds` is the
 * time from the call to the operation's completion, summed. Operations
 * libdtrain runs for itself on the communicator (a DDP's bucket
 * allreduces, a ZeRO step's collectives) count as the caller's do.
 */
typedef struct dt_op_stats {
  unsigned version;  /**< DT_OP_STATS_VERSION */
  int64_t count;     /**< operations finished */
  int64_t failed;    /**< of those, the ones that ended with an error */
  int64_t bytes;     /**< bytes, as above, summed */
  double seconds;    /**< from start to completion, summed */
} dt_op_stats;

/** The version of dt_op_stats this header describes. */
#define DT_OP_STATS_VERSION 1u
/** A dt_op_stats with this version and every field at zero. */
#define DT_OP_STATS_INIT { DT_OP_STATS_VERSION, 0, 0, 0, 0.0 }

/**
 * Fills `out` (its version set) with the totals of `comm`'s operations of
 * `kind` on this rank (DT_OP_ALL: of every kind). Local: sends nothing, may
 * be called at any time, also on a broken communicator. DT_ERR_INVALID_ARGUMENT
 * for a NULL `comm` or `out`, an `out->version` this library does not write,
 * or a `kind` that is not a dt_op_kind.
 *
 * Each operation is also kept in a ring of the last
 * DTRAIN_FLIGHT_RECORDER_ENTRIES (default 512) operations, which the flight
 * recorder writes to DTRAIN_FLIGHT_RECORDER_DIR when a communicator times
 * out, loses a peer or is aborted, and on SIGUSR1; DTRAIN_TRACE_FILE
 * writes every operation to a Chrome trace; DTRAIN_WAIT_WARN_S (default 30,
 * 0: never) is how often a blocked call warns which ranks it waits for;
 * DTRAIN_LOG_LEVEL=trace logs each operation. docs/observability.md
 * describes the files.
 */
DT_API dt_status dt_comm_stats(const dt_comm *comm, dt_op_kind kind, dt_op_stats *out);

DT_END_DECLS

#endif /* DTRAIN_COMM_H */
