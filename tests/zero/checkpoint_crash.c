/* One rank of a job that saves a ZeRO checkpoint over and over, for the test
 * that kills a rank at random points of a save (test_checkpoint_crash.py).
 *
 *   checkpoint_crash save DIR FIRST [COUNT]
 *                                     saves versions FIRST, FIRST + 1, ... of
 *                                     the model (every element equal to the
 *                                     version) until a save fails, COUNT
 *                                     (500) saves or a kill; rank 0 prints
 *                                     "committed V" once save V returned DT_OK
 *   checkpoint_crash load DIR         loads DIR; rank 0 prints "loaded V" when
 *                                     every element holds version V, and every
 *                                     rank exits 1 otherwise
 *
 * Stage 0 with AdamW: every rank holds the whole model, saves its share of
 * it (with two state buffers beside the weights) and loads all of it. */
#include <dtrain.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMENTS (1 << 17)

static int fail(const char *what, dt_status s) {
  printf("%s: %s: %s\n", what, dt_status_string(s), dt_error_last());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "save") == 0 && argc < 4)) {
    fprintf(stderr, "usage: %s save DIR FIRST [COUNT] | load DIR\n", argv[0]);
    return 2;
  }
  dt_comm *comm = NULL;
  dt_status s = dt_comm_create(&comm, NULL);
  if (s != DT_OK) return fail("dt_comm_create", s);
  int rank = 0;
  dt_comm_rank(comm, &rank);

  float *initial = calloc(ELEMENTS, sizeof *initial);
  int64_t shape[1] = {ELEMENTS};
  DLTensor param = {initial, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  const DLTensor *params[1] = {&param};
  dt_optimizer_options optim = DT_OPTIMIZER_OPTIONS_INIT;
  dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
  opts.stage = 0;
  dt_zero *zero = NULL;
  s = dt_zero_create(&zero, comm, params, 1, &optim, &opts);
  if (s != DT_OK) return fail("dt_zero_create", s);
  DLTensor model;
  dt_zero_parameter(zero, 0, &model);
  float *values = model.data;

  int status = 0;
  if (strcmp(argv[1], "save") == 0) {
    const int first = atoi(argv[3]);
    const int count = argc > 4 ? atoi(argv[4]) : 500;
    for (int v = first; v < first + count; ++v) {
      for (int64_t k = 0; k < ELEMENTS; ++k) values[k] = (float)v;
      s = dt_zero_save(zero, argv[2]);
      if (s != DT_OK) {
        status = fail("dt_zero_save", s);
        break;
      }
      if (rank == 0) printf("committed %d\n", v);
      fflush(stdout);
    }
  } else {
    s = dt_zero_load(zero, argv[2]);
    if (s != DT_OK) {
      status = fail("dt_zero_load", s);
    } else {
      int64_t k = 1;
      while (k < ELEMENTS && values[k] == values[0]) ++k;
      if (k < ELEMENTS) {
        printf("element %lld holds %g, element 0 %g: a mix of versions\n", (long long)k, values[k], values[0]);
        status = 1;
      } else if (rank == 0) {
        printf("loaded %d\n", (int)values[0]);
      }
    }
  }
  dt_zero_destroy(zero);
  dt_comm_destroy(comm);
  free(initial);
  return status;
}
