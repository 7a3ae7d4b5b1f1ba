// How a Zero shards and reduces. Every rank must pass the same options and
// optimizer configuration: they are part of what the ranks agree on at
// creation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "optim/config.hpp"
#include "parallel/common/agreement.hpp"

namespace dtrain::comm {
class Communicator;
}

namespace dtrain::parallel::zero {

struct Options {
  // 0: nothing sharded; 1: optimizer state and master weights; 2: also
  // gradients; 3: also parameters.
  int stage = 1;
  // Stages 0–2: a unit is closed once it holds at least this many bytes.
  std::int64_t bucket_bytes = std::int64_t{25} << 20;
  // Stage 3: parameters per unit, in registration order. Unset: one unit
  // per parameter.
  std::optional<std::vector<std::size_t>> unit_sizes;
  // Stage 3: gathering a unit also starts gathering the next one.
  bool prefetch = true;
  // CUDA parameters: the cudaStream_t the trainer reads parameters and
  // writes gradients on; nullptr is the legacy default stream. Each rank its
  // own: not part of what the ranks compare.
  void* stream = nullptr;
  // The ranks holding the other parts of a model split by tensor or
  // pipeline parallelism (not owned; it outlives the Zero): the squared
  // gradient norm is summed over them too. nullptr: the parameters are the
  // whole model.
  comm::Communicator* model_comm = nullptr;
  // Parameters this rank leaves out of the norm because a rank of
  // model_comm counts the same gradient (a tensor-parallel replica).
  std::vector<std::size_t> norm_excluded;
};

// Throws DT_ERR_INVALID_ARGUMENT naming the first bad option for a model of
// `parameters` parameters: a stage other than 0–3, bucket_bytes below 1,
// unit_sizes outside stage 3, a unit of no parameters, sizes that do not
// add up to `parameters`, or norm_excluded with an index out of range, a
// repeated index, or no model_comm.
void check_options(const Options& options, std::size_t parameters);

// What the ranks compare at creation besides the parameters' layout. The
// list has the same length whatever the options, so that a rank refusing
// its arguments can take part with defaults.
extern const common::AgreementSubject kCreationSubject;
std::vector<common::Setting> creation_settings(const Options& options, const optim::Config& config);

}  // namespace dtrain::parallel::zero
