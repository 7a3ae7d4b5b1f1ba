/*
 * The MPI peer of `dtbench collectives`: the same operations, sizes, iteration
 * policy, verification and results format, over MPI's own collectives, so
 * that the two runs can be compared row by row (dtbench compare).
 *
 *   mpirun -np N --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
 *          mpi_peer [options]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static const char usage[] =
    "usage: mpirun -np N [mpirun options] mpi_peer [options]\n"
    "\n"
    "Times MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall and\n"
    "MPI_Bcast (and with --ops MPI_Alltoallv, MPI_Reduce, MPI_Gather, MPI_Scatter,\n"
    "MPI_Allgatherv, MPI_Reduce_scatter) the way `dtbench collectives` times\n"
    "libdtrain, with the same sizes, roots and uneven counts. Rank 0 prints the table.\n"
    "\n"
    "options:\n";

static void print_usage(FILE *f) {
  fputs(usage, f);
  for (const dtb_option_info *info = dtb_option_table; info->name != NULL; ++info) {
    fprintf(f, "  --%s %s\n      %s\n", info->name, info->value_name, info->help);
  }
  fputs("  -h, --help\n      show this help\n", f);
}

/* The per-rank counts of an uneven operation at one size, as MPI takes them:
   `world` entries each, with each block's displacement. */
typedef struct counts {
  int *send;
  int *send_displs;
  int *recv;
  int *recv_displs;
} counts;

typedef struct peer {
  int rank;
  int world;
  dtb_options o;
  MPI_Datatype type;
  dtb_results results;
  counts counts; /* of the size being timed */
} peer;

static MPI_Datatype mpi_type(dtb_dtype t) {
  switch (t) {
    case DTB_FLOAT32: return MPI_FLOAT;
    case DTB_FLOAT64: return MPI_DOUBLE;
    case DTB_INT32: return MPI_INT32_T;
    case DTB_INT64: return MPI_INT64_T;
    default: return MPI_DATATYPE_NULL;
  }
}

static void run(const peer *p, dtb_op op, const dtb_layout *l, void *send, void *recv) {
  const int c = (int)l->count;
  const counts *v = &p->counts;
  switch (op) {
    case DTB_ALLREDUCE: MPI_Allreduce(send, recv, c, p->type, MPI_SUM, MPI_COMM_WORLD); break;
    case DTB_ALLGATHER: MPI_Allgather(send, c, p->type, recv, c, p->type, MPI_COMM_WORLD); break;
    case DTB_REDUCE_SCATTER: MPI_Reduce_scatter_block(send, recv, c, p->type, MPI_SUM, MPI_COMM_WORLD); break;
    case DTB_ALLTOALL: MPI_Alltoall(send, c, p->type, recv, c, p->type, MPI_COMM_WORLD); break;
    case DTB_BROADCAST: MPI_Bcast(send, c, p->type, DTB_ROOT, MPI_COMM_WORLD); break;
    case DTB_ALLTOALLV:
      MPI_Alltoallv(send, v->send, v->send_displs, p->type, recv, v->recv, v->recv_displs, p->type, MPI_COMM_WORLD);
      break;
    case DTB_REDUCE: MPI_Reduce(send, recv, c, p->type, MPI_SUM, DTB_ROOT, MPI_COMM_WORLD); break;
    case DTB_GATHER: MPI_Gather(send, c, p->type, recv, c, p->type, DTB_ROOT, MPI_COMM_WORLD); break;
    case DTB_SCATTER: MPI_Scatter(send, c, p->type, recv, c, p->type, DTB_ROOT, MPI_COMM_WORLD); break;
    case DTB_ALLGATHERV:
      MPI_Allgatherv(send, (int)l->send_elems, p->type, recv, v->recv, v->recv_displs, p->type, MPI_COMM_WORLD);
      break;
    case DTB_REDUCE_SCATTERV: MPI_Reduce_scatter(send, recv, v->recv, p->type, MPI_SUM, MPI_COMM_WORLD); break;
    default: break;
  }
}

