#include "mlp.hpp"

#include <cmath>
#include <cstddef>

namespace dtrain::testing {

namespace {

std::vector<float> values(std::size_t n, int seed, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 1.3f * seed + 0.1f);
  return v;
}

}  // namespace

Layer make_layer(int index) {
  Layer layer;
  layer.weight = values(kHidden * kHidden, 100 + index, 0.6f);
  layer.bias = values(kHidden, 200 + index, 0.1f);
  layer.weight_grad.assign(kHidden * kHidden, 0.0f);
  layer.bias_grad.assign(kHidden, 0.0f);
  return layer;
}

std::vector<float> make_rows(int rows, int seed) { return values(static_cast<std::size_t>(rows) * kHidden, seed, 1.0f); }

std::vector<float> layer_forward(const Layer& layer, const float* x, int rows) {
  std::vector<float> h(static_cast<std::size_t>(rows) * kHidden);
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < kHidden; ++o) {
      float a = layer.bias[o];
      for (int i = 0; i < kHidden; ++i) a += x[r * kHidden + i] * layer.weight[i * kHidden + o];
      h[r * kHidden + o] = std::tanh(a);
    }
  }
  return h;
}

std::vector<float> activation_grad(const float* h, const float* dh, int rows) {
  std::vector<float> da(static_cast<std::size_t>(rows) * kHidden);
  for (std::size_t k = 0; k < da.size(); ++k) da[k] = dh[k] * (1.0f - h[k] * h[k]);
  return da;
}

std::vector<float> layer_input_grad(const Layer& layer, const std::vector<float>& da, int rows) {
  std::vector<float> dx(static_cast<std::size_t>(rows) * kHidden, 0.0f);
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < kHidden; ++i) {
      float sum = 0;
      for (int o = 0; o < kHidden; ++o) sum += da[r * kHidden + o] * layer.weight[i * kHidden + o];
      dx[r * kHidden + i] = sum;
    }
  }
  return dx;
}

void accumulate_weight_grad(Layer& layer, const float* x, const std::vector<float>& da, int rows) {
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < kHidden; ++o) {
      for (int i = 0; i < kHidden; ++i) layer.weight_grad[i * kHidden + o] += x[r * kHidden + i] * da[r * kHidden + o];
      layer.bias_grad[o] += da[r * kHidden + o];
    }
  }
}

float loss(const float* h, const float* target, int rows, int batch_rows) {
  float sum = 0;
  for (int k = 0; k < rows * kHidden; ++k) sum += (h[k] - target[k]) * (h[k] - target[k]);
  return sum / (2.0f * static_cast<float>(batch_rows));
}

std::vector<float> loss_grad(const float* h, const float* target, int rows, int batch_rows) {
  std::vector<float> dh(static_cast<std::size_t>(rows) * kHidden);
  for (std::size_t k = 0; k < dh.size(); ++k) dh[k] = (h[k] - target[k]) / static_cast<float>(batch_rows);
  return dh;
}

float reference_step(std::vector<Layer>& layers, const std::vector<float>& input, const std::vector<float>& target,
                     int rows) {
  std::vector<std::vector<float>> activations{input};
  for (const Layer& layer : layers) activations.push_back(layer_forward(layer, activations.back().data(), rows));
  const float result = loss(activations.back().data(), target.data(), rows, rows);
  std::vector<float> dh = loss_grad(activations.back().data(), target.data(), rows, rows);
  for (std::size_t l = layers.size(); l-- > 0;) {
    const std::vector<float> da = activation_grad(activations[l + 1].data(), dh.data(), rows);
    accumulate_weight_grad(layers[l], activations[l].data(), da, rows);
    dh = layer_input_grad(layers[l], da, rows);
  }
  return result;
}

}  // namespace dtrain::testing
