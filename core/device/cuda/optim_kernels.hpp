// Fused multi-tensor optimizer kernels: one launch updates every tensor of an
// optimizer step, as apex's and PyTorch's multi_tensor_apply do. The host cuts
// the tensors into Chunks of at most kChunkElements elements and uploads that
// table once; each block of a launch then takes one Chunk. The element
// formulas are the CPU loops' (cpu/optim_sgd.cpp, cpu/optim_adamw.cpp),
// operation for operation, with every f32 multiply and add rounded on its
// own as the CPU loops round them (nvcc would otherwise fuse them into
// multiply-adds), so that a step's result does not depend on where it ran.
// f16 and bf16 params are read from and written through their f32 master
// weights; state is f32.
//
// The constants arrive precomputed (device/update_step.hpp, made by
// optim/step.hpp); fused_update.cpp maps them to these structs.
// Launch failures throw with CUDA's error text; every launch is queued on
// `stream` and returns at once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "base/dtype.hpp"

namespace dtrain::device::cuda::optim {

// The most elements one block updates (a multiple of every vector width).
// Small enough that one large tensor still spreads over every SM (a 64 MiB
// f32 AdamW working set is 512 blocks), large enough that a table entry costs
// 48 bytes per 32 KiB of f32 params.
constexpr std::int64_t kChunkElements = 1 << 13;

// One tensor's buffers. `param` and `grad` are f32, f16 or bf16 (`dtype`),
// aligned to their element; `master` is set exactly when dtype is f16 or bf16;
// `state[b]` are the f32 optimizer state buffers the rule keeps (nullptr
// otherwise). All of it in the memory of the device the kernels run on.
struct Tensor {
  DType dtype = DType::f32;
  void* param = nullptr;
  void* grad = nullptr;
  float* master = nullptr;
  float* state[2] = {};
  std::int64_t count = 0;
};

// A block's work: elements [first, first + count) of one tensor, the
// pointers already advanced to `first`.
struct Chunk {
  void* param;
  void* grad;
  float* master;
  float* state0;
  float* state1;
  std::int32_t count;
  std::int32_t dtype;  // a DType
};

// The Chunks of `tensors`, in order; empty tensors have none.
std::vector<Chunk> make_chunks(const std::vector<Tensor>& tensors);

// The gradients enter every update multiplied by `grad_factor`; when it is
// not 1 the scaled gradient is also stored back into `grad`.
struct SgdConstants {
  float grad_factor = 1.0f;
  float lr = 0.0f;
  float weight_decay = 0.0f;
  bool momentum = false;  // state0 is the momentum buffer
  bool nesterov = false;
  float keep = 0.0f;  // buffer = keep * buffer + take * d
  float take = 1.0f;
  float momentum_factor = 0.0f;  // Nesterov: d + momentum_factor * buffer
};

struct AdamwConstants {
  float grad_factor = 1.0f;
  float lr_weight_decay = 0.0f;
  float beta1 = 0.0f, one_minus_beta1 = 1.0f;
  float beta2 = 0.0f, one_minus_beta2 = 1.0f;
  float step_size = 0.0f;
  float inv_sqrt_bias2 = 1.0f;
  float eps = 0.0f;
};

// `chunks` points at `n` Chunks in device memory. n == 0 queues nothing.
void sgd_update(const SgdConstants& constants, const Chunk* chunks, std::int64_t n, cudaStream_t stream);
void adamw_update(const AdamwConstants& constants, const Chunk* chunks, std::int64_t n, cudaStream_t stream);

// *out (device memory) = the sum over every Chunk of the squared gradients,
// each widened to f64: inf or NaN when a gradient is. Deterministic: each
// block sums its Chunk into partials[block] (n doubles of device scratch) in a
// fixed order, then one block sums the partials in a fixed order. n == 0
// stores 0.
void squared_norm(const Chunk* chunks, std::int64_t n, double* partials, double* out, cudaStream_t stream);

}  // namespace dtrain::device::cuda::optim
