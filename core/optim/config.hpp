// dt_optimizer_options read into a checked configuration.
#pragma once

#include "dtrain/optim.h"
#include "optim/hyperparameters.hpp"
#include "optim/loss_scaler.hpp"

namespace dtrain::optim {

enum class Kind { sgd = DT_OPTIM_SGD, adamw = DT_OPTIM_ADAMW };

struct Config {
  Kind kind = Kind::adamw;
  SgdHyperparameters sgd;
  AdamwHyperparameters adamw;
  float max_grad_norm = 0.0f;  // <= 0: no clipping
  LossScalerSettings loss_scale;
};

// The defaults behind DT_OPTIMIZER_OPTIONS_INIT.
dt_optimizer_options default_optimizer_options();

// Fills `opts` with the defaults of `version` (only that version's fields).
void init_optimizer_options(dt_optimizer_options* opts, unsigned version);

// `opts` may be any released version, or NULL for the defaults. Throws
// DT_ERR_INVALID_ARGUMENT naming the first bad field. `comm` is not read here.
Config read_config(const dt_optimizer_options* opts);

// Throws DT_ERR_INVALID_ARGUMENT unless `lr` is finite and >= 0.
void check_lr(float lr, const char* name);

}  // namespace dtrain::optim
