// Training the test MLP (tests/ddp/mlp.hpp) through a Zero the way a
// stage 3 trainer does, whatever the stage: gather each unit for forward
// (here: copy its parameters into the model), then for backward gather
// each unit again, add each gradient into the Zero's buffer, mark it ready
// and release the unit; wait; step.
#pragma once

#include <cstddef>
#include <vector>

#include "ddp/mlp.hpp"
#include "parallel/zero/zero.hpp"

namespace dtrain::test {

// The model's parameters as `dtype` (f32, f16 or bf16) buffers, described
// as DLTensors in registration order.
class ParameterTensors {
 public:
  ParameterTensors(const Mlp& model, DType dtype);
  std::vector<const DLTensor*> pointers();

 private:
  std::vector<std::vector<std::uint16_t>> half_;
  std::vector<std::vector<float>> single_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<DLTensor> tensors_;
};

// One micro-step on `batch` (each sample's loss weighted by `scale`).
void micro_step(parallel::zero::Zero& zero, Mlp& model, const Batch& batch, float scale);

// Every parameter's full values, as f32 (stage 3 gathers unit by unit).
std::vector<std::vector<float>> read_parameters(parallel::zero::Zero& zero);

}  // namespace dtrain::test
