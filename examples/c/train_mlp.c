/*
 * Trains a multi-layer perceptron with data parallelism: every rank holds a
 * replica, takes its shard of each global batch, and DDP averages the
 * gradients while backward is still running; AdamW then takes the same step
 * on every rank. With --zero S the model is trained with ZeRO stage S
 * instead: a dt_zero owns the parameters, gradients and AdamW state, sharded
 * over the ranks as the stage says, and each layer's parameters are made
 * whole just before the layer runs (stage 3) through the model's layer hooks.
 *
 *   dtrun -n 4 ./train_mlp [options]     4 ranks on this machine
 *   dtrun -n 4 ./train_mlp --zero 3      the same, fully sharded
 *   ./train_mlp [options]                a world of one
 *
 * The task is synthetic but learnable (examples/c/mlp/synthetic.h): the
 * labels of a fixed random teacher network, fresh samples every step, the
 * same numbers whatever the number of ranks. The program exits with 1 when
 * the loss did not fall below half of the first step's.
 */
#include <dtrain.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlp/mlp.h"
#include "mlp/synthetic.h"

#define INPUTS 64
#define CLASSES 10
#define HELDOUT_SAMPLES 4096
/* The final loss is the mean over this many last steps: one step's loss is noisy. */
#define FINAL_WINDOW 10

typedef struct options {
  int steps, batch, hidden, layers, log_every, bucket_kib;
  int zero_stage; /* -1: DDP */
  float lr;
  unsigned long long seed;
} options;

static const char usage[] =
    "usage: train_mlp [--steps N] [--batch N] [--hidden N] [--layers N] [--lr X] [--seed N]\n"
    "                 [--log-every N] [--bucket-kib N] [--zero STAGE]\n"
    "  --steps N       optimizer steps (default 200)\n"
    "  --batch N       global batch: samples per step over all ranks (default 256)\n"
    "  --hidden N      width of the hidden layers (default 256)\n"
    "  --layers N      number of hidden layers (default 2: 64 -> N -> N -> 10)\n"
    "  --lr X          AdamW learning rate (default 0.002)\n"
    "  --seed N        seed of the data, the teacher and the initial weights (default 1)\n"
    "  --log-every N   a progress line every N steps (default 20)\n"
    "  --bucket-kib N  DDP bucket size in KiB (default 8: one bucket per layer)\n"
    "  --zero STAGE    train with ZeRO stage 0, 1, 2 or 3 instead of DDP; one unit per layer\n";

