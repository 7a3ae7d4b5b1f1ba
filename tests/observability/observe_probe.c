/* Jobs for the observability tests (test_observability.py), run under dtrun:
 *
 *   observe_probe ddp STEPS     a DDP run: parameters broadcast, then STEPS
 *                               steps of 3 gradients; prints
 *                               "rank R ops N" with N the operations
 *                               dt_comm_stats counted (DT_OP_ALL)
 *   observe_probe pipeline STEPS
 *                               STEPS steps of a ZB-H1 pipeline over every
 *                               rank (4 micro-batches, stage functions that
 *                               do nothing); prints "rank R order A,B,..."
 *                               with this rank's compute actions as the
 *                               schedule lists them (KIND:chunk:microbatch)
 *   observe_probe cp CALLS      CALLS causal ring attentions, forward then
 *                               backward, over every rank in the zigzag
 *                               layout (8 tokens a rank, 2 heads of 4)
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

static dt_status stage_forward(void *user, int chunk, int microbatch, const DLTensor *input, DLTensor *output) {
  (void)user, (void)chunk, (void)microbatch, (void)input, (void)output;
  return DT_OK;
}

static dt_status stage_backward(void *user, int chunk, int microbatch, const DLTensor *grad_output,
                                DLTensor *grad_input) {
  (void)user, (void)chunk, (void)microbatch, (void)grad_output, (void)grad_input;
  return DT_OK;
}

static dt_status stage_backward_weight(void *user, int chunk, int microbatch) {
  (void)user, (void)chunk, (void)microbatch;
  return DT_OK;
}

static int pipeline(dt_comm *comm, int rank, int size, int steps) {
  static const char *const kNames[] = {"FORWARD", "BACKWARD", "BACKWARD_INPUT", "BACKWARD_WEIGHT"};
  dt_pipeline_schedule_options sopts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  sopts.kind = DT_PIPELINE_ZB_H1;
  sopts.stages = size;
  sopts.microbatches = 4;
  dt_pipeline_schedule *schedule = NULL;
  dt_status s = dt_pipeline_schedule_create(&schedule, &sopts);
  if (s != DT_OK) return failed("dt_pipeline_schedule_create", s);
  size_t length = 0;
  dt_pipeline_schedule_length(schedule, rank, &length);
  printf("rank %d order ", rank);
  const char *separator = "";
  for (size_t i = 0; i < length; ++i) {
    dt_pipeline_action a;
    dt_pipeline_schedule_action(schedule, rank, i, &a);
    if (a.kind > DT_PIPELINE_BACKWARD_WEIGHT) continue;
    printf("%s%s:%d:%d", separator, kNames[a.kind], a.chunk, a.microbatch);
    separator = ",";
  }
  printf("\n");
  dt_pipeline_options opts = DT_PIPELINE_OPTIONS_INIT;
  opts.activation_elements = 16;
  opts.forward = stage_forward;
  opts.backward = stage_backward;
  opts.backward_weight = stage_backward_weight;
  dt_pipeline *p = NULL;
  s = dt_pipeline_create(&p, comm, schedule, &opts);
  dt_pipeline_schedule_destroy(schedule);
  if (s != DT_OK) return failed("dt_pipeline_create", s);
  for (int step = 0; step < steps && s == DT_OK; ++step) s = dt_pipeline_step(p, NULL);
  dt_pipeline_destroy(p);
  return s == DT_OK ? 0 : failed("dt_pipeline_step", s);
}

static int ring_attention(dt_comm *comm, int rank, int calls) {
  enum { ROWS = 8, HEADS = 2, DIM = 4, COUNT = ROWS * HEADS * DIM };
  static float q[COUNT], k[COUNT], v[COUNT], o[COUNT], d_o[COUNT], dq[COUNT], dk[COUNT], dv[COUNT], lse[ROWS * HEADS];
  int64_t shape[3] = {ROWS, HEADS, DIM}, lse_shape[2] = {ROWS, HEADS};
  for (int i = 0; i < COUNT; ++i) {
    q[i] = (float)((i * 7 + rank) % 11) / 11.0f;
    k[i] = (float)((i * 5 + rank) % 13) / 13.0f;
    v[i] = (float)((i * 3 + rank) % 17) / 17.0f;
    d_o[i] = 1.0f;
  }
  DLTensor tq = f32(q, shape), tk = f32(k, shape), tv = f32(v, shape), to = f32(o, shape);
  DLTensor tdo = f32(d_o, shape), tdq = f32(dq, shape), tdk = f32(dk, shape), tdv = f32(dv, shape);
  DLTensor *rows[] = {&tq, &tk, &tv, &to, &tdo, &tdq, &tdk, &tdv};
  for (int i = 0; i < 8; ++i) rows[i]->ndim = 3;
  DLTensor tlse = f32(lse, lse_shape);
  tlse.ndim = 2;
  for (int call = 0; call < calls; ++call) {
    dt_status s = dt_cp_ring_attention_forward(comm, DT_CP_ZIGZAG, 1, 0.0, &tq, &tk, &tv, &to, &tlse);
    if (s != DT_OK) return failed("dt_cp_ring_attention_forward", s);
    s = dt_cp_ring_attention_backward(comm, DT_CP_ZIGZAG, 1, 0.0, &tq, &tk, &tv, &to, &tlse, &tdo, &tdq, &tdk, &tdv);
    if (s != DT_OK) return failed("dt_cp_ring_attention_backward", s);
  }
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
    fprintf(stderr, "usage: observe_probe ddp STEPS | pipeline STEPS | cp CALLS | stop K | mismatch K\n");
    return 2;
  }
  dt_comm *comm = NULL;
  dt_status s = dt_comm_create(&comm, NULL);
  if (s != DT_OK) return failed("dt_comm_create", s);
  int rank = -1, size = -1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &size);
  const int n = atoi(argv[2]);
  int result = strcmp(argv[1], "ddp") == 0        ? ddp(comm, rank, n)
               : strcmp(argv[1], "pipeline") == 0 ? pipeline(comm, rank, size, n)
               : strcmp(argv[1], "cp") == 0       ? ring_attention(comm, rank, n)
                                                  : collectives(comm, rank, size, n, argv[1]);
  dt_comm_destroy(comm);
  return result;
}
