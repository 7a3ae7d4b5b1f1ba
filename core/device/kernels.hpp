// The layer kernels the strategies run on their tensors, one call for both
// devices: host views go to the CPU kernels (device/cpu/layer_kernels.hpp),
// CUDA views to the CUDA ones (device/cuda/layer_kernels.hpp), queued on the
// stream of the first output's view. What each computes, and in which
// precision, is in device/kernel_args.hpp.
//
// Every operand is a checked view (device::check_tensor) holding exactly the
// elements its shape names; all must be in one place. Data tensors (x, y,
// gamma, ...) share one dtype among f32, f16 and bf16; saved statistics
// (lse, mean, rstd) are f32; top-k indices are i64; row indices i32 or i64.
// Element-wise kernels and softmax may write in place (output == input);
// other outputs must not overlap the inputs. Bad shapes, dtypes or places
// throw DT_ERR_INVALID_ARGUMENT (DT_ERR_UNSUPPORTED for a dtype no kernel
// has) before anything runs.
#pragma once

#include <cstdint>

#include "base/tensor.hpp"
#include "device/kernel_args.hpp"

namespace dtrain::device {

// x, y: rows x cols; lse: rows.
void softmax(RowShape shape, const TensorView& x, const TensorView& y, const TensorView& lse);
// y, dy, dx: rows x cols.
void softmax_backward(RowShape shape, const TensorView& y, const TensorView& dy, const TensorView& dx);

// x: rows x cols; values and indices: rows x k, 0 < k <= cols.
void top_k(RowShape shape, std::int64_t k, const TensorView& x, const TensorView& values, const TensorView& indices);

// Element-wise, any count: y = f(x); dx = f'(x) * dy.
void activation_forward(Activation kind, const TensorView& x, const TensorView& y);
void activation_backward(Activation kind, const TensorView& x, const TensorView& dy, const TensorView& dx);

// x, y, dy, dx: rows x cols; gamma, beta, dgamma, dbeta: cols; mean, rstd:
// rows (written by forward, read by backward). cols > 0, eps > 0.
void layer_norm_forward(RowShape shape, float eps, const TensorView& x, const TensorView& gamma,
                        const TensorView& beta, const TensorView& y, const TensorView& mean, const TensorView& rstd);
void layer_norm_backward(RowShape shape, const TensorView& x, const TensorView& gamma, const TensorView& dy,
                         const TensorView& mean, const TensorView& rstd, const TensorView& dx,
                         const TensorView& dgamma, const TensorView& dbeta);
void rms_norm_forward(RowShape shape, float eps, const TensorView& x, const TensorView& gamma, const TensorView& y,
                      const TensorView& rstd);
void rms_norm_backward(RowShape shape, const TensorView& x, const TensorView& gamma, const TensorView& dy,
                       const TensorView& rstd, const TensorView& dx, const TensorView& dgamma);

// table: table_rows x cols (table_rows = table.count / cols); indices: n;
// rows: n x cols. gather: rows[i] = table[indices[i]]. scatter_add:
// table[indices[i]] += rows[i]. An index outside the table is
// DT_ERR_INVALID_ARGUMENT on the CPU; on CUDA, where checking would mean
// waiting for the device, such a row is skipped.
void gather_rows(std::int64_t cols, const TensorView& table, const TensorView& indices, const TensorView& rows);
void scatter_add_rows(std::int64_t cols, const TensorView& rows, const TensorView& indices, const TensorView& table);
// The same over a table that is rows [first, first + table_rows) of a larger
// one the indices name (a rank's slice of a vocabulary): gather writes a row
// of zeros for an index outside the slice, scatter_add skips it; no index
// is refused.
void gather_slice_rows(std::int64_t cols, std::int64_t first, const TensorView& table, const TensorView& indices,
                       const TensorView& rows);
void scatter_add_slice_rows(std::int64_t cols, std::int64_t first, const TensorView& rows, const TensorView& indices,
                            const TensorView& table);

// MoE's combine (PairRowsArgs): rows table_rows x cols (table_rows =
// rows.count / cols); pair_rows tokens * k, i64 (tokens = pair_rows.count /
// k); weights tokens * k, or an empty view for weights of 1 (sum only);
// out, d_out tokens x cols; d_rows like rows; d_weights like weights. All
// f32 but pair_rows. A pair_rows entry outside [-1, table_rows) is
// DT_ERR_INVALID_ARGUMENT on the CPU, before anything is written; on CUDA
// such a pair is skipped (its d_weights entry 0).
void pair_rows_sum(std::int64_t k, std::int64_t cols, const TensorView& rows, const TensorView& pair_rows,
                   const TensorView& weights, const TensorView& out);
void pair_rows_sum_backward(std::int64_t k, std::int64_t cols, const TensorView& d_out, const TensorView& weights,
                            const TensorView& rows, const TensorView& pair_rows, const TensorView& d_rows,
                            const TensorView& d_weights);

// The vocabulary-parallel cross-entropy (CrossEntropyStatsArgs and
// CrossEntropyGradArgs): logits and dlogits rows x cols, f32, columns
// [first, first + cols) of the vocabulary; targets rows, i32 or i64; max,
// sum_exp, target, sum, lse and scale rows, f32.
void cross_entropy_statistics(RowShape shape, std::int64_t first, const TensorView& logits,
                              const TensorView& targets, const TensorView& max, const TensorView& sum_exp,
                              const TensorView& target, const TensorView& sum);
void cross_entropy_gradient(RowShape shape, std::int64_t first, std::int64_t vocab, float smoothing,
                            std::int64_t ignore_index, const TensorView& logits, const TensorView& targets,
                            const TensorView& lse, const TensorView& scale, const TensorView& dlogits);

}  // namespace dtrain::device
