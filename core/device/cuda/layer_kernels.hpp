// The layer kernels on CUDA (what each computes: device/kernel_args.hpp),
// queued on `stream` on the current device. Row kernels run one block per
// row (device/cuda/launch.cuh); top-k makes k passes over its row, so it
// suits the small k of routing. Arguments are checked by device/kernels.cpp;
// device pointers. An index outside the table is skipped by gather_rows
// and scatter_add_rows (checking it would mean waiting for the device);
// scatter_add_rows adds with atomics, so the order of repeated indices'
// additions, and with 16-bit tables their rounding, may vary between runs.
#pragma once

#include <cuda_runtime_api.h>

#include "device/kernel_args.hpp"

namespace dtrain::device::cuda {

void softmax(const SoftmaxArgs& args, cudaStream_t stream);
void softmax_backward(const SoftmaxBackwardArgs& args, cudaStream_t stream);
void top_k(const TopKArgs& args, cudaStream_t stream);
void activation_forward(const ActivationArgs& args, cudaStream_t stream);
void activation_backward(const ActivationArgs& args, cudaStream_t stream);
void norm_forward(const NormArgs& args, cudaStream_t stream);
void norm_backward(const NormBackwardArgs& args, cudaStream_t stream);
void gather_rows(const IndexedRowsArgs& args, cudaStream_t stream);
void scatter_add_rows(const IndexedRowsArgs& args, cudaStream_t stream);
void pair_rows_sum(const PairRowsArgs& args, cudaStream_t stream);
void pair_rows_sum_backward(const PairRowsArgs& args, cudaStream_t stream);
void cross_entropy_statistics(const CrossEntropyStatsArgs& args, cudaStream_t stream);
void cross_entropy_gradient(const CrossEntropyGradArgs& args, cudaStream_t stream);

}  // namespace dtrain::device::cuda
