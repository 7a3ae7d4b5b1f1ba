// A small MLP for the executor's equivalence tests: `layers` layers of
// h = tanh(x W + b), hidden width kHidden, f32, and the loss
// sum((h - target)^2) / (2 * batch_rows). The same layer functions serve the
// single-process reference and the pipeline stages, so any difference comes
// from how the pipeline moves data, not from the math.
#pragma once

#include <vector>

namespace dtrain::testing {

inline constexpr int kHidden = 8;

struct Layer {
  std::vector<float> weight;  // kHidden x kHidden, row-major: input index, output index
  std::vector<float> bias;    // kHidden
  std::vector<float> weight_grad;
  std::vector<float> bias_grad;
};

// Layer `index` of the model, with values that depend only on its index.
Layer make_layer(int index);

// `rows` x kHidden values that depend only on `seed`.
std::vector<float> make_rows(int rows, int seed);

// h = tanh(x W + b) for `rows` rows.
std::vector<float> layer_forward(const Layer& layer, const float* x, int rows);

// The pre-activation gradient da = dh (1 - h^2).
std::vector<float> activation_grad(const float* h, const float* dh, int rows);

// dx = da W^T.
std::vector<float> layer_input_grad(const Layer& layer, const std::vector<float>& da, int rows);

// Adds x^T da to the weight gradient and the column sums of da to the bias gradient.
void accumulate_weight_grad(Layer& layer, const float* x, const std::vector<float>& da, int rows);

// The loss's share of `rows` rows when the whole batch has `batch_rows`, and its gradient by h.
float loss(const float* h, const float* target, int rows, int batch_rows);
std::vector<float> loss_grad(const float* h, const float* target, int rows, int batch_rows);

// The whole model over the whole batch in one process: its loss, and the
// gradients accumulated into `layers`.
float reference_step(std::vector<Layer>& layers, const std::vector<float>& input, const std::vector<float>& target,
                     int rows);

}  // namespace dtrain::testing
