/*
 * Runs every collective of libdtrain on this job's ranks, checks each result
 * against what it must be, and times it.
 *
 *   ./dt_collectives_check [elements]      (one process: a world of one)
 *   dtrun -n 4 ./dt_collectives_check      (when the launcher is available)
 */
#include <dtrain.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static DLTensor f32_tensor(float *data, int64_t count, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  shape[0] = count;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int check(dt_status s, const char *what) {
  if (s != DT_OK) {
    fprintf(stderr, "%s failed: %s: %s\n", what, dt_status_string(s), dt_error_last());
    return 1;
  }
  return 0;
}

static int expect(const float *got, const float *want, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "%s: element %lld is %g, expected %g\n", what, (long long)i, got[i], want[i]);
      return 1;
    }
  }
  return 0;
}

/* The value rank r contributes at index i: small integers, exact in float. */
static float value(int r, int64_t i) { return (float)((r + 1) * (i % 7 + 1)); }

int main(int argc, char **argv) {
  int64_t count = argc > 1 ? atoll(argv[1]) : 1 << 20;
  if (count <= 0) {
    fprintf(stderr, "usage: %s [elements > 0]\n", argv[0]);
    return 2;
  }
  dt_comm *comm = NULL;
  if (check(dt_comm_create(&comm, NULL), "dt_comm_create")) return 1;
  int rank = 0, size = 1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &size);
  if (rank == 0) printf("%s\nworld size %d, %lld float32 elements per rank\n", dt_build_info(), size, (long long)count);

  float *send = malloc(sizeof(float) * count * size);
  float *recv = malloc(sizeof(float) * count * size);
  float *want = malloc(sizeof(float) * count * size);
  int64_t send_shape[1], recv_shape[1];
  int failures = 0;
  double t0;

  /* allreduce (sum) */
  for (int64_t i = 0; i < count; ++i) {
    send[i] = value(rank, i);
    want[i] = 0;
    for (int r = 0; r < size; ++r) want[i] += value(r, i);
  }
  DLTensor s = f32_tensor(send, count, send_shape), d = f32_tensor(recv, count, recv_shape);
  t0 = now_us();
  failures += check(dt_allreduce(comm, &s, &d, DT_SUM, NULL, NULL), "allreduce");
  double t_allreduce = now_us() - t0;
  failures += expect(recv, want, count, "allreduce");

  /* allgather */
  d = f32_tensor(recv, count * size, recv_shape);
  for (int r = 0; r < size; ++r)
    for (int64_t i = 0; i < count; ++i) want[r * count + i] = value(r, i);
  t0 = now_us();
  failures += check(dt_allgather(comm, &s, &d, NULL, NULL), "allgather");
  double t_allgather = now_us() - t0;
  failures += expect(recv, want, count * size, "allgather");

  /* reduce_scatter (sum): block b of rank r is value(r, b * count + i) */
  for (int64_t i = 0; i < count * size; ++i) send[i] = value(rank, i);
  for (int64_t i = 0; i < count; ++i) {
    want[i] = 0;
    for (int r = 0; r < size; ++r) want[i] += value(r, rank * count + i);
  }
  s = f32_tensor(send, count * size, send_shape);
  d = f32_tensor(recv, count, recv_shape);
  t0 = now_us();
  failures += check(dt_reduce_scatter(comm, &s, &d, DT_SUM, NULL, NULL), "reduce_scatter");
  double t_reduce_scatter = now_us() - t0;
  failures += expect(recv, want, count, "reduce_scatter");

  /* broadcast from rank 0 */
  for (int64_t i = 0; i < count; ++i) {
    recv[i] = rank == 0 ? value(0, i) : -1.0f;
    want[i] = value(0, i);
  }
  t0 = now_us();
  failures += check(dt_broadcast(comm, &d, 0, NULL, NULL), "broadcast");
  double t_broadcast = now_us() - t0;
  failures += expect(recv, want, count, "broadcast");

  /* alltoall: block j of rank r holds r * 100 + j */
  for (int j = 0; j < size; ++j)
    for (int64_t i = 0; i < count; ++i) {
      send[j * count + i] = (float)(rank * 100 + j);
      want[j * count + i] = (float)(j * 100 + rank);
    }
  s = f32_tensor(send, count * size, send_shape);
  d = f32_tensor(recv, count * size, recv_shape);
  t0 = now_us();
  failures += check(dt_alltoall(comm, &s, &d, NULL, NULL), "alltoall");
  double t_alltoall = now_us() - t0;
  failures += expect(recv, want, count * size, "alltoall");

  failures += check(dt_barrier(comm), "barrier");

  if (rank == 0) {
    printf("%-16s %12s\n", "collective", "time (us)");
    printf("%-16s %12.1f\n", "allreduce", t_allreduce);
    printf("%-16s %12.1f\n", "allgather", t_allgather);
    printf("%-16s %12.1f\n", "reduce_scatter", t_reduce_scatter);
    printf("%-16s %12.1f\n", "broadcast", t_broadcast);
    printf("%-16s %12.1f\n", "alltoall", t_alltoall);
  }
  printf("rank %d: %s\n", rank, failures == 0 ? "all collectives correct" : "FAILED");

  free(send);
  free(recv);
  free(want);
  dt_comm_destroy(comm);
  return failures == 0 ? 0 : 1;
}
