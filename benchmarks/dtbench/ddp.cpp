// dtbench ddp: what data parallelism costs a training step of the example
// model (examples/c/mlp), and how much of the gradient allreduce backward
// hides. Three ways of running the same step, interleaved round by round so
// that a noisy machine treats them alike:
//   compute  DDP's sync off: forward, backward and AdamW, no communication
//   serial   every gradient marked only after backward: the allreduce is
//            fully exposed, so the wait is its whole time
//   overlap  each gradient marked as backward makes it final (as train_mlp
//            does): the wait is what backward did not hide
// hidden share = 1 - wait(overlap) / wait(serial). The waits leave out what
// communication costs elsewhere in the step: posting in mark_ready, and
// backward slowed by progress taken from its core. So the share is also
// given by step time: 1 - (overlap - compute) / (serial - compute), the part
// of the serial step's communication cost that overlapping removes.
#include "ddp.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "comm.hpp"
#include "mlp/mlp.h"
#include "mlp/synthetic.h"

namespace dtbench {

namespace {

const char kUsage[] =
    "usage: dtrun -n N dtbench ddp [options]\n"
    "\n"
    "Times training steps of the example MLP (examples/c/mlp) with libdtrain's DDP\n"
    "three ways: without communication, with the allreduce after backward, and with\n"
    "buckets overlapping backward; prints step times, the time waiting for the\n"
    "allreduce, and the share of it hidden behind backward. Rank 0 prints.\n"
    "\n"
    "options:\n"
    "  --steps N        timed steps per mode and round (default 30)\n"
    "  --rounds N       rounds; each runs every mode once (default 5)\n"
    "  --warmup N       untimed steps per mode first (default 10)\n"
    "  --batch N        global batch (default 256)\n"
    "  --hidden N       hidden width (default 256)\n"
    "  --layers N       hidden layers (default 2)\n"
    "  --bucket-kib N   DDP bucket size in KiB (default 8)\n"
    "  --json PATH      also write the results as JSON\n"
    "  -h, --help       show this help\n";

constexpr int kInputs = 64;
constexpr int kClasses = 10;

struct Args {
  int steps = 30, rounds = 5, warmup = 10, batch = 256, hidden = 256, layers = 2, bucket_kib = 8;
  std::string json;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "dtbench ddp: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    if (arg == "--json") {
      a.json = argv[i + 1];
      continue;
    }
    int* target = arg == "--steps"        ? &a.steps
                  : arg == "--rounds"     ? &a.rounds
                  : arg == "--warmup"     ? &a.warmup
                  : arg == "--batch"      ? &a.batch
                  : arg == "--hidden"     ? &a.hidden
                  : arg == "--layers"     ? &a.layers
                  : arg == "--bucket-kib" ? &a.bucket_kib
                                          : nullptr;
    if (target == nullptr) usage_error("unknown argument '" + arg + "'");
    char* end = nullptr;
    long v = std::strtol(argv[i + 1], &end, 10);
    long lowest = target == &a.warmup || target == &a.layers ? 0 : 1;
    if (*argv[i + 1] == '\0' || *end != '\0' || v < lowest || v > (1L << 24)) usage_error(arg + ": bad value");
    *target = static_cast<int>(v);
  }
  if (a.layers + 1 > MLP_MAX_LINEAR) usage_error("--layers: at most " + std::to_string(MLP_MAX_LINEAR - 1));
  return a;
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

enum Mode { kCompute, kSerial, kOverlap, kModes };
const char* const kModeNames[kModes] = {"compute", "serial", "overlap"};

// One timed step on one rank.
struct Sample {
  double step = 0;     // forward to the end of the optimizer step
  double wait = 0;     // in dt_ddp_wait
  double mark = 0;     // in dt_ddp_mark_ready
  double reduced = 0;  // buckets already reduced when backward (and its marks) ended
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// The example model under DDP and AdamW, one rank's replica.
class Trainer {
 public:
  Trainer(Comm& comm, const Args& a) : comm_(comm), batch_(a.batch) {
    syn_shard(a.batch, comm.rank(), comm.size(), &begin_, &count_);
    int shard_max = (a.batch + comm.size() - 1) / comm.size();
    if (syn_task_init(&task_, 1, kInputs, kClasses) != 0 ||
        mlp_create(&model_, kInputs, a.hidden, a.layers, kClasses, shard_max) != 0) {
      std::fprintf(stderr, "dtbench ddp: rank %d: out of memory\n", comm.rank());
      comm.exit(1);
    }
    x_.resize(static_cast<size_t>(shard_max) * kInputs);
    y_.resize(static_cast<size_t>(shard_max));
    size_t n = mlp_tensor_count(&model_);
    params_.resize(n);
    grads_.resize(n);
    mlp_tensors(&model_, params_.data(), grads_.data());
    std::vector<DLTensor*> param_ptrs;
    std::vector<const DLTensor*> grad_ptrs;
    for (size_t i = 0; i < n; ++i) {
      param_ptrs.push_back(&params_[i]);
      grad_ptrs.push_back(&grads_[i]);
    }
    mlp_init_params(&model_, syn_key(1, SYN_STREAM_INIT));
    comm.check("dt_ddp_broadcast_parameters", dt_ddp_broadcast_parameters(comm.handle(), param_ptrs.data(), n, 0));
    dt_ddp_options o = DT_DDP_OPTIONS_INIT;
    o.bucket_bytes = static_cast<int64_t>(a.bucket_kib) * 1024;
    o.weighted = 1;
    comm.check("dt_ddp_create", dt_ddp_create(&ddp_, comm.handle(), grad_ptrs.data(), n, &o));
    comm.check("dt_ddp_bucket_count", dt_ddp_bucket_count(ddp_, &buckets_));
    dt_optimizer_options oo = DT_OPTIMIZER_OPTIONS_INIT;
    oo.lr = 2e-3f;
    comm.check("dt_optimizer_create", dt_optimizer_create(&opt_, params_.data(), grads_.data(), n, &oo));
  }

