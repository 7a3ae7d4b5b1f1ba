// dtbench ddp: what data parallelism costs a training step of the example
// model (examples/c/mlp), and how much of the gradient allreduce backward
// hides. Three ways of running the same step, interleaved round by round so
// that a noisy machine treats them alike:
//   compute  DDP's sync off: forward, backward and AdamW, no communication
//   serial   every gradient marked only after backward: the allreduce is
//            fully exposed, so the wait is its whole time
//   overlap  each gradient marked as backward makes it final (as train_mlp
//            does): the wait is what backward did not hide
// hidden share = 1 - wait(overlap) / wait(serial). A wait also holds the
// time a rank spends waiting for a slower rank to finish backward, which no
// overlapping can hide; the share is therefore also given past the last
// rank's backward: each wait less how much later than this rank the slowest
// one ended backward (clocks compared on one host). The waits leave out what
// communication costs elsewhere in the step: posting in mark_ready, and
// backward slowed by progress taken from its core. So the share is also
// given by step time: 1 - (overlap - compute) / (serial - compute), the part
// of the serial step's communication cost that overlapping removes.
#include "ddp.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "comm.hpp"
#include "command_line.hpp"
#include "training.hpp"

namespace dtbench {

namespace {

const Usage kCli{"ddp", "usage: dtrun -n N dtbench ddp [options]",
                 "Times training steps of the example MLP (examples/c/mlp) with libdtrain's DDP\n"
                 "three ways: without communication, with the allreduce after backward, and with\n"
                 "buckets overlapping backward; prints step times, the time waiting for the\n"
                 "allreduce, and the share of it hidden behind backward. Rank 0 prints."};

struct Args : TrainingOptions {
  int bucket_kib = 8;
};

Args parse(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  add_training_options(*app, a, "mode");
  app->add_option("--bucket-kib", a.bucket_kib, "DDP bucket size in KiB (default 8)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 24));
  dtrain::command_line::parse(*app, argc, argv);
  check_training(kCli, a);
  return a;
}

enum Mode { kCompute, kSerial, kOverlap, kModes };
const char* const kModeNames[kModes] = {"compute", "serial", "overlap"};

// One timed step on one rank.
struct Sample {
  double step = 0;     // forward to the end of the optimizer step
  double wait = 0;     // in dt_ddp_wait
  double backward_end = 0;  // when backward (and its marks) ended, on the steady clock
  double past_last = 0;     // the part of the wait after the slowest rank's backward ended
  double mark = 0;     // in dt_ddp_mark_ready
  double reduced = 0;  // buckets already reduced when backward (and its marks) ended
};

// The example model under DDP and AdamW, one rank's replica.
class Trainer {
 public:
  Trainer(Comm& comm, const Args& a) : comm_(comm), replica_(comm, kCli, a), model_(replica_.model()) {
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
  }

  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  const mlp& model() const { return model_; }
  size_t buckets() const { return buckets_; }

  Sample step(Mode mode) {
    // Data are made outside the timed part: the benchmark is about the step.
    replica_.load(step_++);
    bool sync = mode != kCompute;
    if (sync != sync_) {
      comm_.check("dt_ddp_set_sync", dt_ddp_set_sync(ddp_, sync ? 1 : 0));
      sync_ = sync;
    }
    comm_.check("dt_ddp_set_local_weight", dt_ddp_set_local_weight(ddp_, static_cast<double>(replica_.count())));

    Sample s;
    marking_ = 0;
    double t0 = now_s();
    replica_.forward();
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
    s.backward_end = tw;
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
  Replica replica_;
  mlp& model_;
  int64_t step_ = 0;
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
  double step = 0, step_mean = 0, wait = 0, wait_mean = 0, mark = 0, reduced = 0, past_last = 0;
};

Figures summarise(Comm& comm, const std::vector<Sample>& samples) {
  std::vector<double> step, wait, mark, reduced, past_last;
  for (const Sample& s : samples) {
    step.push_back(s.step * 1e3);
    wait.push_back(s.wait * 1e3);
    mark.push_back(s.mark * 1e3);
    reduced.push_back(s.reduced);
    past_last.push_back(s.past_last * 1e3);
  }
  double v[7] = {median(step), mean(step),    median(wait),     mean(wait),
                 mean(mark),   mean(reduced), median(past_last)};
  comm.sum(v, 7);
  for (double& x : v) x /= comm.size();
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

// The part of `s`'s wait after the slowest rank ended backward. A
// collective outside the timed step.
void measure_past_last(Comm& comm, Sample& s) {
  const double last_end = comm.max(s.backward_end);
  s.past_last = std::max(0.0, s.wait - (last_end - s.backward_end));
}

double hidden_share(double exposed, double whole) { return whole > 0 ? 1.0 - exposed / whole : 0.0; }

// The same by step time: what communication adds to a step, overlapped
// against serial.
double hidden_share_by_step(const Figures* f) {
  return hidden_share(f[kOverlap].step - f[kCompute].step, f[kSerial].step - f[kCompute].step);
}

void write_json(const std::string& path, const Args& a, const Trainer& t, int world, const Figures* f) {
  const mlp& m = t.model();
  Json modes = Json::object();
  for (int k = 0; k < kModes; ++k) {
    modes[kModeNames[k]] = {{"step_ms", f[k].step}, {"step_ms_mean", f[k].step_mean},
                            {"wait_ms", f[k].wait}, {"wait_ms_mean", f[k].wait_mean},
                            {"mark_ms", f[k].mark}, {"buckets_reduced_before_wait", f[k].reduced}};
  }
  Json doc = training_results("ddp", world, m);
  doc["model"]["gradient_bytes"] = m.param_elems * 4;
  doc.update(Json{{"batch", a.batch},
                  {"bucket_bytes", a.bucket_kib * 1024},
                  {"buckets", t.buckets()},
                  {"steps", a.steps},
                  {"rounds", a.rounds},
                  {"modes", modes},
                  {"allreduce_ms", f[kSerial].wait},
                  {"exposed_wait_ms", f[kOverlap].wait},
                  {"allreduce_past_last_backward_ms", f[kSerial].past_last},
                  {"exposed_past_last_backward_ms", f[kOverlap].past_last},
                  {"hidden_share", hidden_share(f[kOverlap].wait, f[kSerial].wait)},
                  {"hidden_share_mean", hidden_share(f[kOverlap].wait_mean, f[kSerial].wait_mean)},
                  {"hidden_share_past_last_backward", hidden_share(f[kOverlap].past_last, f[kSerial].past_last)},
                  {"hidden_share_by_step", hidden_share_by_step(f)}});
  write_results(kCli.command, path, doc);
}

}  // namespace

int run_ddp(int argc, char** argv) {
  Args a = parse(argc, argv);
  Comm comm;
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
          Sample sample = trainer.step(static_cast<Mode>(k));
          measure_past_last(comm, sample);
          samples[k].push_back(sample);
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
      std::printf("allreduce past last backward     %8.3f ms  (serial; wait less waiting for a slower rank)\n",
                  s.past_last);
      std::printf("exposed past last backward       %8.3f ms  (overlap)\n", o.past_last);
      std::printf("hidden, past last backward       %8.1f %%  1 - exposed / allreduce, both past the last backward\n",
                  100.0 * hidden_share(o.past_last, s.past_last));
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
