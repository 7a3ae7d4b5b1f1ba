// The trainer side of the executor tests: one rank's chunks of the MLP in
// mlp.hpp, behind the dt_pipeline callbacks. It checks every tensor the
// executor hands it, saves what backward needs, and records what the tests
// compare against the single-process reference.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dtrain.h"
#include "mlp.hpp"

namespace dtrain::testing {

struct PipelineModel {
  int stages;       // p
  int chunks;       // v
  int microbatches; // m
  int layers;       // divisible by p * v
  int rows;         // per micro-batch

  int global_stages() const { return stages * chunks; }
  int layers_per_stage() const { return layers / global_stages(); }
  int batch_rows() const { return rows * microbatches; }
};

class StageTrainer {
 public:
  StageTrainer(const PipelineModel& model, int rank, std::vector<float> input, std::vector<float> target);

  // Options with every callback of this trainer set (backward_weight only
  // when `split_backward`) and activations of rows x kHidden f32.
  dt_pipeline_options options(bool split_backward);

  // Makes FORWARD of (chunk, microbatch) return `status`.
  void fail_forward_at(int chunk, int microbatch, dt_status status) { failure_ = Failure{chunk, microbatch, status}; }

  // Sets the gradients, the loss and the counts to zero for another step.
  void zero();

  float loss() const { return loss_; }
  bool holds_last_stage() const;
  // The model layers this rank holds, by their index in the whole model.
  const std::map<int, Layer>& layers() const { return layers_; }
  int chunk_done_calls(int chunk) const { return chunk_done_calls_[chunk]; }
  // Empty when every tensor and call the executor made was as documented.
  const std::vector<std::string>& complaints() const { return complaints_; }

 private:
  struct Saved {
    std::vector<std::vector<float>> activations;  // layer inputs, then the last output
    std::vector<std::vector<float>> activation_grads;
  };
  struct Failure {
    int chunk;
    int microbatch;
    dt_status status;
  };

  static dt_status forward(void* user, int chunk, int microbatch, const DLTensor* input, DLTensor* output);
  static dt_status backward(void* user, int chunk, int microbatch, const DLTensor* grad_output,
                            DLTensor* grad_input);
  static dt_status backward_weight(void* user, int chunk, int microbatch);
  static dt_status chunk_done(void* user, int chunk);

  dt_status run_forward(int chunk, int microbatch, const DLTensor* input, DLTensor* output);
  dt_status run_backward(int chunk, int microbatch, const DLTensor* grad_output, DLTensor* grad_input);
  dt_status run_backward_weight(int chunk, int microbatch);
  // Whether `t` is present exactly when `expected`, and then an activation.
  bool check_tensor(const DLTensor* t, bool expected, const char* what);
  int global_stage(int chunk) const { return chunk * model_.stages + rank_; }
  int first_layer(int chunk) const { return global_stage(chunk) * model_.layers_per_stage(); }

  PipelineModel model_;
  int rank_;
  std::vector<float> input_;
  std::vector<float> target_;
  std::map<int, Layer> layers_;
  std::map<std::pair<int, int>, Saved> saved_;
  bool split_backward_ = false;
  float loss_ = 0;
  std::vector<int> weights_done_;
  std::vector<int> chunk_done_calls_;
  std::optional<Failure> failure_;
  std::vector<std::string> complaints_;
};

}  // namespace dtrain::testing
