// Megatron-LM's conjugate mappings (dt_tp_region in dtrain/tp.h): each
// region's forward is its conjugate's backward, so both directions come
// down to six moves of a matrix.
#pragma once

#include "parallel/tp/group.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

// The values of dt_tp_region.
enum class Region { copy = 0, reduce = 1, scatter = 2, gather = 3, seq_gather = 4, seq_reduce_scatter = 5 };

void region_forward(Group& group, Region region, const Matrix& in, const Matrix& out);
void region_backward(Group& group, Region region, const Matrix& grad_out, const Matrix& grad_in);

}  // namespace dtrain::parallel::tp
