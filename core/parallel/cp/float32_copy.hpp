// Attention computes in float32 (device/attention.hpp). A caller's 16-bit
// tensor (float16 or bfloat16) is widened into a float32 copy in the same
// memory before the call, and an output's copy is rounded back into it,
// once and to nearest even, after; a float32 tensor is used as it is.
#pragma once

#include "base/tensor.hpp"
#include "device/buffer.hpp"

namespace dtrain::parallel::cp {

class Float32Copy {
 public:
  // What the call does with the tensor: reads it, writes it, or both.
  enum class Role { input, output, both };

  // `tensor` (f32, f16 or bf16) in `queue`'s memory; an input is widened
  // now (queued).
  Float32Copy(device::Queue& queue, const TensorView& tensor, Role role);

  float* data() const { return data_; }
  // An output's float32 result into the caller's tensor (queued); nothing
  // for an input or a float32 tensor.
  void round_back();

 private:
  device::Queue& queue_;
  TensorView tensor_;
  Role role_;
  device::Buffer wide_;
  float* data_;
};

}  // namespace dtrain::parallel::cp
