// dt_zero_memory, filled in by dt_zero_memory_usage and dt_plan_zero_memory.
#pragma once

#include <cstddef>

#include "base/options.hpp"
#include "dtrain/zero.h"
#include "parallel/zero/memory.hpp"

namespace dtrain::capi {

// Size of each released version of dt_zero_memory; index = version.
constexpr std::size_t kZeroMemorySizes[] = {0, sizeof(dt_zero_memory)};

// Throws DT_ERR_INVALID_ARGUMENT for an `out` whose version this library
// does not write; call before computing what goes into it.
inline void check_zero_memory(const dt_zero_memory* out) {
  check_output_version(out->version, kZeroMemorySizes, "out", "DT_ZERO_MEMORY_INIT");
}

inline void write_zero_memory(const parallel::zero::MemoryUsage& usage, dt_zero_memory* out) {
  // Version 1 is every field there is so far.
  out->parameters = usage.parameters;
  out->gradients = usage.gradients;
  out->optimizer_state = usage.optimizer_state;
  out->master_weights = usage.master_weights;
  out->communication = usage.communication;
  out->padding = usage.padding;
  out->peak = usage.peak;
}

}  // namespace dtrain::capi
