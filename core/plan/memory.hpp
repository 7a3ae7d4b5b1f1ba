// Memory per GPU of a configuration: the model states (ZeRO, reused from
// parallel/zero so that plans and runs agree to the byte), the activations a
// pipeline stage keeps, and the communication buffers. docs/planner.md,
// "Memory".
#pragma once

#include "plan/config.hpp"
#include "plan/estimate.hpp"

namespace dtrain::plan {

// Micro-batches whose activations the first pipeline stage holds at its peak.
double first_stage_in_flight(const Config& config, std::int64_t micro_batches);

Memory memory_per_gpu(const Transformer& t, const Options& options, const Config& config, const StageStates& states,
                      std::int64_t micro_batches);

}  // namespace dtrain::plan
