#include "parallel/pipeline/compute_order.hpp"

#include <algorithm>
#include <deque>

namespace dtrain::parallel::pipeline {

namespace {

struct ChunkAndMicrobatch {
  int chunk;
  int microbatch;
};

// Every kind is one loop: `warmup` forwards, then one forward and one
// backward at a time, then the remaining backwards. The k-th forward and
// backward of a rank go through its chunks in groups of `stages`
// micro-batches, forwards from the first chunk up, backwards from the last
// down (Megatron's interleaved order; with one chunk it is micro-batch k).
// Zero-bubble schedules split each backward into B and W and hold the W of
// the first `delayed_weight_grads` backwards back, so that the Ws fill the
// time the rank would otherwise wait for gradients from the next stage.
struct Plan {
  int warmup;
  bool split_backward;
  int delayed_weight_grads;
};

ChunkAndMicrobatch forward_item(const Shape& s, int k) {
  const int group = k / (s.stages * s.chunks);
  return {(k / s.stages) % s.chunks, group * s.stages + k % s.stages};
}

ChunkAndMicrobatch backward_item(const Shape& s, int k) {
  const ChunkAndMicrobatch forward = forward_item(s, k);
  return {s.chunks - 1 - forward.chunk, forward.microbatch};
}

Plan plan_of(ScheduleKind kind, const Shape& s, int rank) {
  const int total = s.microbatches * s.chunks;
  const int downstream = s.stages - 1 - rank;  // ranks after this one
  switch (kind) {
    case ScheduleKind::one_f_one_b:
      // At most stages - rank micro-batches in flight: p on stage 0.
      return {std::min(downstream, total), false, 0};
    case ScheduleKind::interleaved_1f1b:
      // Megatron-Core's warm-up: the first `stages` micro-batches of every
      // chunk but the last, plus two per downstream rank (a forward down
      // and a backward back up).
      return {std::min((s.chunks - 1) * s.stages + 2 * downstream, total), false, 0};
    case ScheduleKind::zb_h1:
      // 1F1B's warm-up, so no more activations in flight than 1F1B on
      // stage 0; the Ws of this rank's first `rank` backwards come later.
      return {std::min(downstream, total), true, rank};
    case ScheduleKind::gpipe:
      break;
  }
  return {total, false, 0};  // GPipe: every forward before any backward
}

class OrderBuilder {
 public:
  OrderBuilder(const Shape& shape, const Plan& plan) : shape_(shape), plan_(plan) {}

  void forward(int k) {
    const ChunkAndMicrobatch item = forward_item(shape_, k);
    order_.push_back({ActionKind::forward, item.chunk, item.microbatch, kNoPeer});
  }

  void backward(int k) {
    const ChunkAndMicrobatch item = backward_item(shape_, k);
    if (!plan_.split_backward) {
      order_.push_back({ActionKind::backward, item.chunk, item.microbatch, kNoPeer});
      return;
    }
    order_.push_back({ActionKind::backward_input, item.chunk, item.microbatch, kNoPeer});
    pending_weight_grads_.push_back(item);
    if (k >= plan_.delayed_weight_grads) weight_grad();
  }

  std::vector<Action> finish() {
    while (!pending_weight_grads_.empty()) weight_grad();
    return std::move(order_);
  }

 private:
  void weight_grad() {
    const ChunkAndMicrobatch item = pending_weight_grads_.front();
    pending_weight_grads_.pop_front();
    order_.push_back({ActionKind::backward_weight, item.chunk, item.microbatch, kNoPeer});
  }

  Shape shape_;
  Plan plan_;
  std::vector<Action> order_;
  std::deque<ChunkAndMicrobatch> pending_weight_grads_;
};

}  // namespace

std::vector<Action> compute_order(ScheduleKind kind, const Shape& shape, int rank) {
  const int total = shape.microbatches * shape.chunks;
  const Plan plan = plan_of(kind, shape, rank);
  OrderBuilder order(shape, plan);
  for (int k = 0; k < plan.warmup; ++k) order.forward(k);
  for (int k = 0; k < total - plan.warmup; ++k) {
    order.forward(plan.warmup + k);
    order.backward(k);
  }
  for (int k = total - plan.warmup; k < total; ++k) order.backward(k);
  return order.finish();
}

}  // namespace dtrain::parallel::pipeline
