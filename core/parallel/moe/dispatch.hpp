// Dispatch and combine over a plan, and their backward passes
// (dtrain/moe.h states what each computes). Each call is collective over
// the plan's ep communicator: it checks this rank's tensors against the plan
// inside the ranks' agreement, so that a refusal reaches every rank.
#pragma once

#include <dlpack/dlpack.h>

#include "parallel/moe/plan.hpp"

namespace dtrain::parallel::moe {

void dispatch(Plan& plan, const DLTensor* tokens, const DLTensor* received);
void combine(Plan& plan, const DLTensor* expert_out, const DLTensor* weights, const DLTensor* output);
void combine_backward(Plan& plan, const DLTensor* d_out, const DLTensor* weights, const DLTensor* d_expert_out,
                      const DLTensor* d_weights);
void dispatch_backward(Plan& plan, const DLTensor* d_received, const DLTensor* d_tokens);

}  // namespace dtrain::parallel::moe
