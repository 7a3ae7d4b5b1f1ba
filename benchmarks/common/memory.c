#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double dtb_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *dtb_alloc(size_t bytes) {
  void *p = NULL;
  /* Cache-line aligned; at least one line so that empty buffers are valid too. */
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
    abort();
  }
  /* Touch every page now so that no timed iteration pays for a page fault. */
  memset(p, 0, bytes);
  return p;
}

void dtb_free(void *p) { free(p); }

double dtb_memcpy_gbps(void) {
  /* Far beyond any last-level cache, so this is memory, not cache, bandwidth. */
  const size_t bytes = (size_t)256 << 20;
  const int copies = 5;
  char *src = malloc(bytes);
  char *dst = malloc(bytes);
  if (src == NULL || dst == NULL) {
    free(src);
    free(dst);
    return 0.0;
  }
  /* Touch every page first: page faults are not copy bandwidth. */
  memset(src, 1, bytes);
  memset(dst, 0, bytes);
  volatile char sink = 0;
  double best = 0.0;
  for (int k = 0; k < copies; ++k) {
    double t0 = dtb_now();
    memcpy(dst, src, bytes);
    double seconds = dtb_now() - t0;
    /* Reading dst keeps the copy from being optimised away. */
    sink ^= dst[(size_t)k * 4096];
    double gbps = (double)bytes / seconds * 1e-9;
    if (gbps > best) best = gbps;
  }
  (void)sink;
  free(src);
  free(dst);
  return best;
}
