#include "parallel/zero/model_norm.hpp"

#include <cstddef>
#include <utility>

#include "device/cpu/optim_kernels.hpp"
#include "device/slot.hpp"

namespace dtrain::parallel::zero {

ModelNorm::ModelNorm(comm::Communicator* shards, comm::Communicator* model, std::vector<TensorView> excluded,
                     device::Queue& queue)
    : shards_(shards), model_(model), excluded_(std::move(excluded)), queue_(queue) {}

double ModelNorm::operator()(double local) const {
  // Subtracting the excluded parameters' squares keeps the optimizer's one
  // fused pass over every shard; they are a small share of a model (norm
  // weights and biases), so the difference loses nothing that matters.
  double counted = local - excluded_squares();
  if (counted < 0.0) counted = 0.0;  // rounding; a NaN fails the test and stays
  if (shards_) counted = comm::sum_over_ranks(*shards_, counted);
  if (model_) counted = comm::sum_over_ranks(*model_, counted);
  return counted;
}

double ModelNorm::excluded_squares() const {
  const std::vector<TensorView>* views = &excluded_;
  std::vector<TensorView> host;
  std::vector<std::byte> staging;
  if (queue_.memory() != Memory::host) {
    // Device gradients: the excluded parts are small, so they come to the
    // host, all in one wait, rather than needing a kernel of their own.
    std::size_t bytes = 0;
    for (const TensorView& view : excluded_) bytes += view.bytes();
    staging.resize(bytes);
    std::byte* next = staging.data();
    for (TensorView view : excluded_) {
      queue_.copy(next, view.data, view.bytes());
      view.data = next;
      view.memory = Memory::host;
      host.push_back(view);
      next += view.bytes();
    }
    queue_.synchronize();
    views = &host;
  }
  double total = 0.0;
  for (const TensorView& view : *views) {
    device::Slot slot;
    slot.grad = view;
    total += device::cpu::squared_norm(slot);
  }
  return total;
}

}  // namespace dtrain::parallel::zero
