#include "bench.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The operations whose size is the whole buffer, each rank's share 1/n of it. */
static int shared_evenly(dtb_op op) {
  return op == DTB_ALLGATHER || op == DTB_REDUCE_SCATTER || op == DTB_ALLTOALL || op == DTB_GATHER ||
         op == DTB_SCATTER;
}

int dtb_layout_for(dtb_op op, int64_t nominal_bytes, int world, int rank, dtb_dtype t, dtb_layout *out) {
  const int64_t elem = (int64_t)dtb_dtype_size(t);
  const int64_t n = world;
  const int root = rank == DTB_ROOT;
  const int64_t count = shared_evenly(op) ? nominal_bytes / (elem * n) : nominal_bytes / elem;
  /* The size in elements. */
  const int64_t size = shared_evenly(op) ? count * n : count;
  int64_t send = size, recv = size;
  switch (op) {
    case DTB_ALLREDUCE:
    case DTB_ALLTOALL:
    case DTB_ALLTOALLV:
      break;
    case DTB_BROADCAST: recv = 0; break;
    case DTB_REDUCE: recv = root ? size : 0; break;
    case DTB_ALLGATHER: send = count; break;
    case DTB_GATHER:
      send = count;
      recv = root ? size : 0;
      break;
    case DTB_REDUCE_SCATTER: recv = count; break;
    case DTB_SCATTER:
      send = root ? size : 0;
      recv = count;
      break;
    case DTB_ALLGATHERV: send = dtb_piece(size, world, rank); break;
    case DTB_REDUCE_SCATTERV: recv = dtb_piece(size, world, rank); break;
    default: return -1;
  }
  out->count = count;
  out->send_elems = send;
  out->recv_elems = recv;
  out->bytes = size * elem;
  return count > 0 ? 0 : -1;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int dtb_layout_largest(dtb_op op, int64_t min_bytes, int64_t max_bytes, int world, int rank, dtb_dtype t,
                       dtb_layout *out) {
  int fits = 0;
  memset(out, 0, sizeof *out);
  for (int64_t nominal = min_bytes; nominal <= max_bytes; nominal *= 2) {
    dtb_layout l;
    if (dtb_layout_for(op, nominal, world, rank, t, &l) == 0) {
      fits = 1;
      out->count = max64(out->count, l.count);
      out->send_elems = max64(out->send_elems, l.send_elems);
      out->recv_elems = max64(out->recv_elems, l.recv_elems);
      out->bytes = max64(out->bytes, l.bytes);
    }
    if (nominal > max_bytes / 2) break;
  }
  return fits ? 0 : -1;
}

/* 0 + 1 + ... + r */
static int64_t triangle(int64_t r) { return r * (r + 1) / 2; }

int64_t dtb_piece_start(int64_t total, int world, int r) {
  /* floor(total * triangle(r) / triangle(world)), split so that no product
     overflows: total = q * whole + rest, with rest * triangle(r) < whole^2. */
  const int64_t whole = triangle(world);
  const int64_t part = triangle(r);
  return total / whole * part + total % whole * part / whole;
}

int64_t dtb_piece(int64_t total, int world, int r) {
  return dtb_piece_start(total, world, r + 1) - dtb_piece_start(total, world, r);
}

int64_t dtb_alltoallv_block(int64_t total, int world, int source, int dest) {
  return dtb_piece(total, world, (source + dest) % world);
}

void dtb_counts(dtb_op op, const dtb_layout *l, int rank, int world, int64_t *send_counts, int64_t *recv_counts) {
  for (int r = 0; r < world; ++r) {
    switch (op) {
      case DTB_ALLTOALLV:
        send_counts[r] = dtb_alltoallv_block(l->count, world, rank, r);
        recv_counts[r] = dtb_alltoallv_block(l->count, world, r, rank);
        break;
      case DTB_ALLGATHERV:
      case DTB_REDUCE_SCATTERV:
        recv_counts[r] = dtb_piece(l->count, world, r);
        break;
      default:
        break;
    }
  }
}

double dtb_bus_factor(dtb_op op, int world) {
  const double n = world;
  switch (op) {
    case DTB_ALLREDUCE:
      return 2.0 * (n - 1) / n;
    case DTB_ALLGATHER:
    case DTB_REDUCE_SCATTER:
    case DTB_ALLTOALL:
    case DTB_GATHER:
    case DTB_SCATTER:
    case DTB_ALLGATHERV:
    case DTB_REDUCE_SCATTERV:
    case DTB_ALLTOALLV:
      return (n - 1) / n;
    case DTB_BROADCAST:
    case DTB_REDUCE:
      /* nccl-tests' 1, except that a world of one moves nothing between ranks. */
      return world > 1 ? 1.0 : 0.0;
    default:
      return 0.0;
  }
}

int dtb_parse_bytes(const char *text, int64_t *out) {
  char *end = NULL;
  if (!isdigit((unsigned char)text[0])) return -1;
  long long value = strtoll(text, &end, 10);
  int shift = 0;
  switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; ++end; break;
    case 'M': shift = 20; ++end; break;
    case 'G': shift = 30; ++end; break;
    default: break;
  }
  /* Accept "K", "KB", "KiB" and a bare "B"; all binary. */
  if (shift != 0 && *end == 'i') ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || value <= 0 || value > (INT64_MAX >> shift)) return -1;
  *out = (int64_t)value << shift;
  return 0;
}

int dtb_iterations(double seconds_per_iter, int fixed) {
  if (fixed > 0) return fixed;
  if (!(seconds_per_iter > 0)) return DTB_MAX_ITERS;
  double iters = ceil(DTB_TARGET_SECONDS / seconds_per_iter);
  if (iters < DTB_MIN_ITERS) return DTB_MIN_ITERS;
  if (iters > DTB_MAX_ITERS) return DTB_MAX_ITERS;
  return (int)iters;
}
