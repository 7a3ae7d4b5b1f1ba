// The loss scale for mixed-precision training. The trainer multiplies its
// loss by scale() so that small f16 gradients do not flush to zero; the
// optimizer divides it out again. A dynamic scaler halves the scale (by
// backoff_factor) whenever a step finds inf or NaN gradients and grows it
// (by growth_factor) after growth_interval clean steps in a row, as
// torch.cuda.amp.GradScaler does. A static one keeps its scale.
#pragma once

namespace dtrain::optim {

struct LossScalerSettings {
  float initial_scale = 1.0f;
  bool dynamic = false;
  float growth_factor = 2.0f;
  float backoff_factor = 0.5f;
  int growth_interval = 2000;
};

// What a scaler has learnt: saved in checkpoints and restored from them.
struct LossScalerState {
  float scale = 1.0f;
  int clean_steps = 0;  // clean steps since the scale last changed
};

class LossScaler {
 public:
  explicit LossScaler(const LossScalerSettings& settings);

  float scale() const { return scale_; }
  LossScalerState state() const { return {scale_, clean_steps_}; }
  // Throws DT_ERR_INVALID_ARGUMENT for a scale that is not finite and > 0 or
  // a negative count.
  void restore(const LossScalerState& state);

  // Records a step's outcome: `found_inf` when its gradients held inf or NaN.
  void update(bool found_inf);

 private:
  LossScalerSettings settings_;
  float scale_;
  int clean_steps_ = 0;
};

}  // namespace dtrain::optim