static int parse_options(int argc, char **argv, options *o) {
  o->steps = 200;
  o->batch = 256;
  o->hidden = 256;
  o->layers = 2;
  o->log_every = 20;
  o->bucket_kib = 8;
  o->zero_stage = -1;
  o->lr = 2e-3f;
  o->seed = 1;
  static const struct option longopts[] = {{"steps", required_argument, NULL, 's'},
                                           {"batch", required_argument, NULL, 'b'},
                                           {"hidden", required_argument, NULL, 'w'},
                                           {"layers", required_argument, NULL, 'l'},
                                           {"lr", required_argument, NULL, 'r'},
                                           {"seed", required_argument, NULL, 'e'},
                                           {"log-every", required_argument, NULL, 'g'},
                                           {"bucket-kib", required_argument, NULL, 'k'},
                                           {"zero", required_argument, NULL, 'z'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  opterr = 0; /* the errors are said below, with the usage */
  int c, index = -1;
  while ((c = getopt_long(argc, argv, ":h", longopts, &index)) != -1) {
    const char *name = index >= 0 ? longopts[index].name : "";
    index = -1;
    if (c == 'h') {
      fputs(usage, stdout);
      exit(0);
    }
    if (c == ':' || c == '?') {
      fprintf(stderr, "train_mlp: %s '%s'\n%s", c == ':' ? "no value for" : "unknown option", argv[optind - 1], usage);
      return -1;
    }
    char *end = NULL;
    long long n = strtoll(optarg, &end, 10);
    int is_int = *end == '\0' && end != optarg;
    int *target = c == 's'   ? &o->steps
                  : c == 'b' ? &o->batch
                  : c == 'w' ? &o->hidden
                  : c == 'l' ? &o->layers
                  : c == 'g' ? &o->log_every
                  : c == 'k' ? &o->bucket_kib
                  : c == 'z' ? &o->zero_stage
                             : NULL;
    if (target != NULL) {
      /* --layers 0 is a linear model and --zero 0 a stage; everything else must be positive. */
      long long lowest = target == &o->layers || target == &o->zero_stage ? 0 : 1;
      long long highest = target == &o->zero_stage ? 3 : 1 << 24;
      if (!is_int || n < lowest || n > highest) {
        fprintf(stderr, "train_mlp: --%s: '%s' is not an integer in [%lld, %lld]\n", name, optarg, lowest, highest);
        return -1;
      }
      *target = (int)n;
    } else if (c == 'e') {
      if (!is_int || n < 0) {
        fprintf(stderr, "train_mlp: --seed: '%s' is not a non-negative integer\n", optarg);
        return -1;
      }
      o->seed = (unsigned long long)n;
    } else {
      double lr = strtod(optarg, &end);
      if (*end != '\0' || end == optarg || !(lr >= 0.0)) {
        fprintf(stderr, "train_mlp: --lr: '%s' is not a non-negative number\n", optarg);
        return -1;
      }
      o->lr = (float)lr;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "train_mlp: unexpected argument '%s'\n%s", argv[optind], usage);
    return -1;
  }
  if (o->layers + 1 > MLP_MAX_LINEAR) {
    fprintf(stderr, "train_mlp: --layers: at most %d\n", MLP_MAX_LINEAR - 1);
    return -1;
  }
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reports a failed call and aborts the communicator, so that the other ranks
   fail at once instead of waiting for this one. */
static void fail(dt_comm *comm, int rank, const char *what, dt_status s) {
  fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, what, dt_status_string(s), dt_error_last());
  if (comm != NULL) dt_comm_abort(comm);
  dt_comm_destroy(comm);
  exit(1);
}

static DLTensor f64_vector(double *data, int64_t *shape, int64_t n) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  *shape = n;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 64;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* Sums `values` over the ranks, in place. */
static dt_status sum_over_ranks(dt_comm *comm, double *values, int64_t n) {
  int64_t shape;
  DLTensor t = f64_vector(values, &shape, n);
  return dt_allreduce(comm, &t, &t, DT_SUM, NULL, NULL);
}

/* What mlp_backward() calls as each gradient becomes final: it is handed to
   whichever of DDP and ZeRO trains the model. */
typedef struct ready_context {
  dt_ddp *ddp;
  dt_zero *zero;
  double seconds; /* spent handing gradients over */
  dt_status status;
} ready_context;

static int mark_ready(void *user, size_t index) {
  ready_context *c = user;
  double t0 = now_s();
  c->status = c->ddp != NULL ? dt_ddp_mark_ready(c->ddp, index) : dt_zero_mark_ready(c->zero, index);
  c->seconds += now_s() - t0;
  return c->status != DT_OK;
}

/* ZeRO: the layer hooks gather a layer (unit) before it runs, aim the
   model's tensor pointers at the dt_zero's memory, and release it after. In
   stages 0-2 gathering returns at once and only the aiming matters. */
typedef struct zero_hooks {
  dt_comm *comm;
  dt_zero *zero;
  int rank;
  double seconds; /* spent gathering */
} zero_hooks;

static float *tensor_data(const DLTensor *t) { return (float *)((char *)t->data + t->byte_offset); }

static void zero_enter(void *user, mlp *m, int layer, int backward) {
  zero_hooks *h = user;
  double t0 = now_s();
  dt_status s = dt_zero_gather(h->zero, (size_t)layer);
  if (s == DT_OK) s = dt_zero_gather_wait(h->zero, (size_t)layer, -1);
  h->seconds += now_s() - t0;
  if (s != DT_OK) fail(h->comm, h->rank, "dt_zero_gather", s);
  for (size_t i = (size_t)(2 * layer); i < (size_t)(2 * layer + 2); ++i) {
    DLTensor view;
    s = dt_zero_parameter(h->zero, i, &view);
    if (s != DT_OK) fail(h->comm, h->rank, "dt_zero_parameter", s);
    m->param[i] = tensor_data(&view);
    if (!backward) continue;
    s = dt_zero_gradient(h->zero, i, &view);
    if (s != DT_OK) fail(h->comm, h->rank, "dt_zero_gradient", s);
    m->grad[i] = tensor_data(&view);
  }
}

static void zero_leave(void *user, mlp *m, int layer, int backward) {
  zero_hooks *h = user;
  (void)m;
  (void)backward;
  dt_status s = dt_zero_release(h->zero, (size_t)layer);
  if (s != DT_OK) fail(h->comm, h->rank, "dt_zero_release", s);
}

/* This rank's bytes held by the dt_zero now, and at most ever. */
static void zero_bytes(dt_comm *comm, int rank, dt_zero *zero, double *now, double *peak) {
  dt_zero_memory mem = DT_ZERO_MEMORY_INIT;
  dt_status s = dt_zero_memory_usage(zero, &mem);
  if (s != DT_OK) fail(comm, rank, "dt_zero_memory_usage", s);
  *now = (double)(mem.parameters + mem.gradients + mem.optimizer_state + mem.master_weights + mem.communication);
  *peak = (double)mem.peak;
}

/* Loss and accuracy on the held-out samples, each rank scoring its shard. */
static dt_status evaluate(dt_comm *comm, mlp *m, const syn_task *task, int rank, int world, float *x, int32_t *y,
                          double *loss, double *accuracy) {
  int64_t begin, count;
  syn_shard(HELDOUT_SAMPLES, rank, world, &begin, &count);
  /* As many forwards on every rank (some may have no samples left), since a
     sharded model's layer hooks are collective. */
  int64_t largest = (HELDOUT_SAMPLES + world - 1) / world;
  double totals[2] = {0.0, 0.0};
  for (int64_t done = 0; done < largest; done += m->max_batch) {
    int64_t left = count > done ? count - done : 0;
    int n = (int)(left < m->max_batch ? left : m->max_batch);
    int64_t correct = 0;
    syn_samples(task, SYN_STREAM_HELDOUT, begin + done, n, x, y);
    totals[0] += mlp_forward(m, x, y, n, &correct);
    totals[1] += (double)correct;
  }
  dt_status s = sum_over_ranks(comm, totals, 2);
  *loss = totals[0] / HELDOUT_SAMPLES;
  *accuracy = totals[1] / HELDOUT_SAMPLES;
  return s;
}

/* 1 when every rank's parameters hash alike. */
static dt_status replicas_agree(dt_comm *comm, const mlp *m, int *agree) {
  uint64_t h = mlp_param_hash(m);
  /* Two 32-bit halves and their negatives, all exact in a double: one MAX
     allreduce gives every half's maximum and minimum. */
  double v[4] = {(double)(h >> 32), (double)(h & 0xffffffffu), -(double)(h >> 32), -(double)(h & 0xffffffffu)};
  int64_t shape;
  DLTensor t = f64_vector(v, &shape, 4);
  dt_status s = dt_allreduce(comm, &t, &t, DT_MAX, NULL, NULL);
  *agree = v[0] == -v[2] && v[1] == -v[3];
  return s;
}

int main(int argc, char **argv) {
  options o;
  if (parse_options(argc, argv, &o) != 0) return 2;
  mlp_blas_single_thread();

  dt_comm *comm = NULL;
  dt_status s = dt_comm_create(&comm, NULL);
  if (s != DT_OK) fail(NULL, -1, "dt_comm_create", s);
  int rank = 0, world = 1;
  dt_comm_rank(comm, &rank);
  dt_comm_size(comm, &world);
  if (o.batch < world) {
    if (rank == 0) fprintf(stderr, "train_mlp: --batch %d is smaller than the world (%d ranks)\n", o.batch, world);
    dt_comm_destroy(comm);
    return 2;
  }

  syn_task task;
  mlp model;
  int shard_max = (o.batch + world - 1) / world;
  if (syn_task_init(&task, o.seed, INPUTS, CLASSES) != 0 ||
      mlp_create(&model, INPUTS, o.hidden, o.layers, CLASSES, shard_max) != 0) {
    fprintf(stderr, "rank %d: out of memory\n", rank);
    dt_comm_abort(comm);
    return 1;
  }
  float *x = malloc(sizeof(float) * (size_t)shard_max * INPUTS);
  int32_t *y = malloc(sizeof(int32_t) * (size_t)shard_max);

  size_t n = mlp_tensor_count(&model);
  DLTensor params[2 * MLP_MAX_LINEAR], grads[2 * MLP_MAX_LINEAR];
  DLTensor *param_ptrs[2 * MLP_MAX_LINEAR];
  const DLTensor *grad_ptrs[2 * MLP_MAX_LINEAR];
  mlp_tensors(&model, params, grads);
  for (size_t i = 0; i < n; ++i) {
    param_ptrs[i] = &params[i];
    grad_ptrs[i] = &grads[i];
  }

  /* Each rank initialises its replica from its own stream, as independent
     processes would; the broadcast makes rank 0's weights everyone's start,
     so the run is the same for any number of ranks. */
  mlp_init_params(&model, syn_key(o.seed, SYN_STREAM_INIT + (uint64_t)rank));
  s = dt_ddp_broadcast_parameters(comm, param_ptrs, n, 0);
  if (s != DT_OK) fail(comm, rank, "dt_ddp_broadcast_parameters", s);

  dt_optimizer_options opt_opts = DT_OPTIMIZER_OPTIONS_INIT;
  opt_opts.kind = DT_OPTIM_ADAMW;
  opt_opts.lr = o.lr;
  dt_ddp *ddp = NULL;
  dt_optimizer *opt = NULL;
  dt_zero *zero = NULL;
  zero_hooks hooks = {comm, NULL, rank, 0.0};
  char strategy[96];
  if (o.zero_stage < 0) {
    /* Weighted averaging: when the batch does not split evenly, each rank's
       mean gradient counts by its number of samples. */
    dt_ddp_options ddp_opts = DT_DDP_OPTIONS_INIT;
    ddp_opts.bucket_bytes = (int64_t)o.bucket_kib * 1024;
    ddp_opts.weighted = 1;
    s = dt_ddp_create(&ddp, comm, grad_ptrs, n, &ddp_opts);
    if (s != DT_OK) fail(comm, rank, "dt_ddp_create", s);
    size_t buckets = 0;
    dt_ddp_bucket_count(ddp, &buckets);
    s = dt_optimizer_create(&opt, params, grads, n, &opt_opts);
    if (s != DT_OK) fail(comm, rank, "dt_optimizer_create", s);
    snprintf(strategy, sizeof strategy, "DDP, %zu buckets of <= %d KiB", buckets, o.bucket_kib);
  } else {
    /* One unit per layer (its weight and bias). ZeRO averages the ranks'
       gradients uniformly, so each rank divides its summed loss by the mean
       shard size rather than its own: the average is then the mean over
       every sample even when the batch does not split evenly. */
    size_t unit_sizes[MLP_MAX_LINEAR];
    for (int l = 0; l < model.linear; ++l) unit_sizes[l] = 2;
    dt_zero_options zero_opts = DT_ZERO_OPTIONS_INIT;
    zero_opts.stage = o.zero_stage;
    zero_opts.unit_sizes = unit_sizes;
    zero_opts.unit_count = (size_t)model.linear;
    s = dt_zero_create(&zero, comm, (const DLTensor *const *)param_ptrs, n, &opt_opts, &zero_opts);
    if (s != DT_OK) fail(comm, rank, "dt_zero_create", s);
    hooks.zero = zero;
    model.hooks.enter = zero_enter;
    model.hooks.leave = zero_leave;
    model.hooks.user = &hooks;
    model.loss_divisor = (float)o.batch / (float)world;
    snprintf(strategy, sizeof strategy, "ZeRO stage %d, %d units", o.zero_stage, model.linear);
  }

  if (rank == 0) {
    printf("train_mlp: %d rank%s; MLP %d", world, world == 1 ? "" : "s", INPUTS);
    for (int l = 1; l <= model.linear; ++l) printf(" -> %d", model.dims[l]);
    printf(" (%lld parameters); global batch %d; AdamW lr %g; %s; seed %llu\n", (long long)model.param_elems,
           o.batch, (double)o.lr, strategy, o.seed);
  }

  int64_t begin, count;
  syn_shard(o.batch, rank, world, &begin, &count);
  ready_context ready = {ddp, zero, 0.0, DT_OK};
  double first_loss = 0.0, recent[FINAL_WINDOW];
  double comm_total = 0.0, comm_interval = 0.0, loss_interval = 0.0;
  double start = now_s(), interval_start = start;
  int interval_steps = 0;

  for (int step = 1; step <= o.steps; ++step) {
    syn_samples(&task, SYN_STREAM_TRAIN, (int64_t)(step - 1) * o.batch + begin, (int)count, x, y);
    if (ddp != NULL) {
      s = dt_ddp_set_local_weight(ddp, (double)count);
      if (s != DT_OK) fail(comm, rank, "dt_ddp_set_local_weight", s);
    }

    int64_t correct = 0;
    double stats[3];
    ready.seconds = 0.0;
    hooks.seconds = 0.0;
    stats[0] = mlp_forward(&model, x, y, (int)count, &correct);
    if (mlp_backward(&model, mark_ready, &ready) != 0) fail(comm, rank, "marking a gradient ready", ready.status);

    double t0 = now_s();
    s = ddp != NULL ? dt_ddp_wait(ddp, -1) : dt_zero_wait(zero, -1);
    double waited = now_s() - t0;
    if (s != DT_OK) fail(comm, rank, ddp != NULL ? "dt_ddp_wait" : "dt_zero_wait", s);
    t0 = now_s();
    s = ddp != NULL ? dt_optimizer_step(opt, NULL) : dt_zero_step(zero, NULL);
    /* ZeRO's step communicates too: the gradient norm and, in stages 1-2,
       the allgather of the updated shards. */
    if (zero != NULL) waited += now_s() - t0;
    if (s != DT_OK) fail(comm, rank, ddp != NULL ? "dt_optimizer_step" : "dt_zero_step", s);

    /* The loss averaged over every sample of the global batch. */
    stats[1] = (double)correct;
    stats[2] = (double)count;
    t0 = now_s();
    s = sum_over_ranks(comm, stats, 3);
    double reduced = now_s() - t0;
    if (s != DT_OK) fail(comm, rank, "dt_allreduce (loss)", s);
    double loss = stats[0] / stats[2];

    double communicating = ready.seconds + hooks.seconds + waited + reduced;
    comm_total += communicating;
    comm_interval += communicating;
    loss_interval += loss;
    ++interval_steps;
    if (step == 1) first_loss = loss;
    recent[(step - 1) % FINAL_WINDOW] = loss;

    if (step == 1 || step % o.log_every == 0 || step == o.steps) {
      double held = 0.0, peak = 0.0;
      if (zero != NULL) zero_bytes(comm, rank, zero, &held, &peak);
      if (rank == 0) {
        double elapsed = now_s() - interval_start;
        printf("step %5d/%d  loss %.4f  accuracy %5.1f%%  samples/s %8.0f  comm %6.2f ms/step (%4.1f%%)", step,
               o.steps, loss_interval / interval_steps, 100.0 * stats[1] / stats[2],
               (double)o.batch * interval_steps / elapsed, 1e3 * comm_interval / interval_steps,
               100.0 * comm_interval / elapsed);
        if (zero != NULL) printf("  rank 0 holds %.2f MiB (peak %.2f)", held / 1048576.0, peak / 1048576.0);
        printf("\n");
        fflush(stdout);
      }
    }
    if (step == 1 || step % o.log_every == 0) {
      interval_start = now_s();
      interval_steps = 0;
      comm_interval = loss_interval = 0.0;
    }
  }
  double elapsed = now_s() - start;

  int window = o.steps < FINAL_WINDOW ? o.steps : FINAL_WINDOW;
  double final_loss = 0.0;
  for (int i = 0; i < window; ++i) final_loss += recent[i];
  final_loss /= window;

  double heldout_loss = 0.0, accuracy = 0.0;
  s = evaluate(comm, &model, &task, rank, world, x, y, &heldout_loss, &accuracy);
  if (s != DT_OK) fail(comm, rank, "dt_allreduce (evaluation)", s);
  /* Replicas exist only with DDP; a dt_zero keeps one copy, sharded. */
  int agree = 1;
  if (ddp != NULL) {
    s = replicas_agree(comm, &model, &agree);
    if (s != DT_OK) fail(comm, rank, "dt_allreduce (replica check)", s);
  }
  /* Every rank's bytes held now and at peak, in rank order. */
  double memory[2 * 64] = {0.0};
  int shown = world < 64 ? world : 64;
  if (zero != NULL) {
    if (rank < shown) zero_bytes(comm, rank, zero, &memory[2 * rank], &memory[2 * rank + 1]);
    s = sum_over_ranks(comm, memory, 2 * shown);
    if (s != DT_OK) fail(comm, rank, "dt_allreduce (memory)", s);
  }

  int fell = final_loss < 0.5 * first_loss;
  if (rank == 0) {
    printf("summary: %d steps x %d samples on %d rank%s in %.2f s (%.0f samples/s)\n", o.steps, o.batch, world,
           world == 1 ? "" : "s", elapsed, (double)o.steps * o.batch / elapsed);
    printf("summary: loss %.4f at step 1 -> %.4f (mean of the last %d steps), %.2f of the first\n", first_loss,
           final_loss, window, final_loss / first_loss);
    printf("summary: held-out %d samples: loss %.4f, accuracy %.1f%%\n", HELDOUT_SAMPLES, heldout_loss,
           100.0 * accuracy);
    printf("summary: communicating %.1f ms in all, %.2f ms/step, %.1f%% of the time\n", 1e3 * comm_total,
           1e3 * comm_total / o.steps, 100.0 * comm_total / elapsed);
    if (ddp != NULL) printf("summary: replicas %s\n", agree ? "identical" : "DIFFER");
    for (int r = 0; r < shown && zero != NULL; ++r) {
      printf("summary: rank %d holds %.2f MiB (peak %.2f MiB) for %lld parameters, ZeRO stage %d\n", r,
             memory[2 * r] / 1048576.0, memory[2 * r + 1] / 1048576.0, (long long)model.param_elems, o.zero_stage);
    }
    printf("%s\n", fell && agree ? "train_mlp: OK, the loss fell below half of the first step's"
                   : !fell       ? "train_mlp: FAILED, the loss did not fall below half of the first step's"
                                 : "train_mlp: FAILED, the replicas' parameters differ");
  }

  dt_optimizer_destroy(opt);
  dt_ddp_destroy(ddp);
  dt_zero_destroy(zero);
  dt_comm_destroy(comm);
  free(x);
  free(y);
  mlp_destroy(&model);
  syn_task_free(&task);
  return fell && agree ? 0 : 1;
}
