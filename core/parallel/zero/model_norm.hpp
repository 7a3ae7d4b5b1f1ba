// The squared gradient norm a Zero clips by, when its parameters are one
// part of a model split by tensor or pipeline parallelism: the norm of the
// whole model is its parts' squares summed over the ranks holding them,
// each gradient counted once. The optimizer hands over the sum of squares
// of this rank's gradient shards; this takes out the parameters another
// rank counts (tensor-parallel replicas), then adds up over the Zero's own
// ranks (the shards; stage 0 holds no shards) and over the model's.
#pragma once

#include <cstddef>
#include <vector>

#include "base/tensor.hpp"
#include "comm/communicator.hpp"
#include "device/queue.hpp"

namespace dtrain::parallel::zero {

class ModelNorm {
 public:
  // `shards`: the Zero's communicator, nullptr in stage 0. `model`: the
  // other parts' ranks, or nullptr. `excluded`: the parts of this rank's
  // gradient shards that belong to excluded parameters, in `queue`'s memory.
  ModelNorm(comm::Communicator* shards, comm::Communicator* model, std::vector<TensorView> excluded,
            device::Queue& queue);

  // The model's squared norm from this rank's sum of squares (inf or NaN
  // stays so, so that every rank skips together). Collective over both
  // communicators.
  double operator()(double local) const;

 private:
  double excluded_squares() const;

  comm::Communicator* shards_;
  comm::Communicator* model_;
  std::vector<TensorView> excluded_;
  device::Queue& queue_;
};

}  // namespace dtrain::parallel::zero
