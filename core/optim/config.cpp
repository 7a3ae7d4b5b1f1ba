#include "optim/config.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "base/options.hpp"

namespace dtrain::optim {

namespace {

// Size of each released version of dt_optimizer_options; index = version.
constexpr std::size_t kOptionsSizes[] = {0, sizeof(dt_optimizer_options)};

constexpr int kDefaultGrowthInterval = 2000;

std::string text(float value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

[[noreturn]] void bad(const char* field, float value, const char* rule) {
  raise(DT_ERR_INVALID_ARGUMENT,
        std::string("options.") + field + " = " + text(value) + " " + rule);
}

// Checks lo <= value < hi (or <= hi when `closed`), all finite.
void check_range(const char* field, float value, float lo, float hi, bool closed) {
  const bool ok = std::isfinite(value) && value >= lo && (closed ? value <= hi : value < hi);
  if (!ok) {
    bad(field, value, (std::string("is not in [") + text(lo) + ", " + text(hi) + (closed ? "]" : ")")).c_str());
  }
}

bool read_flag(const char* field, int value) {
  if (value != 0 && value != 1) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string("options.") + field + " = " + std::to_string(value) +
                                       " is not 0 or 1");
  }
  return value == 1;
}

Kind read_kind(const dt_optimizer_options& opts) {
  const int kind = enum_value(opts.kind);
  switch (kind) {
    case DT_OPTIM_SGD: return Kind::sgd;
    case DT_OPTIM_ADAMW: return Kind::adamw;
    default:
      raise(DT_ERR_INVALID_ARGUMENT,
            "options.kind = " + std::to_string(kind) + " is not a dt_optimizer_kind (DT_OPTIM_SGD, DT_OPTIM_ADAMW)");
  }
}

LossScalerSettings read_loss_scale(const dt_optimizer_options& opts) {
  LossScalerSettings s;
  if (!(std::isfinite(opts.loss_scale) && opts.loss_scale >= std::numeric_limits<float>::min())) {
    bad("loss_scale", opts.loss_scale, "is not a finite number > 0");
  }
  s.initial_scale = opts.loss_scale;
  s.dynamic = read_flag("dynamic_loss_scale", opts.dynamic_loss_scale);
  if (!(std::isfinite(opts.growth_factor) && opts.growth_factor > 1.0f)) {
    bad("growth_factor", opts.growth_factor, "is not a finite number > 1");
  }
  s.growth_factor = opts.growth_factor;
  if (!(opts.backoff_factor > 0.0f && opts.backoff_factor < 1.0f)) {
    bad("backoff_factor", opts.backoff_factor, "is not in (0, 1)");
  }
  s.backoff_factor = opts.backoff_factor;
  if (opts.growth_interval == DT_UNDEF) {
    s.growth_interval = kDefaultGrowthInterval;
  } else if (opts.growth_interval <= 0) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "options.growth_interval = " + std::to_string(opts.growth_interval) + " is not positive");
  } else {
    s.growth_interval = opts.growth_interval;
  }
  return s;
}

}  // namespace

dt_optimizer_options default_optimizer_options() {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  return opts;
}

void init_optimizer_options(dt_optimizer_options* opts, unsigned version) {
  init_options(opts, version, default_optimizer_options(), kOptionsSizes, "dt_optimizer_options");
}

void check_lr(float lr, const char* name) {
  if (!(std::isfinite(lr) && lr >= 0.0f)) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " = " + text(lr) + " is not a finite number >= 0");
  }
}

Config read_config(const dt_optimizer_options* user) {
  const dt_optimizer_options opts = read_options(user, default_optimizer_options(), kOptionsSizes, "options");
  Config config;
  config.kind = read_kind(opts);
  check_lr(opts.lr, "options.lr");
  check_range("weight_decay", opts.weight_decay, 0.0f, std::numeric_limits<float>::max(), true);

  // Every field is checked, whichever kind uses it: a bad value is a
  // mistake even where it would be ignored.
  check_range("momentum", opts.momentum, 0.0f, 1.0f, false);
  check_range("dampening", opts.dampening, 0.0f, 1.0f, true);
  const bool nesterov = read_flag("nesterov", opts.nesterov);
  if (nesterov && (opts.momentum == 0.0f || opts.dampening != 0.0f)) {
    raise(DT_ERR_INVALID_ARGUMENT, "options.nesterov = 1 needs momentum > 0 and dampening = 0 (momentum = " +
                                       text(opts.momentum) + ", dampening = " + text(opts.dampening) + ")");
  }
  config.sgd = {opts.lr, opts.momentum, opts.dampening, opts.weight_decay, nesterov};

  check_range("beta1", opts.beta1, 0.0f, 1.0f, false);
  check_range("beta2", opts.beta2, 0.0f, 1.0f, false);
  if (!(std::isfinite(opts.eps) && opts.eps > 0.0f)) bad("eps", opts.eps, "is not a finite number > 0");
  config.adamw = {opts.lr, opts.beta1, opts.beta2, opts.eps, opts.weight_decay};

  if (std::isnan(opts.max_grad_norm)) bad("max_grad_norm", opts.max_grad_norm, "is NaN");
  config.max_grad_norm = opts.max_grad_norm;
  config.loss_scale = read_loss_scale(opts);
  return config;
}

}  // namespace dtrain::optim
