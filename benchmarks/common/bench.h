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
  DTB_OP_COUNT
} dtb_op;

typedef enum dtb_dtype { DTB_FLOAT32, DTB_FLOAT64, DTB_INT32, DTB_INT64, DTB_DTYPE_COUNT } dtb_dtype;

const char *dtb_op_name(dtb_op op);
int dtb_op_parse(const char *name, dtb_op *out); /* 0 when known */
const char *dtb_dtype_name(dtb_dtype t);
int dtb_dtype_parse(const char *name, dtb_dtype *out);
size_t dtb_dtype_size(dtb_dtype t);

/* ---- sizes --------------------------------------------------------------- */

/*
 * Buffers for one operation at one size. Sizes are what nccl-tests calls the
 * size: allreduce and broadcast, the buffer; allgather and reduce_scatter, the
 * full (gathered / scattered) buffer; alltoall, the full buffer. `count` is the
 * per-rank element count the operation is called with (allgather: elements
 * each rank sends; reduce_scatter: each rank receives; alltoall: per peer).
 * `bytes` is the nominal size rounded down to what the counts can hold, and is
 * what gets reported.
 */
typedef struct dtb_layout {
  int64_t count;
  int64_t send_elems;
  int64_t recv_elems; /* broadcast: 0, it works in place on the send buffer */
  int64_t bytes;
} dtb_layout;

/* Returns 0 and fills `out`, or -1 when `nominal_bytes` is too small to give
   every rank one element (the size is skipped for that operation). */
int dtb_layout_for(dtb_op op, int64_t nominal_bytes, int world, dtb_dtype t, dtb_layout *out);

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
   and what it should hold. Broadcast's result is in `send`; root is rank 0. */
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