  ~Trainer() {
    dt_optimizer_destroy(opt_);
    dt_ddp_destroy(ddp_);
    mlp_destroy(&model_);
    syn_task_free(&task_);
  }

  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  const mlp& model() const { return model_; }
  size_t buckets() const { return buckets_; }

  Sample step(Mode mode) {
    // Data are made outside the timed part: the benchmark is about the step.
    syn_samples(&task_, SYN_STREAM_TRAIN, step_++ * batch_ + begin_, static_cast<int>(count_), x_.data(), y_.data());
    bool sync = mode != kCompute;
    if (sync != sync_) {
      comm_.check("dt_ddp_set_sync", dt_ddp_set_sync(ddp_, sync ? 1 : 0));
      sync_ = sync;
    }
    comm_.check("dt_ddp_set_local_weight", dt_ddp_set_local_weight(ddp_, static_cast<double>(count_)));

    Sample s;
    marking_ = 0;
    double t0 = now_s();
    int64_t correct = 0;
    mlp_forward(&model_, x_.data(), y_.data(), static_cast<int>(count_), &correct);
    if (mlp_backward(&model_, mode == kOverlap ? &mark : &ignore, this) != 0)
      comm_.check("dt_ddp_mark_ready", status_);
    if (mode == kSerial) {
      // In the order backward would have produced them.
      for (size_t i = mlp_tensor_count(&model_); i-- > 0;)
        if (mark(this, i) != 0) comm_.check("dt_ddp_mark_ready", status_);
    }
    if (mode != kCompute) {
      for (size_t b = 0; b < buckets_; ++b) {
        dt_bucket_state state = DT_BUCKET_WAITING;
        dt_ddp_bucket_state(ddp_, b, &state);
        s.reduced += state == DT_BUCKET_REDUCED ? 1 : 0;
      }
    }
    double tw = now_s();
    comm_.check("dt_ddp_wait", dt_ddp_wait(ddp_, -1));
    s.wait = now_s() - tw;
    comm_.check("dt_optimizer_step", dt_optimizer_step(opt_, nullptr));
    s.step = now_s() - t0;
    s.mark = marking_;
    return s;
  }

