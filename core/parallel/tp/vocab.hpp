// Vocabulary-parallel embedding and cross-entropy (dtrain/tp.h): each rank
// holds a contiguous slice of the vocabulary, rows [rank * V/tp, (rank+1) *
// V/tp) of the table or columns of the logits.
#pragma once

#include <cstdint>

#include "parallel/tp/group.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

void embedding_forward(Group& group, const Matrix& table, const TensorView& ids, const Matrix& out,
                       bool sequence_parallel);
void embedding_backward(Group& group, const TensorView& ids, const Matrix& dout, const Matrix& dtable,
                        bool sequence_parallel, bool accumulate);

struct CrossEntropyOptions {
  float label_smoothing = 0.0f;
  std::int64_t ignore_index = -100;
};

void cross_entropy_forward(Group& group, const Matrix& logits, const TensorView& targets, const TensorView& loss,
                           const TensorView& lse, CrossEntropyOptions options);
void cross_entropy_backward(Group& group, const Matrix& logits, const TensorView& targets, const TensorView& lse,
                            const TensorView& dloss, const Matrix& dlogits, CrossEntropyOptions options);

}  // namespace dtrain::parallel::tp
