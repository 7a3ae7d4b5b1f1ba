#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void dtb_results_add(dtb_results *r, dtb_row row) {
  row.algbw = row.time_s > 0 ? (double)row.bytes / row.time_s * 1e-9 : 0.0;
  row.busbw = row.algbw * dtb_bus_factor(row.op, r->world);
  if (r->nrows == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 64;
    dtb_row *rows = realloc(r->rows, cap * sizeof *rows);
    if (rows == NULL) abort();
    r->rows = rows;
    r->cap = cap;
  }
  r->rows[r->nrows++] = row;
}

void dtb_results_free(dtb_results *r) {
  free(r->rows);
  r->rows = NULL;
  r->nrows = r->cap = 0;
}

void dtb_print_header(FILE *f, const dtb_results *r) {
  fprintf(f, "# %s collectives: %d rank%s, %s\n", r->implementation, r->world, r->world == 1 ? "" : "s",
          dtb_dtype_name(r->dtype));
  fprintf(f, "# memcpy %.2f GB/s (one thread on rank 0, bytes copied / time): the ceiling for busbw\n",
          r->memcpy_gbps);
  fprintf(f, "# time: max over ranks of the mean per iteration; GB/s = 1e9 B/s; busbw as nccl-tests\n");
}

void dtb_print_op_header(FILE *f, dtb_op op) {
  fprintf(f, "#\n# %s\n", dtb_op_name(op));
  fprintf(f, "# %12s %12s %6s %12s %12s %12s %13s\n", "size(B)", "count", "iters", "time(us)", "algbw(GB/s)",
          "busbw(GB/s)", "busbw/memcpy");
}

void dtb_print_row(FILE *f, const dtb_results *r, const dtb_row *row) {
  double share = r->memcpy_gbps > 0 ? row->busbw / r->memcpy_gbps : 0.0;
  fprintf(f, "  %12lld %12lld %6d %12.2f %12.3f %12.3f %13.3f\n", (long long)row->bytes, (long long)row->count,
          row->iters, row->time_s * 1e6, row->algbw, row->busbw, share);
  fflush(f);
}

void dtb_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; ++p) {
    if (*p == '"' || *p == '\\') {
      fprintf(f, "\\%c", *p);
    } else if (*p == '\n') {
      fputs("\\n", f);
    } else if (*p < 0x20) {
      fprintf(f, "\\u%04x", *p);
    } else {
      fputc(*p, f);
    }
  }
  fputc('"', f);
}

/* JSON has no inf or nan. */
static void number(FILE *f, double v) {
  if (isfinite(v)) {
    fprintf(f, "%.6g", v);
  } else {
    fputs("null", f);
  }
}

int dtb_write_json(const char *path, const dtb_results *r) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return -1;
  fputs("{\n  \"benchmark\": \"collectives\",\n  \"implementation\": ", f);
  dtb_json_string(f, r->implementation);
  fputs(",\n  \"library\": ", f);
  dtb_json_string(f, r->library);
  fprintf(f, ",\n  \"world_size\": %d,\n  \"dtype\": ", r->world);
  dtb_json_string(f, dtb_dtype_name(r->dtype));
  fputs(",\n  \"memcpy_GBps\": ", f);
  number(f, r->memcpy_gbps);
  fputs(",\n  \"results\": [", f);
  for (size_t i = 0; i < r->nrows; ++i) {
    const dtb_row *row = &r->rows[i];
    fprintf(f, "%s\n    {\"op\": \"%s\", \"bytes\": %lld, \"count\": %lld, \"iters\": %d, \"time_us\": ",
            i ? "," : "", dtb_op_name(row->op), (long long)row->bytes, (long long)row->count, row->iters);
    number(f, row->time_s * 1e6);
    fputs(", \"algbw_GBps\": ", f);
    number(f, row->algbw);
    fputs(", \"busbw_GBps\": ", f);
    number(f, row->busbw);
    fputs(", \"busbw_vs_memcpy\": ", f);
    number(f, r->memcpy_gbps > 0 ? row->busbw / r->memcpy_gbps : NAN);
    fputs("}", f);
  }
  fputs("\n  ]\n}\n", f);
  int failed = ferror(f);
  if (fclose(f) != 0 || failed) {
    if (errno == 0) errno = EIO;
    return -1;
  }
  return 0;
}
