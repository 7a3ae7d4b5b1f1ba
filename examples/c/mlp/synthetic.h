/*
 * A synthetic but learnable classification task, reproducible from a seed.
 *
 * Inputs are standard normal vectors; a sample's label is the argmax of a
 * fixed random "teacher" network, tanh(x T1^T) T2^T, so a student MLP can
 * learn it but not memorise it (every step sees fresh samples).
 *
 * Every number comes from a counter-based generator: element i of a stream
 * is a pure function of (seed, stream, i). Any rank can therefore produce
 * any slice of any global batch without drawing the ones before it, and
 * examples/python/synthetic.py produces the same numbers with numpy.
 *
 *   key(seed, stream) = mix(seed + mix(stream))
 *   normal(key, i)    = sqrt(-2 ln u1) cos(2 pi u2),
 *                       u1 = ((mix(key + 2i) >> 11) + 1) / 2^53,
 *                       u2 =  (mix(key + 2i + 1) >> 11) / 2^53
 * where mix is splitmix64's finaliser; all arithmetic modulo 2^64.
 */
#ifndef DT_EXAMPLE_SYNTHETIC_H
#define DT_EXAMPLE_SYNTHETIC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Streams of one seed. */
enum {
  SYN_STREAM_TEACHER1 = 1, /* teacher's first layer */
  SYN_STREAM_TEACHER2 = 2, /* teacher's second layer */
  SYN_STREAM_TRAIN = 3,    /* training inputs: sample n is elements [n*in, (n+1)*in) */
  SYN_STREAM_HELDOUT = 4,  /* held-out inputs, likewise */
  SYN_STREAM_INIT = 100    /* student initialisation: SYN_STREAM_INIT + rank */
};

/* Width of the teacher's hidden layer. */
#define SYN_TEACHER_HIDDEN 32

uint64_t syn_mix(uint64_t x);
uint64_t syn_key(uint64_t seed, uint64_t stream);
double syn_normal(uint64_t key, uint64_t i);

typedef struct syn_task {
  int inputs;
  int classes;
  uint64_t seed;
  double *t1; /* [SYN_TEACHER_HIDDEN x inputs] */
  double *t2; /* [classes x SYN_TEACHER_HIDDEN] */
} syn_task;

/* 0, or -1 when out of memory. */
int syn_task_init(syn_task *task, uint64_t seed, int inputs, int classes);
void syn_task_free(syn_task *task);

/* Samples [first, first + n) of `stream`: x is [n x inputs], y is [n]. */
void syn_samples(const syn_task *task, uint64_t stream, int64_t first, int n, float *x, int32_t *y);

/* Rank `rank`'s share of `total` items split over `world` ranks as evenly as
   possible: items [*begin, *begin + *count). */
void syn_shard(int64_t total, int rank, int world, int64_t *begin, int64_t *count);

#ifdef __cplusplus
}
#endif

#endif /* DT_EXAMPLE_SYNTHETIC_H */
