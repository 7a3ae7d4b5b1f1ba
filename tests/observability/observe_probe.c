/* Jobs for the observability tests (test_observability.py), run under dtrun:
 *
 *   observe_probe ddp STEPS     a DDP run: parameters broadcast, then STEPS
 *                               steps of 3 gradients; prints
 *                               "rank R ops N" with N the operations
 *                               dt_comm_stats counted (DT_OP_ALL)
 *   observe_probe stop K        barriers; the last rank stops itself
 *                               (SIGSTOP) before collective K
 *   observe_probe mismatch K    blocking allreduces; at collective K rank 1
 *                               calls an allgather instead
 *
 * Exits 0 when every call succeeded, 1 otherwise (printing the error). */
#include <dtrain.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed(const char *what, dt_status s) {
  printf("%s: %s: %s\n", what, dt_status_string(s), dt_error_last());
  return 1;
}

static DLTensor f32(float *data, int64_t *shape) {
  DLTensor t = {data, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  return t;
}

static int ddp(dt_comm *comm, int rank, int steps) {
  enum { N = 3 };
  static float params[N][64], grads[N][64];
  int64_t shapes[N][1] = {{64}, {32}, {16}};
  DLTensor p[N], g[N];
  DLTensor *pp[N], *gp[N];
  for (int i = 0; i < N; ++i) {
    p[i] = f32(params[i], shapes[i]);
    g[i] = f32(grads[i], shapes[i]);
    pp[i] = &p[i];
    gp[i] = &g[i];
  }
  dt_status s = dt_ddp_broadcast_parameters(comm, pp, N, 0);
  if (s != DT_OK) return failed("dt_ddp_broadcast_parameters", s);
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  opts.bucket_bytes = 256; /* the first gradient alone, then the other two */
  dt_ddp *d = NULL;
  if ((s = dt_ddp_create(&d, comm, (const DLTensor *const *)gp, N, &opts)) != DT_OK) return failed("dt_ddp_create", s);
  for (int step = 0; step < steps; ++step) {
    for (int i = N - 1; i >= 0; --i) {
      for (int k = 0; k < shapes[i][0]; ++k) grads[i][k] = (float)(rank + step + k);
      if ((s = dt_ddp_mark_ready(d, (size_t)i)) != DT_OK) return failed("dt_ddp_mark_ready", s);
    }
    if ((s = dt_ddp_wait(d, -1)) != DT_OK) return failed("dt_ddp_wait", s);
  }
  dt_ddp_destroy(d);
  dt_op_stats stats = DT_OP_STATS_INIT;
  if ((s = dt_comm_stats(comm, DT_OP_ALL, &stats)) != DT_OK) return failed("dt_comm_stats", s);
  printf("rank %d ops %lld\n", rank, (long long)stats.count);
  return 0;
}

/* Blocking collectives; at the `at`-th (from 1) one rank deviates as `mode` says. */
static int collectives(dt_comm *comm, int rank, int size, int at, const char *mode) {
  float value[2] = {1.0f, 2.0f}, gathered[64];
  int64_t shape[1] = {2}, gathered_shape[1] = {2 * (int64_t)size};
  DLTensor t = f32(value, shape);
  DLTensor all = f32(gathered, gathered_shape);
  for (int k = 1; k <= at + 2; ++k) {
    dt_status s;
    if (k == at && strcmp(mode, "stop") == 0 && rank == size - 1) {
      fflush(stdout);
      raise(SIGSTOP);
    }
    if (strcmp(mode, "stop") == 0) {
      s = dt_barrier(comm);
    } else if (k == at && rank == 1) {
      s = dt_allgather(comm, &t, &all, NULL, NULL);
    } else {
      s = dt_allreduce(comm, &t, &t, DT_SUM, NULL, NULL);
    }
    if (s != DT_OK) return failed("collective", s);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: observe_probe ddp STEPS | stop K | mismatch K\n");
    return 2;
  }
  dt_comm *comm = NULL;
  dt_status s = dt_comm_create(&comm, NULL);
  if (s != DT_OK) return failed("dt_comm_create", s);
  int rank = -1, size = -1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &size);
  const int n = atoi(argv[2]);
  int result = strcmp(argv[1], "ddp") == 0 ? ddp(comm, rank, n) : collectives(comm, rank, size, n, argv[1]);
  dt_comm_destroy(comm);
  return result;
}
