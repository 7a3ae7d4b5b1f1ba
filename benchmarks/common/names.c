#include "bench.h"

#include <string.h>

static const char *const op_names[DTB_OP_COUNT] = {
    "allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "alltoallv",
    "reduce",    "gather",    "scatter",        "allgatherv", "reduce_scatterv"};
static const char *const dtype_names[DTB_DTYPE_COUNT] = {"float32", "float64", "int32", "int64"};
static const size_t dtype_sizes[DTB_DTYPE_COUNT] = {4, 8, 4, 8};

const char *dtb_op_name(dtb_op op) { return (unsigned)op < DTB_OP_COUNT ? op_names[op] : "?"; }

int dtb_op_parse(const char *name, dtb_op *out) {
  for (int i = 0; i < DTB_OP_COUNT; ++i) {
    if (strcmp(name, op_names[i]) == 0) {
      *out = (dtb_op)i;
      return 0;
    }
  }
  return -1;
}

const char *dtb_dtype_name(dtb_dtype t) { return (unsigned)t < DTB_DTYPE_COUNT ? dtype_names[t] : "?"; }

int dtb_dtype_parse(const char *name, dtb_dtype *out) {
  for (int i = 0; i < DTB_DTYPE_COUNT; ++i) {
    if (strcmp(name, dtype_names[i]) == 0) {
      *out = (dtb_dtype)i;
      return 0;
    }
  }
  return -1;
}

size_t dtb_dtype_size(dtb_dtype t) { return (unsigned)t < DTB_DTYPE_COUNT ? dtype_sizes[t] : 0; }
