#include "bench.h"

/* Small positive integers: exact in every dtype, and their sum over any world
   up to 100k ranks stays exact in float32 (< 2^24). Zero never occurs, so a
   receive buffer still holding its zeros is always caught. */
static int64_t value(int64_t source, int64_t i) { return (source * 31 + i) % 127 + 1; }

/* An alltoall block is identified by its source and its destination. */
static int64_t block_value(int64_t source, int64_t dest, int world, int64_t i) {
  return value(source * world + dest, i);
}

static void store(void *buf, dtb_dtype t, int64_t i, int64_t v) {
  switch (t) {
    case DTB_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case DTB_FLOAT64: ((double *)buf)[i] = (double)v; break;
    case DTB_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case DTB_INT64: ((int64_t *)buf)[i] = v; break;
    default: break;
  }
}

static double load(const void *buf, dtb_dtype t, int64_t i) {
  switch (t) {
    case DTB_FLOAT32: return ((const float *)buf)[i];
    case DTB_FLOAT64: return ((const double *)buf)[i];
    case DTB_INT32: return ((const int32_t *)buf)[i];
    case DTB_INT64: return (double)((const int64_t *)buf)[i];
    default: return 0;
  }
}

static int64_t sum_over_ranks(int world, int64_t i) {
  int64_t sum = 0;
  for (int r = 0; r < world; ++r) sum += value(r, i);
  return sum;
}

void dtb_fill(dtb_op op, const dtb_layout *l, int rank, int world, dtb_dtype t, void *send, void *recv) {
  const int64_t c = l->count;
  for (int64_t i = 0; i < l->recv_elems; ++i) store(recv, t, i, 0);
  switch (op) {
    case DTB_ALLREDUCE:
    case DTB_ALLGATHER:
    case DTB_REDUCE_SCATTER:
      for (int64_t i = 0; i < l->send_elems; ++i) store(send, t, i, value(rank, i));
      break;
    case DTB_ALLTOALL:
      for (int64_t d = 0; d < world; ++d)
        for (int64_t i = 0; i < c; ++i) store(send, t, d * c + i, block_value(rank, d, world, i));
      break;
    case DTB_BROADCAST:
      for (int64_t i = 0; i < l->send_elems; ++i) store(send, t, i, rank == 0 ? value(0, i) : 0);
      break;
    default:
      break;
  }
}

static int64_t expected(dtb_op op, int64_t c, int rank, int world, int64_t i) {
  switch (op) {
    case DTB_ALLREDUCE: return sum_over_ranks(world, i);
    case DTB_ALLGATHER: return value(i / c, i % c);
    case DTB_REDUCE_SCATTER: return sum_over_ranks(world, rank * c + i);
    case DTB_ALLTOALL: return block_value(i / c, rank, world, i % c);
    case DTB_BROADCAST: return value(0, i);
    default: return -1;
  }
}

int64_t dtb_check(dtb_op op, const dtb_layout *l, int rank, int world, dtb_dtype t, const void *send,
                  const void *recv, double *got, double *want) {
  const void *result = op == DTB_BROADCAST ? send : recv;
  const int64_t n = op == DTB_BROADCAST ? l->send_elems : l->recv_elems;
  for (int64_t i = 0; i < n; ++i) {
    const double g = load(result, t, i);
    const double w = (double)expected(op, l->count, rank, world, i);
    if (g != w) {
      *got = g;
      *want = w;
      return i;
    }
  }
  return -1;
}
