// The tag of a message between pipeline ranks, built from what identifies
// it (dtrain/pipeline.h): its direction, the sender's chunk and the
// micro-batch. Unique within a step, so receives may be posted in any order.
#pragma once

#include "parallel/pipeline/action.hpp"

namespace dtrain::parallel::pipeline {

enum class Direction : int { activation = 0, gradient = 1 };

inline int message_tag(Direction direction, int sender_chunk, int microbatch, const Shape& shape) {
  return (sender_chunk * shape.microbatches + microbatch) * 2 + static_cast<int>(direction);
}

}  // namespace dtrain::parallel::pipeline
