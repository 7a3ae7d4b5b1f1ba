// Dispatch and combine over a plan, and their backward passes
// (dtrain/moe.h states what each computes). Each call is collective over
// the plan's ep communicator: it checks this rank's tensors against the plan
// inside the ranks' agreement, so that a refusal reaches every rank (the C
// API's refusal of a tensor included: see base/parsed.hpp). The tensors are
// in `queue`'s place (host memory or one CUDA device), where the work runs;
// on a device the calls return once it is queued.
#pragma once

#include "base/tensor_list.hpp"
#include "device/queue.hpp"
#include "parallel/moe/plan.hpp"

namespace dtrain::parallel::moe {

void dispatch(Plan& plan, device::Queue& queue, const ParsedTensor& tokens, const ParsedTensor& received);
void combine(Plan& plan, device::Queue& queue, const ParsedTensor& expert_out, const ParsedTensor& weights,
             const ParsedTensor& output);
void combine_backward(Plan& plan, device::Queue& queue, const ParsedTensor& d_out, const ParsedTensor& weights,
                      const ParsedTensor& d_expert_out, const ParsedTensor& d_weights);
void dispatch_backward(Plan& plan, device::Queue& queue, const ParsedTensor& d_received,
                       const ParsedTensor& d_tokens);

}  // namespace dtrain::parallel::moe
