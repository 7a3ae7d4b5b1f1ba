#include "trainer.hpp"

#include <cstring>

#include "device/cpu/half.hpp"

namespace dtrain::test {

namespace {

float load(const TensorView& view, std::int64_t k) {
  switch (view.dtype) {
    case DType::f16:
      return device::cpu::half_to_float(static_cast<const std::uint16_t*>(view.data)[k]);
    case DType::bf16:
      return device::cpu::bf16_to_float(static_cast<const std::uint16_t*>(view.data)[k]);
    default:
      return static_cast<const float*>(view.data)[k];
  }
}

void store(const TensorView& view, std::int64_t k, float value) {
  switch (view.dtype) {
    case DType::f16:
      static_cast<std::uint16_t*>(view.data)[k] = device::cpu::float_to_half(value);
      return;
    case DType::bf16:
      static_cast<std::uint16_t*>(view.data)[k] = device::cpu::float_to_bf16(value);
      return;
    default:
      static_cast<float*>(view.data)[k] = value;
      return;
  }
}

std::vector<float> to_floats(const TensorView& view) {
  std::vector<float> values(static_cast<std::size_t>(view.count));
  for (std::int64_t k = 0; k < view.count; ++k) values[static_cast<std::size_t>(k)] = load(view, k);
  return values;
}

}  // namespace

ParameterTensors::ParameterTensors(const Mlp& model, DType dtype) : shapes_(Mlp::shapes()) {
  for (std::size_t t = 0; t < model.params.size(); ++t) {
    DLTensor tensor{};
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int>(shapes_[t].size());
    tensor.shape = shapes_[t].data();
    tensor.dtype = dtype_to_dlpack(dtype);
    if (dtype == DType::f32) {
      single_.push_back(model.params[t]);
      tensor.data = single_.back().data();
    } else {
      std::vector<std::uint16_t> values(model.params[t].size());
      TensorView view{values.data(), static_cast<std::int64_t>(values.size()), dtype};
      for (std::size_t k = 0; k < values.size(); ++k) store(view, static_cast<std::int64_t>(k), model.params[t][k]);
      half_.push_back(std::move(values));
      tensor.data = half_.back().data();
    }
    tensors_.push_back(tensor);
  }
}

std::vector<const DLTensor*> ParameterTensors::pointers() {
  std::vector<const DLTensor*> result;
  for (const DLTensor& tensor : tensors_) result.push_back(&tensor);
  return result;
}

void micro_step(parallel::zero::Zero& zero, Mlp& model, const Batch& batch, float scale) {
  const parallel::zero::Layout& layout = zero.layout();
  for (std::size_t u = 0; u < zero.unit_count(); ++u) {
    zero.gather(u);
    zero.gather_wait(u, -1);
    const parallel::zero::Unit& unit = layout.unit(u);
    for (std::size_t i = unit.first_param; i < unit.first_param + unit.params; ++i) {
      model.params[i] = to_floats(zero.parameter(i));
    }
    zero.release(u);
  }
  model.zero_grad();
  model.accumulate(batch, scale, [&](std::size_t i) {
    const std::size_t u = layout.place(i).unit;
    const parallel::zero::Unit& unit = layout.unit(u);
    if (i + 1 == unit.first_param + unit.params) {  // the unit's first gradient in backward
      zero.gather(u);
      zero.gather_wait(u, -1);
    }
    const TensorView gradient = zero.gradient(i);
    for (std::int64_t k = 0; k < gradient.count; ++k) {
      store(gradient, k, load(gradient, k) + model.grads[i][static_cast<std::size_t>(k)]);
    }
    zero.mark_ready(i);
    if (i == unit.first_param) zero.release(u);
  });
  zero.wait(-1);
}

std::vector<std::vector<float>> read_parameters(parallel::zero::Zero& zero) {
  std::vector<std::vector<float>> params(zero.parameter_count());
  for (std::size_t u = 0; u < zero.unit_count(); ++u) {
    zero.gather_wait(u, -1);
    const parallel::zero::Unit& unit = zero.layout().unit(u);
    for (std::size_t i = unit.first_param; i < unit.first_param + unit.params; ++i) {
      params[i] = to_floats(zero.parameter(i));
    }
    zero.release(u);
  }
  return params;
}

}  // namespace dtrain::test
