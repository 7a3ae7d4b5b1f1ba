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
    case DTB_REDUCE:
    case DTB_GATHER:
    case DTB_ALLGATHERV:
    case DTB_REDUCE_SCATTERV:
      for (int64_t i = 0; i < l->send_elems; ++i) store(send, t, i, value(rank, i));
      break;
    case DTB_ALLTOALL:
      for (int64_t d = 0; d < world; ++d)
        for (int64_t i = 0; i < c; ++i) store(send, t, d * c + i, block_value(rank, d, world, i));
      break;
    case DTB_ALLTOALLV: {
      int64_t at = 0;
      for (int d = 0; d < world; ++d) {
        const int64_t n = dtb_alltoallv_block(c, world, rank, d);
        for (int64_t i = 0; i < n; ++i) store(send, t, at++, block_value(rank, d, world, i));
      }
      break;
    }
    case DTB_BROADCAST:
      for (int64_t i = 0; i < l->send_elems; ++i) store(send, t, i, rank == DTB_ROOT ? value(DTB_ROOT, i) : 0);
      break;
    case DTB_SCATTER:
      /* Off the root send_elems is 0. */
      for (int64_t i = 0; i < l->send_elems; ++i) store(send, t, i, value(i / c, i % c));
      break;
    default:
      break;
  }
}

static int64_t expected(dtb_op op, int64_t c, int rank, int world, int64_t i) {
  switch (op) {
    case DTB_ALLREDUCE:
    case DTB_REDUCE: return sum_over_ranks(world, i);
    case DTB_REDUCE_SCATTER: return sum_over_ranks(world, rank * c + i);
    case DTB_REDUCE_SCATTERV: return sum_over_ranks(world, dtb_piece_start(c, world, rank) + i);
    case DTB_BROADCAST: return value(DTB_ROOT, i);
    case DTB_SCATTER: return value(rank, i);
    default: return -1;
  }
}

/* The elements of block `source` in a result that packs one block per rank. */
static int64_t block_elems(dtb_op op, int64_t c, int rank, int world, int source) {
  switch (op) {
    case DTB_ALLGATHERV: return dtb_piece(c, world, source);
    case DTB_ALLTOALLV: return dtb_alltoallv_block(c, world, source, rank);
    default: return c;
  }
}

/* The result of allgather, gather, alltoall and their uneven forms: rank s's
   block, in rank order, holds what rank s sent (alltoall: sent to this rank). */
static int64_t check_blocks(dtb_op op, const dtb_layout *l, int rank, int world, dtb_dtype t, const void *recv,
                            double *got, double *want) {
  const int to_me = op == DTB_ALLTOALL || op == DTB_ALLTOALLV;
  int64_t at = 0;
  for (int s = 0; s < world; ++s) {
    const int64_t n = block_elems(op, l->count, rank, world, s);
    for (int64_t i = 0; i < n; ++i, ++at) {
      const double g = load(recv, t, at);
      const double w = (double)(to_me ? block_value(s, rank, world, i) : value(s, i));
      if (g != w) {
        *got = g;
        *want = w;
        return at;
      }
    }
  }
  return -1;
}

int64_t dtb_check(dtb_op op, const dtb_layout *l, int rank, int world, dtb_dtype t, const void *send,
                  const void *recv, double *got, double *want) {
  const void *result = op == DTB_BROADCAST ? send : recv;
  const int64_t n = op == DTB_BROADCAST ? l->send_elems : l->recv_elems;
  switch (op) {
    case DTB_ALLGATHER:
    case DTB_GATHER:
    case DTB_ALLTOALL:
    case DTB_ALLGATHERV:
    case DTB_ALLTOALLV:
      /* Off the root a gather receives nothing. */
      return n > 0 ? check_blocks(op, l, rank, world, t, recv, got, want) : -1;
    default:
      break;
  }
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
