// The layer kernels on the CPU (what each computes: device/kernel_args.hpp).
// Each runs on the calling thread, a row or an element at a time with f32
// math: a rank is one process per core, and the rows are what the
// compiler's vectoriser works through. Arguments are checked by
// device/kernels.cpp; host pointers.
#pragma once

#include "device/kernel_args.hpp"

namespace dtrain::device::cpu {

void softmax(const SoftmaxArgs& args);
void softmax_backward(const SoftmaxBackwardArgs& args);
void top_k(const TopKArgs& args);
void activation_forward(const ActivationArgs& args);
void activation_backward(const ActivationArgs& args);
void norm_forward(const NormArgs& args);
void norm_backward(const NormBackwardArgs& args);
// Throws DT_ERR_INVALID_ARGUMENT, before writing anything, for an index
// outside [0, table_rows) (of a table that is not a slice).
void gather_rows(const IndexedRowsArgs& args);
void scatter_add_rows(const IndexedRowsArgs& args);
// Throws DT_ERR_INVALID_ARGUMENT, before writing anything, for a pair_rows
// entry outside [-1, table_rows).
void pair_rows_sum(const PairRowsArgs& args);
void pair_rows_sum_backward(const PairRowsArgs& args);
void cross_entropy_statistics(const CrossEntropyStatsArgs& args);
void cross_entropy_gradient(const CrossEntropyGradArgs& args);

}  // namespace dtrain::device::cpu