static double max_over_ranks(double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

/* Every rank checks its own result; if any is wrong, the job stops. */
static void verify(const peer *p, dtb_op op, const dtb_layout *l, void *send, void *recv) {
  dtb_fill(op, l, p->rank, p->world, p->o.dtype, send, recv);
  run(p, op, l, send, recv);
  double got = 0, want = 0;
  int64_t wrong = dtb_check(op, l, p->rank, p->world, p->o.dtype, send, recv, &got, &want);
  if (wrong >= 0) {
    fprintf(stderr, "mpi_peer: rank %d: %s of %lld B (%s) is wrong: element %lld is %g, expected %g\n", p->rank,
            dtb_op_name(op), (long long)l->bytes, dtb_dtype_name(p->o.dtype), (long long)wrong, got, want);
  }
  if (max_over_ranks(wrong >= 0 ? 1.0 : 0.0) > 0) MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Seconds per iteration, agreed by all ranks (see dtbench's probe). */
static double probe(const peer *p, dtb_op op, const dtb_layout *l, void *send, void *recv) {
  for (int k = 1;; k *= 2) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = dtb_now();
    for (int j = 0; j < k; ++j) run(p, op, l, send, recv);
    double elapsed = max_over_ranks(dtb_now() - t0);
    if (elapsed >= DTB_PROBE_SECONDS || k >= DTB_MAX_ITERS) return elapsed / k;
  }
}

static int *ints(int n) {
  int *out = calloc((size_t)n, sizeof *out);
  if (out == NULL) abort();
  return out;
}

static counts counts_for(int world) {
  counts c = {ints(world), ints(world), ints(world), ints(world)};
  return c;
}

static void counts_free(counts *c) {
  free(c->send);
  free(c->send_displs);
  free(c->recv);
  free(c->recv_displs);
}

/* The counts of an uneven operation at `l`, in MPI's ints (one_op checked
   that the sizes fit), worked out once per size rather than in the timed loop. */
static void set_counts(peer *p, dtb_op op, const dtb_layout *l) {
  const int n = p->world;
  int64_t *send = calloc((size_t)n, sizeof *send);
  int64_t *recv = calloc((size_t)n, sizeof *recv);
  if (send == NULL || recv == NULL) abort();
  dtb_counts(op, l, p->rank, n, send, recv);
  int send_at = 0, recv_at = 0;
  for (int r = 0; r < n; ++r) {
    p->counts.send[r] = (int)send[r];
    p->counts.send_displs[r] = send_at;
    p->counts.recv[r] = (int)recv[r];
    p->counts.recv_displs[r] = recv_at;
    send_at += (int)send[r];
    recv_at += (int)recv[r];
  }
  free(send);
  free(recv);
}

static void one_size(peer *p, dtb_op op, const dtb_layout *l, void *send, void *recv) {
  set_counts(p, op, l);
  verify(p, op, l, send, recv);
  for (int k = 0; k < p->o.warmup; ++k) run(p, op, l, send, recv);
  int iters = dtb_iterations(p->o.iters > 0 ? 0.0 : probe(p, op, l, send, recv), p->o.iters);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = dtb_now();
  for (int k = 0; k < iters; ++k) run(p, op, l, send, recv);
  double slowest = max_over_ranks((dtb_now() - t0) / iters);

  dtb_row row;
  memset(&row, 0, sizeof row);
  row.op = op;
  row.bytes = l->bytes;
  row.count = l->bytes / (int64_t)dtb_dtype_size(p->o.dtype);
  row.iters = iters;
  row.time_s = slowest;
  dtb_results_add(&p->results, row);
  if (p->rank == 0) dtb_print_row(stdout, &p->results, &p->results.rows[p->results.nrows - 1]);
}

static void one_op(peer *p, dtb_op op) {
  dtb_layout largest;
  if (dtb_layout_largest(op, p->o.min_bytes, p->o.max_bytes, p->world, p->rank, p->o.dtype, &largest) != 0) {
    if (p->rank == 0) printf("#\n# %s: --max-bytes is too small for %d ranks\n", dtb_op_name(op), p->world);
    return;
  }
  /* An uneven operation's count is its total, which bounds its displacements. */
  if (largest.count > INT_MAX) {
    if (p->rank == 0) {
      fprintf(stderr, "mpi_peer: %s: counts above INT_MAX need MPI 4's large-count calls\n", dtb_op_name(op));
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t elem = dtb_dtype_size(p->o.dtype);
  void *send = dtb_alloc((size_t)largest.send_elems * elem);
  void *recv = dtb_alloc((size_t)largest.recv_elems * elem);
  if (p->rank == 0) dtb_print_op_header(stdout, op);
  for (int64_t nominal = p->o.min_bytes; nominal <= p->o.max_bytes; nominal *= 2) {
    dtb_layout l;
    if (dtb_layout_for(op, nominal, p->world, p->rank, p->o.dtype, &l) == 0) one_size(p, op, &l, send, recv);
    if (nominal > p->o.max_bytes / 2) break;
  }
  dtb_free(send);
  dtb_free(recv);
}

/* Rank 0 measures memcpy alone; the others wait without taking a core. */
static double memcpy_on_rank0(const peer *p) {
  double gbps = 0;
  if (p->rank == 0) gbps = dtb_memcpy_gbps();
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  const struct timespec pause = {0, 1000000};
  int done = 0;
  for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE)) {
    if (p->rank != 0) nanosleep(&pause, NULL);
  }
  return gbps;
}

/* The shared options, and -h/--help, for getopt_long. */
#define MAX_OPTIONS 16
static void long_options(struct option *out) {
  size_t n = 0;
  for (; dtb_option_table[n].name != NULL && n + 2 < MAX_OPTIONS; ++n) {
    out[n] = (struct option){dtb_option_table[n].name, required_argument, NULL, 0};
  }
  out[n++] = (struct option){"help", no_argument, NULL, 'h'};
  out[n] = (struct option){NULL, 0, NULL, 0};
}

/* Options are parsed on every rank alike; only rank 0 says what is wrong.
   Returns the exit status, or -1 to go on. */
static int parse(peer *p, int argc, char **argv) {
  dtb_options_init(&p->o);
  struct option options[MAX_OPTIONS];
  long_options(options);
  opterr = 0; /* the errors are said below, by rank 0 alone */
  int c, index = 0;
  while ((c = getopt_long(argc, argv, ":h", options, &index)) != -1) {
    if (c == 'h') {
      if (p->rank == 0) print_usage(stdout);
      return 0;
    }
    if (c == 0 && dtb_set_option(&p->o, options[index].name, optarg) == 0) continue;
    if (c == ':') {
      snprintf(p->o.error, sizeof p->o.error, "%s needs a value", argv[optind - 1]);
    } else if (c == '?') {
      snprintf(p->o.error, sizeof p->o.error, "unknown option '%s'", argv[optind - 1]);
    }
    if (p->rank == 0) {
      fprintf(stderr, "mpi_peer: %s\n\n", p->o.error);
      print_usage(stderr);
    }
    return 2;
  }
  if (optind < argc) {
    snprintf(p->o.error, sizeof p->o.error, "unexpected argument '%s'", argv[optind]);
  } else if (dtb_options_check(&p->o) == 0) {
    return -1;
  }
  if (p->rank == 0) fprintf(stderr, "mpi_peer: %s\n", p->o.error);
  return 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  peer p;
  memset(&p, 0, sizeof p);
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.world);
  int status = parse(&p, argc, argv);
  if (status >= 0) {
    MPI_Finalize();
    return status;
  }
  p.type = mpi_type(p.o.dtype);

  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  /* Open MPI's string is several lines; the first says what it is. */
  library[strcspn(library, "\n")] = '\0';
  for (char *c = library + strlen(library); c > library && (c[-1] == ',' || c[-1] == ' '); --c) c[-1] = '\0';

  p.results.implementation = "mpi";
  p.results.library = library;
  p.results.world = p.world;
  p.results.dtype = p.o.dtype;
  p.results.memcpy_gbps = memcpy_on_rank0(&p);
  p.counts = counts_for(p.world);
  if (p.rank == 0) {
    printf("# %s\n", library);
    dtb_print_header(stdout, &p.results);
  }
  for (int op = 0; op < DTB_OP_COUNT; ++op) {
    if (p.o.ops & (1u << op)) one_op(&p, (dtb_op)op);
  }

  status = 0;
  if (p.rank == 0 && p.o.json_path != NULL) {
    if (dtb_write_json(p.o.json_path, &p.results) != 0) {
      fprintf(stderr, "mpi_peer: cannot write %s: %s\n", p.o.json_path, strerror(errno));
      status = 1;
    } else {
      printf("# results written to %s\n", p.o.json_path);
    }
  }
  dtb_results_free(&p.results);
  counts_free(&p.counts);
  MPI_Finalize();
  return status;
}
