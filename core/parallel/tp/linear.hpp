// Column- and row-parallel linear layers (dtrain/tp.h), forward and
// backward. Optional tensors (bias, dx, dw, dbias) are nullptr when absent.
#pragma once

#include "parallel/tp/group.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

// The flags of dtrain/tp.h.
struct LinearFlags {
  bool sequence_parallel = false;
  bool gather_output = false;
  bool accumulate = false;
};

void column_forward(Group& group, const Matrix& x, const Matrix& w, const TensorView* bias, const Matrix& y,
                    LinearFlags flags);
void column_backward(Group& group, const Matrix& x, const Matrix& w, const Matrix& dy, const Matrix* dx,
                     const Matrix* dw, const TensorView* db, LinearFlags flags);
void row_forward(Group& group, const Matrix& x, const Matrix& w, const TensorView* bias, const Matrix& y,
                 LinearFlags flags);
void row_backward(Group& group, const Matrix& x, const Matrix& w, const Matrix& dy, const Matrix* dx,
                  const Matrix* dw, const TensorView* db, LinearFlags flags);

}  // namespace dtrain::parallel::tp
