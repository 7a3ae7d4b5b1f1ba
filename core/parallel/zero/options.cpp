#include "parallel/zero/options.hpp"

#include <bit>
#include <string>

#include "base/digest.hpp"
#include "base/error.hpp"
#include "comm/communicator.hpp"

namespace dtrain::parallel::zero {

namespace {

std::int64_t bits(float value) { return std::bit_cast<std::int32_t>(value); }

// Every field that changes an update: ranks stepping with different
// hyperparameters would silently train different models.
std::int64_t digest(const optim::Config& config) {
  Digest d;
  d.add(static_cast<std::int64_t>(config.kind));
  for (float value : {config.sgd.lr, config.sgd.momentum, config.sgd.dampening, config.sgd.weight_decay}) {
    d.add(bits(value));
  }
  d.add(config.sgd.nesterov);
  for (float value : {config.adamw.lr, config.adamw.beta1, config.adamw.beta2, config.adamw.eps,
                      config.adamw.weight_decay, config.max_grad_norm}) {
    d.add(bits(value));
  }
  const optim::LossScalerSettings& scale = config.loss_scale;
  for (float value : {scale.initial_scale, scale.growth_factor, scale.backoff_factor}) d.add(bits(value));
  d.add(scale.dynamic);
  d.add(scale.growth_interval);
  return d.value();
}

std::int64_t digest(const std::vector<std::size_t>& indices) {
  Digest d;
  for (std::size_t index : indices) d.add(static_cast<std::int64_t>(index));
  return d.value();
}

std::int64_t digest(const std::optional<std::vector<std::size_t>>& sizes) {
  Digest d;
  d.add(sizes.has_value());
  if (sizes) d.add(digest(*sizes));
  return d.value();
}

}  // namespace

const common::AgreementSubject kCreationSubject{"ZeRO creation", "parameter"};

namespace {

void check_norm_excluded(const Options& options, std::size_t parameters) {
  if (options.norm_excluded.empty()) return;
  if (!options.model_comm) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "norm_excluded needs optim->comm: parameters left out here must be counted on a rank of it");
  }
  std::vector<bool> seen(parameters, false);
  for (std::size_t k = 0; k < options.norm_excluded.size(); ++k) {
    const std::size_t index = options.norm_excluded[k];
    const std::string which = "norm_excluded[" + std::to_string(k) + "] = " + std::to_string(index);
    if (index >= parameters) {
      raise(DT_ERR_INVALID_ARGUMENT, which + " is not a parameter (there are " + std::to_string(parameters) + ")");
    }
    if (seen[index]) raise(DT_ERR_INVALID_ARGUMENT, which + " is repeated");
    seen[index] = true;
  }
}

}  // namespace

void check_options(const Options& options, std::size_t parameters) {
  if (options.stage < 0 || options.stage > 3) {
    raise(DT_ERR_INVALID_ARGUMENT, "stage = " + std::to_string(options.stage) + " is not a ZeRO stage (0, 1, 2 or 3)");
  }
  if (options.bucket_bytes < 1) {
    raise(DT_ERR_INVALID_ARGUMENT, "bucket_bytes = " + std::to_string(options.bucket_bytes) + " must be at least 1");
  }
  check_norm_excluded(options, parameters);
  if (!options.unit_sizes) return;
  std::size_t total = 0;
  for (std::size_t u = 0; u < options.unit_sizes->size(); ++u) {
    const std::size_t size = (*options.unit_sizes)[u];
    if (size == 0)
      raise(DT_ERR_INVALID_ARGUMENT, "unit_sizes[" + std::to_string(u) + "] is 0: a unit needs a parameter");
    if (size > parameters - total) {
      raise(DT_ERR_INVALID_ARGUMENT, "unit_sizes add up to more than the " + std::to_string(parameters) +
                                         " parameters (by unit " + std::to_string(u) + ")");
    }
    total += size;
  }
  if (total != parameters) {
    raise(DT_ERR_INVALID_ARGUMENT, "unit_sizes add up to " + std::to_string(total) + ", not to the " +
                                       std::to_string(parameters) + " parameters");
  }
}

std::vector<common::Setting> creation_settings(const Options& options, const optim::Config& config) {
  return {{"stage", options.stage},
          {"bucket_bytes", options.bucket_bytes},
          {"prefetch", options.prefetch},
          {"unit_sizes (digest)", digest(options.unit_sizes)},
          {"optimizer options (digest)", digest(config)},
          {"optim->comm ranks", options.model_comm ? options.model_comm->size() : 0},
          {"norm_excluded (digest)", digest(options.norm_excluded)}};
}

}  // namespace dtrain::parallel::zero
