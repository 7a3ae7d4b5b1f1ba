// Dispatch and combine over a plan, and their backward passes
// (dtrain/moe.h states what each computes). Each call is collective over
// the plan's ep communicator: it checks this rank's tensors against the plan
// inside the ranks' agreement, so that a refusal reaches every rank (the C
// API's refusal of a tensor included: see base/parsed.hpp).
#pragma once

#include "base/tensor_list.hpp"
#include "parallel/moe/plan.hpp"

namespace dtrain::parallel::moe {

void dispatch(Plan& plan, const ParsedTensor& tokens, const ParsedTensor& received);
void combine(Plan& plan, const ParsedTensor& expert_out, const ParsedTensor& weights, const ParsedTensor& output);
void combine_backward(Plan& plan, const ParsedTensor& d_out, const ParsedTensor& weights,
                      const ParsedTensor& d_expert_out, const ParsedTensor& d_weights);
void dispatch_backward(Plan& plan, const ParsedTensor& d_received, const ParsedTensor& d_tokens);

}  // namespace dtrain::parallel::moe
