#include "synthetic.h"

#include <math.h>
#include <stdlib.h>

uint64_t syn_mix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t syn_key(uint64_t seed, uint64_t stream) { return syn_mix(seed + syn_mix(stream)); }

double syn_normal(uint64_t key, uint64_t i) {
  const double pi = 3.14159265358979323846;
  const double two_to_minus_53 = 1.0 / 9007199254740992.0;
  /* u1 in (0, 1] keeps the logarithm finite. */
  double u1 = (double)((syn_mix(key + 2 * i) >> 11) + 1) * two_to_minus_53;
  double u2 = (double)(syn_mix(key + 2 * i + 1) >> 11) * two_to_minus_53;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * pi * u2);
}

static void fill_normal(double *out, int64_t n, uint64_t key, double scale) {
  for (int64_t i = 0; i < n; ++i) out[i] = syn_normal(key, (uint64_t)i) * scale;
}

int syn_task_init(syn_task *task, uint64_t seed, int inputs, int classes) {
  task->inputs = inputs;
  task->classes = classes;
  task->seed = seed;
  task->t1 = malloc(sizeof(double) * SYN_TEACHER_HIDDEN * inputs);
  task->t2 = malloc(sizeof(double) * classes * SYN_TEACHER_HIDDEN);
  if (task->t1 == NULL || task->t2 == NULL) {
    syn_task_free(task);
    return -1;
  }
  /* Scaled so that the teacher's pre-activations have unit variance. */
  fill_normal(task->t1, (int64_t)SYN_TEACHER_HIDDEN * inputs, syn_key(seed, SYN_STREAM_TEACHER1),
              1.0 / sqrt((double)inputs));
  fill_normal(task->t2, (int64_t)classes * SYN_TEACHER_HIDDEN, syn_key(seed, SYN_STREAM_TEACHER2),
              1.0 / sqrt((double)SYN_TEACHER_HIDDEN));
  return 0;
}

void syn_task_free(syn_task *task) {
  free(task->t1);
  free(task->t2);
  task->t1 = task->t2 = NULL;
}

static int32_t teacher_label(const syn_task *task, const float *x) {
  double hidden[SYN_TEACHER_HIDDEN];
  for (int k = 0; k < SYN_TEACHER_HIDDEN; ++k) {
    double s = 0;
    for (int j = 0; j < task->inputs; ++j) s += task->t1[k * task->inputs + j] * x[j];
    hidden[k] = tanh(s);
  }
  int32_t best = 0;
  double best_score = -INFINITY;
  for (int c = 0; c < task->classes; ++c) {
    double s = 0;
    for (int k = 0; k < SYN_TEACHER_HIDDEN; ++k) s += task->t2[c * SYN_TEACHER_HIDDEN + k] * hidden[k];
    if (s > best_score) {
      best_score = s;
      best = c;
    }
  }
  return best;
}

void syn_samples(const syn_task *task, uint64_t stream, int64_t first, int n, float *x, int32_t *y) {
  uint64_t key = syn_key(task->seed, stream);
  for (int s = 0; s < n; ++s) {
    float *row = x + (int64_t)s * task->inputs;
    uint64_t base = (uint64_t)(first + s) * (uint64_t)task->inputs;
    for (int j = 0; j < task->inputs; ++j) row[j] = (float)syn_normal(key, base + (uint64_t)j);
    y[s] = teacher_label(task, row);
  }
}

void syn_shard(int64_t total, int rank, int world, int64_t *begin, int64_t *count) {
  int64_t lo = total * rank / world, hi = total * (rank + 1) / world;
  *begin = lo;
  *count = hi - lo;
}
