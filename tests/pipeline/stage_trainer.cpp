#include "stage_trainer.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace dtrain::testing {

StageTrainer::StageTrainer(const PipelineModel& model, int rank, std::vector<float> input, std::vector<float> target)
    : model_(model),
      rank_(rank),
      input_(std::move(input)),
      target_(std::move(target)),
      weights_done_(model.chunks, 0),
      chunk_done_calls_(model.chunks, 0) {
  for (int chunk = 0; chunk < model.chunks; ++chunk) {
    for (int l = 0; l < model.layers_per_stage(); ++l) layers_[first_layer(chunk) + l] = make_layer(first_layer(chunk) + l);
  }
}

dt_pipeline_options StageTrainer::options(bool split_backward) {
  dt_pipeline_options opts = DT_PIPELINE_OPTIONS_INIT;
  opts.activation_elements = static_cast<int64_t>(model_.rows) * kHidden;
  opts.forward = &StageTrainer::forward;
  opts.backward = &StageTrainer::backward;
  split_backward_ = split_backward;
  opts.backward_weight = split_backward ? &StageTrainer::backward_weight : nullptr;
  opts.chunk_done = &StageTrainer::chunk_done;
  opts.user = this;
  return opts;
}

void StageTrainer::zero() {
  for (auto& [index, layer] : layers_) {
    std::fill(layer.weight_grad.begin(), layer.weight_grad.end(), 0.0f);
    std::fill(layer.bias_grad.begin(), layer.bias_grad.end(), 0.0f);
  }
  loss_ = 0;
  std::fill(weights_done_.begin(), weights_done_.end(), 0);
  std::fill(chunk_done_calls_.begin(), chunk_done_calls_.end(), 0);
}

bool StageTrainer::holds_last_stage() const {
  return global_stage(model_.chunks - 1) == model_.global_stages() - 1;
}

dt_status StageTrainer::forward(void* user, int chunk, int microbatch, const DLTensor* input, DLTensor* output) {
  return static_cast<StageTrainer*>(user)->run_forward(chunk, microbatch, input, output);
}

dt_status StageTrainer::backward(void* user, int chunk, int microbatch, const DLTensor* grad_output,
                                 DLTensor* grad_input) {
  return static_cast<StageTrainer*>(user)->run_backward(chunk, microbatch, grad_output, grad_input);
}

dt_status StageTrainer::backward_weight(void* user, int chunk, int microbatch) {
  return static_cast<StageTrainer*>(user)->run_backward_weight(chunk, microbatch);
}

dt_status StageTrainer::chunk_done(void* user, int chunk) {
  auto* self = static_cast<StageTrainer*>(user);
  if (self->weights_done_[chunk] != self->model_.microbatches) {
    self->complaints_.push_back("chunk_done of chunk " + std::to_string(chunk) + " before its last weight gradient");
  }
  ++self->chunk_done_calls_[chunk];
  return DT_OK;
}

bool StageTrainer::check_tensor(const DLTensor* t, bool expected, const char* what) {
  if ((t != nullptr) != expected) {
    complaints_.push_back(std::string(what) + (expected ? " is NULL" : " is not NULL"));
    return false;
  }
  if (t == nullptr) return true;
  const bool ok = t->data != nullptr && t->ndim == 1 && t->shape[0] == model_.rows * kHidden &&
                  t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->device.device_type == kDLCPU;
  if (!ok) complaints_.push_back(std::string(what) + " is not the declared activation");
  return ok;
}

dt_status StageTrainer::run_forward(int chunk, int microbatch, const DLTensor* input, DLTensor* output) {
  if (failure_ && failure_->chunk == chunk && failure_->microbatch == microbatch) return failure_->status;
  const int stage = global_stage(chunk);
  const bool last = stage == model_.global_stages() - 1;
  if (!check_tensor(input, stage > 0, "input") || !check_tensor(output, !last, "output")) return DT_ERR_INTERNAL;
  const std::size_t width = static_cast<std::size_t>(model_.rows) * kHidden;
  const float* x = input ? static_cast<const float*>(input->data) : input_.data() + microbatch * width;
  Saved& saved = saved_[{chunk, microbatch}];
  saved.activations.assign(1, std::vector<float>(x, x + width));
  for (int l = 0; l < model_.layers_per_stage(); ++l) {
    saved.activations.push_back(
        layer_forward(layers_.at(first_layer(chunk) + l), saved.activations.back().data(), model_.rows));
  }
  const std::vector<float>& h = saved.activations.back();
  if (last) {
    loss_ += testing::loss(h.data(), target_.data() + microbatch * width, model_.rows, model_.batch_rows());
  } else {
    std::memcpy(output->data, h.data(), width * sizeof(float));
  }
  return DT_OK;
}

dt_status StageTrainer::run_backward(int chunk, int microbatch, const DLTensor* grad_output, DLTensor* grad_input) {
  const int stage = global_stage(chunk);
  const bool last = stage == model_.global_stages() - 1;
  if (!check_tensor(grad_output, !last, "grad_output") || !check_tensor(grad_input, stage > 0, "grad_input")) {
    return DT_ERR_INTERNAL;
  }
  const std::size_t width = static_cast<std::size_t>(model_.rows) * kHidden;
  Saved& saved = saved_.at({chunk, microbatch});
  std::vector<float> dh =
      last ? loss_grad(saved.activations.back().data(), target_.data() + microbatch * width, model_.rows,
                       model_.batch_rows())
           : std::vector<float>(static_cast<const float*>(grad_output->data),
                                static_cast<const float*>(grad_output->data) + width);
  saved.activation_grads.assign(model_.layers_per_stage(), {});
  for (int l = model_.layers_per_stage(); l-- > 0;) {
    saved.activation_grads[l] = activation_grad(saved.activations[l + 1].data(), dh.data(), model_.rows);
    dh = layer_input_grad(layers_.at(first_layer(chunk) + l), saved.activation_grads[l], model_.rows);
  }
  if (grad_input) std::memcpy(grad_input->data, dh.data(), width * sizeof(float));
  // Without BACKWARD_WEIGHT actions, backward computes the weight gradients too.
  return split_backward_ ? DT_OK : run_backward_weight(chunk, microbatch);
}

dt_status StageTrainer::run_backward_weight(int chunk, int microbatch) {
  auto found = saved_.find({chunk, microbatch});
  if (found == saved_.end() || found->second.activation_grads.empty()) {
    complaints_.push_back("BACKWARD_WEIGHT before its BACKWARD_INPUT");
    return DT_ERR_INTERNAL;
  }
  for (int l = 0; l < model_.layers_per_stage(); ++l) {
    accumulate_weight_grad(layers_.at(first_layer(chunk) + l), found->second.activations[l].data(),
                           found->second.activation_grads[l], model_.rows);
  }
  saved_.erase(found);
  ++weights_done_[chunk];
  return DT_OK;
}

}  // namespace dtrain::testing
