#include "bench.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int dtb_layout_for(dtb_op op, int64_t nominal_bytes, int world, dtb_dtype t, dtb_layout *out) {
  const int64_t elem = (int64_t)dtb_dtype_size(t);
  const int64_t n = world;
  memset(out, 0, sizeof *out);
  switch (op) {
    case DTB_ALLREDUCE:
    case DTB_BROADCAST:
      out->count = nominal_bytes / elem;
      out->send_elems = out->count;
      out->recv_elems = op == DTB_BROADCAST ? 0 : out->count;
      out->bytes = out->count * elem;
      break;
    case DTB_ALLGATHER:
    case DTB_REDUCE_SCATTER:
    case DTB_ALLTOALL:
      /* The size is the whole buffer, so each rank's share is 1/n of it. */
      out->count = nominal_bytes / (elem * n);
      out->send_elems = op == DTB_ALLGATHER ? out->count : out->count * n;
      out->recv_elems = op == DTB_REDUCE_SCATTER ? out->count : out->count * n;
      out->bytes = out->count * n * elem;
      break;
    default:
      return -1;
  }
  return out->count > 0 ? 0 : -1;
}

double dtb_bus_factor(dtb_op op, int world) {
  const double n = world;
  switch (op) {
    case DTB_ALLREDUCE:
      return 2.0 * (n - 1) / n;
    case DTB_ALLGATHER:
    case DTB_REDUCE_SCATTER:
    case DTB_ALLTOALL:
      return (n - 1) / n;
    case DTB_BROADCAST:
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
