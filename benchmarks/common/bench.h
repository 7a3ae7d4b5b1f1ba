/*
 * What dtbench (C++, over libdtrain) and the MPI peer (C, over MPI) share, so
 * that both measure the same thing and their results can be compared row by
 * row: the operations and dtypes, the size and iteration policy, the data used
 * to verify results, the options, memcpy bandwidth and the results format.
 */
#ifndef DTBENCH_BENCH_H
#define DTBENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dtb_op {
  DTB_ALLREDUCE,
  DTB_ALLGATHER,
  DTB_REDUCE_SCATTER,
  DTB_ALLTOALL,
  DTB_BROADCAST,
  DTB_ALLTOALLV,
  DTB_REDUCE,
  DTB_GATHER,
  DTB_SCATTER,
  DTB_ALLGATHERV,
  DTB_REDUCE_SCATTERV,
  DTB_OP_COUNT
} dtb_op;

/* What --ops selects when not given: the five collectives of training. */
#define DTB_DEFAULT_OPS                                                                               \
  ((1u << DTB_ALLREDUCE) | (1u << DTB_ALLGATHER) | (1u << DTB_REDUCE_SCATTER) | (1u << DTB_ALLTOALL) | \
   (1u << DTB_BROADCAST))

/* The root of broadcast, reduce, gather and scatter. */
#define DTB_ROOT 0

typedef enum dtb_dtype { DTB_FLOAT32, DTB_FLOAT64, DTB_INT32, DTB_INT64, DTB_DTYPE_COUNT } dtb_dtype;

const char *dtb_op_name(dtb_op op);
int dtb_op_parse(const char *name, dtb_op *out); /* 0 when known */
const char *dtb_dtype_name(dtb_dtype t);
int dtb_dtype_parse(const char *name, dtb_dtype *out);
size_t dtb_dtype_size(dtb_dtype t);

/* ---- sizes --------------------------------------------------------------- */

/*
 * This rank's buffers for one operation at one size. Sizes are what
 * nccl-tests calls the size: allreduce, reduce and broadcast, the buffer;
 * allgather, gather, scatter and reduce_scatter, the full (gathered /
 * scattered) buffer; alltoall, the full send (and receive) buffer. The uneven
 * operations take the size of their even one (allgatherv, reduce_scatterv,
 * alltoallv) and split it with dtb_piece. `count` is the per-rank element
 * count the operation is called with (allgather and gather: elements each rank
 * sends; reduce_scatter and scatter: each rank receives; alltoall: per peer);
 * for the uneven operations it is the total, the size in elements. `bytes` is
 * the nominal size rounded down to what the counts can hold, and is what gets
 * reported.
 */
typedef struct dtb_layout {
  int64_t count;
  int64_t send_elems; /* scatter: 0 off the root, which sends nothing */
  int64_t recv_elems; /* broadcast: 0, it works in place on the send buffer;
                         reduce and gather: 0 off the root, which receives nothing */
  int64_t bytes;
} dtb_layout;

/* Returns 0 and fills `out` for `rank`, or -1 when `nominal_bytes` is too
   small to give every rank one element, or an uneven operation one element in
   all (the size is skipped for that operation on every rank). */
int dtb_layout_for(dtb_op op, int64_t nominal_bytes, int world, int rank, dtb_dtype t, dtb_layout *out);

/* What this rank's buffers must hold for every size of a sweep from min_bytes
   to max_bytes: each field the largest over the sizes (an uneven piece need
   not grow with the size). -1 when no size fits. */
int dtb_layout_largest(dtb_op op, int64_t min_bytes, int64_t max_bytes, int world, int rank, dtb_dtype t,
                       dtb_layout *out);

/*
 * The uneven split: `total` elements cut into `world` pieces in rank order,
 * piece r about proportional to r + 1 (rank 0's is the smallest, and empty at
 * tiny sizes); the pieces add up to `total`. dtb_piece_start is the first
 * element of piece r (r = world: `total`).
 */
int64_t dtb_piece_start(int64_t total, int world, int r);
int64_t dtb_piece(int64_t total, int world, int r);

/* Alltoallv's block from rank `source` to rank `dest`: piece (source + dest)
   mod world, so that every rank sends and receives the whole size. */
int64_t dtb_alltoallv_block(int64_t total, int world, int source, int dest);

/* The per-rank counts an uneven operation is called with at `l`, `world`
   entries each: alltoallv, the blocks this rank sends and receives;
   allgatherv and reduce_scatterv, every rank's piece in recv_counts alone.
   Nothing for the other operations. */
void dtb_counts(dtb_op op, const dtb_layout *l, int rank, int world, int64_t *send_counts, int64_t *recv_counts);

