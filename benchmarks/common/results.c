#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bench.h"

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

/* JSON has no inf or nan: those are null. */
static cJSON *number(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *document(const dtb_results *r) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "benchmark", "collectives");
  cJSON_AddStringToObject(doc, "implementation", r->implementation ? r->implementation : "");
  cJSON_AddStringToObject(doc, "library", r->library ? r->library : "");
  cJSON_AddNumberToObject(doc, "world_size", r->world);
  cJSON_AddStringToObject(doc, "dtype", dtb_dtype_name(r->dtype));
  cJSON_AddItemToObject(doc, "memcpy_GBps", number(r->memcpy_gbps));
  cJSON_AddNumberToObject(doc, "evict_bytes", (double)r->evict_bytes);
  cJSON *rows = cJSON_AddArrayToObject(doc, "results");
  for (size_t i = 0; i < r->nrows; ++i) {
    const dtb_row *row = &r->rows[i];
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "op", dtb_op_name(row->op));
    cJSON_AddNumberToObject(item, "bytes", (double)row->bytes);
    cJSON_AddNumberToObject(item, "count", (double)row->count);
    cJSON_AddNumberToObject(item, "iters", row->iters);
    cJSON_AddItemToObject(item, "time_us", number(row->time_s * 1e6));
    cJSON_AddItemToObject(item, "algbw_GBps", number(row->algbw));
    cJSON_AddItemToObject(item, "busbw_GBps", number(row->busbw));
    cJSON_AddItemToObject(item, "busbw_vs_memcpy", number(r->memcpy_gbps > 0 ? row->busbw / r->memcpy_gbps : NAN));
    cJSON_AddItemToArray(rows, item);
  }
  return doc;
}

int dtb_write_json(const char *path, const dtb_results *r) {
  cJSON *doc = document(r);
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (text == NULL) abort(); /* cJSON fails only when out of memory */
  FILE *f = fopen(path, "w");
  int failed = f == NULL || fputs(text, f) < 0 || fputc('\n', f) == EOF;
  cJSON_free(text);
  if (f != NULL && fclose(f) != 0) failed = 1;
  if (failed && errno == 0) errno = EIO;
  return failed ? -1 : 0;
}
