#include "bench.h"

#include <stdlib.h>
#include <string.h>

const dtb_option_info dtb_option_table[] = {
    {"ops", "LIST",
     "comma-separated: allreduce,allgather,reduce_scatter,alltoall,broadcast (the default), "
     "alltoallv,reduce,gather,scatter,allgatherv,reduce_scatterv; all: every one"},
    {"min-bytes", "SIZE", "smallest size (default 8); sizes double up to --max-bytes"},
    {"max-bytes", "SIZE", "largest size (default 256M); SIZE takes K, M, G (binary)"},
    {"iters", "N", "timed iterations per size (default: adaptive, about 0.2 s per size, between 5 and 10000)"},
    {"warmup", "N", "untimed iterations per size (default 3)"},
    {"dtype", "TYPE", "float32 (default), float64, int32, int64"},
    {"json", "PATH", "also write the results as JSON"},
    {NULL, NULL, NULL}};

void dtb_options_init(dtb_options *o) {
  memset(o, 0, sizeof *o);
  o->ops = DTB_DEFAULT_OPS;
  o->min_bytes = 8;
  o->max_bytes = (int64_t)256 << 20;
  o->iters = 0;
  o->warmup = 3;
  o->dtype = DTB_FLOAT32;
}

static int parse_count(const char *text, int min, int *out) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < min || v > 100000000) return -1;
  *out = (int)v;
  return 0;
}

static int parse_ops(const char *text, unsigned *out) {
  char name[32];
  unsigned ops = 0;
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= sizeof name) return -1;
    memcpy(name, p, len);
    name[len] = '\0';
    dtb_op op;
    if (strcmp(name, "all") == 0) {
      ops |= (1u << DTB_OP_COUNT) - 1;
    } else if (dtb_op_parse(name, &op) == 0) {
      ops |= 1u << op;
    } else {
      return -1;
    }
    p += len;
    if (*p == ',') ++p;
  }
  *out = ops;
  return ops ? 0 : -1;
}

int dtb_set_option(dtb_options *o, const char *name, const char *value) {
  int bad = 0;
  if (strcmp(name, "ops") == 0) {
    bad = parse_ops(value, &o->ops);
  } else if (strcmp(name, "min-bytes") == 0) {
    bad = dtb_parse_bytes(value, &o->min_bytes);
  } else if (strcmp(name, "max-bytes") == 0) {
    bad = dtb_parse_bytes(value, &o->max_bytes);
  } else if (strcmp(name, "iters") == 0) {
    bad = parse_count(value, 1, &o->iters);
  } else if (strcmp(name, "warmup") == 0) {
    bad = parse_count(value, 0, &o->warmup);
  } else if (strcmp(name, "dtype") == 0) {
    bad = dtb_dtype_parse(value, &o->dtype);
  } else if (strcmp(name, "json") == 0) {
    o->json_path = value;
  } else {
    snprintf(o->error, sizeof o->error, "--%s is not a shared option", name);
    return -1;
  }
  if (bad) {
    snprintf(o->error, sizeof o->error, "--%s: bad value '%s'", name, value);
    return -1;
  }
  return 0;
}

int dtb_options_check(dtb_options *o) {
  if (o->min_bytes > o->max_bytes) {
    snprintf(o->error, sizeof o->error, "--min-bytes is larger than --max-bytes");
    return -1;
  }
  return 0;
}
