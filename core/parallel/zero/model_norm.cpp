#include "parallel/zero/model_norm.hpp"

#include <cstddef>
#include <utility>

#include "optim/cpu/kernels.hpp"
#include "optim/slot.hpp"

namespace dtrain::parallel::zero {

ModelNorm::ModelNorm(comm::Communicator* shards, comm::Communicator* model, std::vector<TensorView> excluded,
                     device::Queue& queue)
    : shards_(shards), model_(model), excluded_(std::move(excluded)), queue_(queue) {}

double ModelNorm::operator()(double local) const {
  // Subtracting the excluded parameters' squares keeps the optimizer's one
  // fused pass over every shard; they are a small share of a model (norm
  // weights and biases), so the difference loses nothing that matters.
  double counted = excluded_.empty() ? local : local - excluded_squares();
  if (counted < 0.0) counted = 0.0;  // rounding; a NaN fails the test and stays
  if (shards_) counted = comm::sum_over_ranks(*shards_, counted);
  if (model_) counted = comm::sum_over_ranks(*model_, counted);
  return counted;
}

double ModelNorm::excluded_squares() const {
  double total = 0.0;
  std::vector<std::byte> staging;
  for (const TensorView& view : excluded_) {
    optim::Slot slot;
    slot.grad = view;
    if (view.memory != Memory::host) {
      // Device gradients: the excluded parts are small, so they come to the
      // host rather than needing a kernel of their own.
      staging.resize(view.bytes());
      queue_.copy(staging.data(), view.data, view.bytes());
      queue_.synchronize();
      slot.grad.data = staging.data();
      slot.grad.memory = Memory::host;
    }
    total += optim::cpu::squared_norm(slot);
  }
  return total;
}

}  // namespace dtrain::parallel::zero