 private:
  static int ignore(void*, size_t) { return 0; }

  static int mark(void* user, size_t index) {
    auto* self = static_cast<Trainer*>(user);
    double t0 = now_s();
    self->status_ = dt_ddp_mark_ready(self->ddp_, index);
    self->marking_ += now_s() - t0;
    return self->status_ != DT_OK;
  }

  Comm& comm_;
  int64_t batch_;
  int64_t begin_ = 0, count_ = 0, step_ = 0;
  syn_task task_{};
  mlp model_{};
  std::vector<float> x_;
  std::vector<int32_t> y_;
  std::vector<DLTensor> params_, grads_;
  dt_ddp* ddp_ = nullptr;
  dt_optimizer* opt_ = nullptr;
  size_t buckets_ = 0;
  bool sync_ = true;
  double marking_ = 0;
  dt_status status_ = DT_OK;
};

// One mode's figures: medians (and means) over this rank's steps, in
// milliseconds, then averaged over ranks.
struct Figures {
  double step = 0, step_mean = 0, wait = 0, wait_mean = 0, mark = 0, reduced = 0;
};

Figures summarise(Comm& comm, const std::vector<Sample>& samples) {
  std::vector<double> step, wait, mark, reduced;
  for (const Sample& s : samples) {
    step.push_back(s.step * 1e3);
    wait.push_back(s.wait * 1e3);
    mark.push_back(s.mark * 1e3);
    reduced.push_back(s.reduced);
  }
  double v[6] = {median(step), mean(step), median(wait), mean(wait), mean(mark), mean(reduced)};
  comm.sum(v, 6);
  for (double& x : v) x /= comm.size();
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

double hidden_share(double exposed, double whole) { return whole > 0 ? 1.0 - exposed / whole : 0.0; }

// The same by step time: what communication adds to a step, overlapped
// against serial.
double hidden_share_by_step(const Figures* f) {
  return hidden_share(f[kOverlap].step - f[kCompute].step, f[kSerial].step - f[kCompute].step);
}

void write_json(const std::string& path, const Args& a, const Trainer& t, int world, const Figures* f) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "dtbench ddp: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  const mlp& m = t.model();
  std::fprintf(out, "{\n  \"benchmark\": \"ddp\",\n  \"implementation\": \"dtrain\",\n  \"library\": \"%s\",\n",
               dt_build_info());
  std::fprintf(out, "  \"world_size\": %d,\n  \"model\": {\"dims\": [", world);
  for (int l = 0; l <= m.linear; ++l) std::fprintf(out, "%s%d", l ? ", " : "", m.dims[l]);
  std::fprintf(out, "], \"parameters\": %lld, \"gradient_bytes\": %lld},\n", static_cast<long long>(m.param_elems),
               static_cast<long long>(m.param_elems * 4));
  std::fprintf(out, "  \"batch\": %d,\n  \"bucket_bytes\": %d,\n  \"buckets\": %zu,\n", a.batch, a.bucket_kib * 1024,
               t.buckets());
  std::fprintf(out, "  \"steps\": %d,\n  \"rounds\": %d,\n  \"modes\": {\n", a.steps, a.rounds);
  for (int k = 0; k < kModes; ++k) {
    std::fprintf(out,
                 "    \"%s\": {\"step_ms\": %.6g, \"step_ms_mean\": %.6g, \"wait_ms\": %.6g, \"wait_ms_mean\": %.6g, "
                 "\"mark_ms\": %.6g, \"buckets_reduced_before_wait\": %.4g}%s\n",
                 kModeNames[k], f[k].step, f[k].step_mean, f[k].wait, f[k].wait_mean, f[k].mark, f[k].reduced,
                 k + 1 < kModes ? "," : "");
  }
  std::fprintf(out, "  },\n  \"allreduce_ms\": %.6g,\n  \"exposed_wait_ms\": %.6g,\n", f[kSerial].wait,
               f[kOverlap].wait);
  std::fprintf(out, "  \"hidden_share\": %.4f,\n  \"hidden_share_mean\": %.4f,\n  \"hidden_share_by_step\": %.4f\n}\n",
               hidden_share(f[kOverlap].wait, f[kSerial].wait),
               hidden_share(f[kOverlap].wait_mean, f[kSerial].wait_mean), hidden_share_by_step(f));
  std::fclose(out);
  std::printf("# results written to %s\n", path.c_str());
}

}  // namespace

int run_ddp(int argc, char** argv) {
  Args a = parse(argc, argv);
  mlp_blas_single_thread();
  Comm comm;
  if (a.batch < comm.size()) usage_error("--batch is smaller than the number of ranks");
  Figures figures[kModes];
  {
    Trainer trainer(comm, a);
    const mlp& m = trainer.model();
    if (comm.rank() == 0) {
      std::printf("# dtbench ddp: %d rank%s; MLP %d", comm.size(), comm.size() == 1 ? "" : "s", m.dims[0]);
      for (int l = 1; l <= m.linear; ++l) std::printf(" -> %d", m.dims[l]);
      std::printf(" (%lld parameters, %lld B of gradients); global batch %d; %zu buckets of <= %d KiB\n",
                  static_cast<long long>(m.param_elems), static_cast<long long>(m.param_elems * 4), a.batch,
                  trainer.buckets(), a.bucket_kib);
      std::printf("# %d rounds x %d steps per mode after %d warmup steps; %s\n", a.rounds, a.steps, a.warmup,
                  dt_build_info());
      std::fflush(stdout);
    }
    for (int k = 0; k < kModes; ++k)
      for (int i = 0; i < a.warmup; ++i) trainer.step(static_cast<Mode>(k));
    std::vector<Sample> samples[kModes];
    // Ranks start every timed step together, so that a wait measures the
    // allreduce rather than how far apart the ranks drifted before it.
    for (int r = 0; r < a.rounds; ++r)
      for (int k = 0; k < kModes; ++k)
        for (int i = 0; i < a.steps; ++i) {
          comm.barrier();
          samples[k].push_back(trainer.step(static_cast<Mode>(k)));
        }
    for (int k = 0; k < kModes; ++k) figures[k] = summarise(comm, samples[k]);

    if (comm.rank() == 0) {
      std::printf("%-8s %12s %12s %12s %12s %10s\n", "mode", "step ms", "step mean", "wait ms", "mark ms",
                  "reduced");
      for (int k = 0; k < kModes; ++k) {
        const Figures& f = figures[k];
        std::printf("%-8s %12.3f %12.3f %12.3f %12.3f %6.2f/%zu\n", kModeNames[k], f.step, f.step_mean, f.wait,
                    f.mark, f.reduced, trainer.buckets());
      }
      const Figures &c = figures[kCompute], &s = figures[kSerial], &o = figures[kOverlap];
      std::printf("allreduce time (serial wait)     %8.3f ms\n", s.wait);
      std::printf("exposed wait (overlap)           %8.3f ms\n", o.wait);
      std::printf("hidden behind backward (wait)    %8.1f %%  1 - exposed wait / allreduce time\n",
                  100.0 * hidden_share(o.wait, s.wait));
      std::printf("hidden behind backward (step)    %8.1f %%  1 - DDP cost per step, overlap / serial\n",
                  100.0 * hidden_share_by_step(figures));
      std::printf("DDP cost per step: overlap %.3f ms, serial %.3f ms (step time above compute)\n", o.step - c.step,
                  s.step - c.step);
      if (!a.json.empty()) write_json(a.json, a, trainer, comm.size(), figures);
    }
  }
  comm.exit(0);
}

}  // namespace dtbench