/* nccl-tests' bus bandwidth factor: busbw = algbw * factor. */
double dtb_bus_factor(dtb_op op, int world);

/* Parses "8", "64K", "256M", "1G" (also "KiB", "KB", ...; binary multiples). */
int dtb_parse_bytes(const char *text, int64_t *out);

/* ---- iterations ---------------------------------------------------------- */

/* The adaptive policy: enough iterations for about this long per size... */
#define DTB_TARGET_SECONDS 0.2
/* ...but never fewer or more than these. */
#define DTB_MIN_ITERS 5
#define DTB_MAX_ITERS 10000
/* A probe doubles its iteration count until it lasts this long. */
#define DTB_PROBE_SECONDS 0.01

/* Timed iterations for an operation that takes `seconds_per_iter` (the
   ranks' agreed, i.e. maximum, estimate); `fixed` > 0 overrides the policy. */
int dtb_iterations(double seconds_per_iter, int fixed);

/* ---- options ------------------------------------------------------------- */

typedef struct dtb_options {
  unsigned ops;            /* bit (1u << op) per selected operation */
  int64_t min_bytes;
  int64_t max_bytes;
  int iters;               /* 0: adaptive */
  int warmup;
  dtb_dtype dtype;
  const char *json_path;   /* NULL: no JSON */
  char error[160];         /* why dtb_set_option() or dtb_options_check() returned -1 */
} dtb_options;

void dtb_options_init(dtb_options *o);

/* One shared option: its long name (without "--"), which always takes a
   value, the value's name and its help. Each program builds its parser from
   the table (getopt_long in the MPI peer, CLI11 in dtbench). */
typedef struct dtb_option_info {
  const char *name;
  const char *value_name;
  const char *help;
} dtb_option_info;

/* The shared options; the last entry's name is NULL. */
extern const dtb_option_info dtb_option_table[];

/* Sets the shared option `name` (a name of dtb_option_table) from `value`:
   0, or -1 on a bad value (o->error says why). */
int dtb_set_option(dtb_options *o, const char *name, const char *value);

/* Checks the options as a whole (min <= max, at least one op): 0 or -1. */
int dtb_options_check(dtb_options *o);

/* ---- verification -------------------------------------------------------- */

/*
 * Fills this rank's buffers for `op`: the send buffer with small integers
 * (exact in every dtype, and exact when summed over any reasonable world) that
 * depend on the rank and the position, the receive buffer with zeros, which no
 * correct result holds.
 */
void dtb_fill(dtb_op op, const dtb_layout *l, int rank, int world, dtb_dtype t, void *send, void *recv);

/* -1 when the result is exact, else the first wrong element with what it held
   and what it should hold. Broadcast's result is in `send`; the root is
   DTB_ROOT. */
int64_t dtb_check(dtb_op op, const dtb_layout *l, int rank, int world, dtb_dtype t, const void *send,
                  const void *recv, double *got, double *want);

/* ---- clock and memory ---------------------------------------------------- */

double dtb_now(void); /* seconds, monotonic */

/* Zeroed, 64-byte aligned; aborts when out of memory. Release with dtb_free. */
void *dtb_alloc(size_t bytes);
void dtb_free(void *p);

/* Single-thread copy bandwidth in GB/s (1e9 bytes copied per second), the best
   of a few copies of a buffer far larger than the caches. */
double dtb_memcpy_gbps(void);

/* ---- results ------------------------------------------------------------- */

typedef struct dtb_row {
  dtb_op op;
  int64_t bytes;
  int64_t count;  /* elements in `bytes`, as nccl-tests prints */
  int iters;
  double time_s;  /* max over ranks of the mean time per iteration */
  double algbw;   /* GB/s */
  double busbw;   /* GB/s */
} dtb_row;

typedef struct dtb_results {
  const char *implementation; /* "dtrain", "mpi" */
  const char *library;        /* version string of what was measured */
  int world;
  dtb_dtype dtype;
  double memcpy_gbps;
  int64_t evict_bytes;  /* written before each timed call (dtbench --evict); 0: calls back to back */
  dtb_row *rows;
  size_t nrows;
  size_t cap;
} dtb_results;

/* Fills the bandwidths of `row` from its op, bytes and time; appends it. */
void dtb_results_add(dtb_results *r, dtb_row row);
void dtb_results_free(dtb_results *r);

void dtb_print_header(FILE *f, const dtb_results *r);
void dtb_print_op_header(FILE *f, dtb_op op);
void dtb_print_row(FILE *f, const dtb_results *r, const dtb_row *row);

/* Writes the results as JSON (see benchmarks/README.md). 0, or -1 with errno. */
int dtb_write_json(const char *path, const dtb_results *r);

#ifdef __cplusplus
}
#endif

#endif /* DTBENCH_BENCH_H */
