#include "device/kernels.hpp"

#include <initializer_list>
#include <string>
#include <type_traits>

#include "base/error.hpp"
#include "device/cpu/layer_kernels.hpp"
#ifdef DTRAIN_HAVE_CUDA
#include "device/cuda/layer_kernels.hpp"
#include "device/cuda/runtime.hpp"
#endif

namespace dtrain::device {

namespace {

// The CUDA version of a kernel, as run() takes it: queued on the output's
// stream with its device current. nullptr in builds without CUDA, where no
// CUDA view gets this far (check_tensor refuses them).
#ifdef DTRAIN_HAVE_CUDA
#define DTRAIN_CUDA_KERNEL(name)                                       \
  [](const auto& args, const TensorView& output) {                     \
    cuda::DeviceGuard guard(output.device_id);                         \
    cuda::name(args, static_cast<cudaStream_t>(output.stream));        \
  }
#else
#define DTRAIN_CUDA_KERNEL(name) nullptr
#endif

template <typename Args, typename CpuKernel, typename CudaKernel>
void run(const TensorView& output, const Args& args, CpuKernel cpu_kernel, CudaKernel cuda_kernel) {
  if (output.memory == Memory::host) {
    cpu_kernel(args);
  } else if constexpr (std::is_same_v<CudaKernel, std::nullptr_t>) {
    raise(DT_ERR_UNSUPPORTED, "this build has no CUDA kernels");
  } else {
    cuda_kernel(args, output);
  }
}

struct Operand {
  const char* name;
  const TensorView& view;
};

[[noreturn]] void bad(const char* kernel, const std::string& message) {
  raise(DT_ERR_INVALID_ARGUMENT, std::string(kernel) + ": " + message);
}

void check_count(const char* kernel, const Operand& o, std::int64_t expected) {
  if (o.view.count != expected) {
    bad(kernel, std::string(o.name) + " holds " + std::to_string(o.view.count) + " elements, not " +
                    std::to_string(expected));
  }
}

void check_dtype(const char* kernel, const Operand& o, DType expected) {
  if (o.view.dtype != expected) {
    bad(kernel, std::string(o.name) + " is " + dtype_name(o.view.dtype) + ", not " + dtype_name(expected));
  }
}

// The data dtype (that of the first operand) must be f32, f16 or bf16 and
// shared by all; every operand in one place, aligned on a device.
DType check_data(const char* kernel, std::initializer_list<Operand> data, std::initializer_list<Operand> others) {
  const Operand& first = *data.begin();
  const DType dtype = first.view.dtype;
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    raise(DT_ERR_UNSUPPORTED, std::string(kernel) + ": " + first.name + " is " + dtype_name(dtype) +
                                  "; f32, f16 or bf16 only");
  }
  for (const Operand& o : data) check_dtype(kernel, o, dtype);
  for (std::initializer_list<Operand> group : {data, others}) {
    for (const Operand& o : group) {
      if (!same_place(o.view, first.view)) {
        bad(kernel, std::string(o.name) + " is " + place_name(o.view) + " and " + first.name + " " +
                        place_name(first.view));
      }
      check_device_alignment(o.view, o.name);
    }
  }
  return dtype;
}

void check_shape(const char* kernel, RowShape shape) {
  if (shape.rows < 0 || shape.cols < 0) {
    bad(kernel, "rows " + std::to_string(shape.rows) + " and cols " + std::to_string(shape.cols) +
                    " must not be negative");
  }
}

std::int64_t elements(RowShape shape) { return shape.rows * shape.cols; }

// Norms divide by the row's length.
void check_columns(const char* kernel, RowShape shape) {
  if (shape.cols == 0) bad(kernel, "rows of 0 columns have no norm");
}

void check_eps(const char* kernel, float eps) {
  if (!(eps > 0.0f)) bad(kernel, "eps = " + std::to_string(eps) + " must be positive");
}

// The arguments of gather_rows and scatter_add_rows, checked.
IndexedRowsArgs indexed_rows_args(const char* kernel, std::int64_t cols, const TensorView& table,
                                  const TensorView& indices, const TensorView& rows) {
  if (cols <= 0) bad(kernel, "cols = " + std::to_string(cols) + " must be positive");
  IndexedRowsArgs a;
  a.dtype = check_data(kernel, {{"table", table}, {"rows", rows}}, {{"indices", indices}});
  if (indices.dtype != DType::i32 && indices.dtype != DType::i64) {
    bad(kernel, std::string("indices are ") + dtype_name(indices.dtype) + "; i32 or i64 only");
  }
  if (table.count % cols != 0) {
    bad(kernel, "table holds " + std::to_string(table.count) + " elements, not whole rows of " +
                    std::to_string(cols));
  }
  check_count(kernel, {"rows", rows}, indices.count * cols);
  a.index_dtype = indices.dtype;
  a.table_rows = table.count / cols;
  a.cols = cols;
  a.count = indices.count;
  a.indices = indices.data;
  a.table = table.data;
  a.rows = rows.data;
  return a;
}

}  // namespace

void softmax(RowShape shape, const TensorView& x, const TensorView& y, const TensorView& lse) {
  const char* kernel = "softmax";
  check_shape(kernel, shape);
  SoftmaxArgs a{shape, check_data(kernel, {{"x", x}, {"y", y}}, {{"lse", lse}}), x.data, y.data, nullptr};
  check_count(kernel, {"x", x}, elements(shape));
  check_count(kernel, {"y", y}, elements(shape));
  check_count(kernel, {"lse", lse}, shape.rows);
  check_dtype(kernel, {"lse", lse}, DType::f32);
  a.lse = static_cast<float*>(lse.data);
  run(y, a, cpu::softmax, DTRAIN_CUDA_KERNEL(softmax));
}

void softmax_backward(RowShape shape, const TensorView& y, const TensorView& dy, const TensorView& dx) {
  const char* kernel = "softmax_backward";
  check_shape(kernel, shape);
  const SoftmaxBackwardArgs a{shape, check_data(kernel, {{"y", y}, {"dy", dy}, {"dx", dx}}, {}), y.data, dy.data,
                              dx.data};
  for (const Operand& o : {Operand{"y", y}, Operand{"dy", dy}, Operand{"dx", dx}}) {
    check_count(kernel, o, elements(shape));
  }
  run(dx, a, cpu::softmax_backward, DTRAIN_CUDA_KERNEL(softmax_backward));
}

void top_k(RowShape shape, std::int64_t k, const TensorView& x, const TensorView& values, const TensorView& indices) {
  const char* kernel = "top_k";
  check_shape(kernel, shape);
  if (k <= 0 || k > shape.cols) {
    bad(kernel, "k = " + std::to_string(k) + " is outside 1.." + std::to_string(shape.cols));
  }
  TopKArgs a;
  a.shape = shape;
  a.k = k;
  a.dtype = check_data(kernel, {{"x", x}, {"values", values}}, {{"indices", indices}});
  check_count(kernel, {"x", x}, elements(shape));
  check_count(kernel, {"values", values}, shape.rows * k);
  check_count(kernel, {"indices", indices}, shape.rows * k);
  check_dtype(kernel, {"indices", indices}, DType::i64);
  a.x = x.data;
  a.values = values.data;
  a.indices = static_cast<std::int64_t*>(indices.data);
  run(values, a, cpu::top_k, DTRAIN_CUDA_KERNEL(top_k));
}

void activation_forward(Activation kind, const TensorView& x, const TensorView& y) {
  const char* kernel = "activation_forward";
  ActivationArgs a;
  a.kind = kind;
  a.dtype = check_data(kernel, {{"x", x}, {"y", y}}, {});
  check_count(kernel, {"y", y}, x.count);
  a.count = x.count;
  a.x = x.data;
  a.out = y.data;
  run(y, a, cpu::activation_forward, DTRAIN_CUDA_KERNEL(activation_forward));
}

void activation_backward(Activation kind, const TensorView& x, const TensorView& dy, const TensorView& dx) {
  const char* kernel = "activation_backward";
  ActivationArgs a;
  a.kind = kind;
  a.dtype = check_data(kernel, {{"x", x}, {"dy", dy}, {"dx", dx}}, {});
  check_count(kernel, {"dy", dy}, x.count);
  check_count(kernel, {"dx", dx}, x.count);
  a.count = x.count;
  a.x = x.data;
  a.dy = dy.data;
  a.out = dx.data;
  run(dx, a, cpu::activation_backward, DTRAIN_CUDA_KERNEL(activation_backward));
}

namespace {

// Layer norm when beta (and mean) are given, RMS norm otherwise.
void norm_forward(const char* kernel, RowShape shape, float eps, const TensorView& x, const TensorView& gamma,
                  const TensorView* beta, const TensorView& y, const TensorView* mean, const TensorView& rstd) {
  check_shape(kernel, shape);
  check_columns(kernel, shape);
  check_eps(kernel, eps);
  NormArgs a;
  a.shape = shape;
  a.eps = eps;
  a.dtype = beta != nullptr ? check_data(kernel, {{"x", x}, {"gamma", gamma}, {"beta", *beta}, {"y", y}},
                                         {{"mean", *mean}, {"rstd", rstd}})
                            : check_data(kernel, {{"x", x}, {"gamma", gamma}, {"y", y}}, {{"rstd", rstd}});
  check_count(kernel, {"x", x}, elements(shape));
  check_count(kernel, {"y", y}, elements(shape));
  check_count(kernel, {"gamma", gamma}, shape.cols);
  check_count(kernel, {"rstd", rstd}, shape.rows);
  check_dtype(kernel, {"rstd", rstd}, DType::f32);
  if (beta != nullptr) {
    check_count(kernel, {"beta", *beta}, shape.cols);
    check_count(kernel, {"mean", *mean}, shape.rows);
    check_dtype(kernel, {"mean", *mean}, DType::f32);
    a.beta = beta->data;
    a.mean = static_cast<float*>(mean->data);
  }
  a.x = x.data;
  a.gamma = gamma.data;
  a.y = y.data;
  a.rstd = static_cast<float*>(rstd.data);
  run(y, a, cpu::norm_forward, DTRAIN_CUDA_KERNEL(norm_forward));
}

void norm_backward(const char* kernel, RowShape shape, const TensorView& x, const TensorView& gamma,
                   const TensorView& dy, const TensorView* mean, const TensorView& rstd, const TensorView& dx,
                   const TensorView& dgamma, const TensorView* dbeta) {
  check_shape(kernel, shape);
  check_columns(kernel, shape);
  NormBackwardArgs a;
  a.shape = shape;
  a.dtype = dbeta != nullptr
                ? check_data(kernel,
                             {{"x", x}, {"gamma", gamma}, {"dy", dy}, {"dx", dx}, {"dgamma", dgamma}, {"dbeta", *dbeta}},
                             {{"mean", *mean}, {"rstd", rstd}})
                : check_data(kernel, {{"x", x}, {"gamma", gamma}, {"dy", dy}, {"dx", dx}, {"dgamma", dgamma}},
                             {{"rstd", rstd}});
  for (const Operand& o : {Operand{"x", x}, Operand{"dy", dy}, Operand{"dx", dx}}) {
    check_count(kernel, o, elements(shape));
  }
  check_count(kernel, {"gamma", gamma}, shape.cols);
  check_count(kernel, {"dgamma", dgamma}, shape.cols);
  check_count(kernel, {"rstd", rstd}, shape.rows);
  check_dtype(kernel, {"rstd", rstd}, DType::f32);
  if (dbeta != nullptr) {
    check_count(kernel, {"dbeta", *dbeta}, shape.cols);
    check_count(kernel, {"mean", *mean}, shape.rows);
    check_dtype(kernel, {"mean", *mean}, DType::f32);
    a.mean = static_cast<const float*>(mean->data);
    a.dbeta = dbeta->data;
  }
  a.x = x.data;
  a.gamma = gamma.data;
  a.dy = dy.data;
  a.rstd = static_cast<const float*>(rstd.data);
  a.dx = dx.data;
  a.dgamma = dgamma.data;
  run(dx, a, cpu::norm_backward, DTRAIN_CUDA_KERNEL(norm_backward));
}

}  // namespace

void layer_norm_forward(RowShape shape, float eps, const TensorView& x, const TensorView& gamma,
                        const TensorView& beta, const TensorView& y, const TensorView& mean, const TensorView& rstd) {
  norm_forward("layer_norm_forward", shape, eps, x, gamma, &beta, y, &mean, rstd);
}

void layer_norm_backward(RowShape shape, const TensorView& x, const TensorView& gamma, const TensorView& dy,
                         const TensorView& mean, const TensorView& rstd, const TensorView& dx,
                         const TensorView& dgamma, const TensorView& dbeta) {
  norm_backward("layer_norm_backward", shape, x, gamma, dy, &mean, rstd, dx, dgamma, &dbeta);
}

void rms_norm_forward(RowShape shape, float eps, const TensorView& x, const TensorView& gamma, const TensorView& y,
                      const TensorView& rstd) {
  norm_forward("rms_norm_forward", shape, eps, x, gamma, nullptr, y, nullptr, rstd);
}

void rms_norm_backward(RowShape shape, const TensorView& x, const TensorView& gamma, const TensorView& dy,
                       const TensorView& rstd, const TensorView& dx, const TensorView& dgamma) {
  norm_backward("rms_norm_backward", shape, x, gamma, dy, nullptr, rstd, dx, dgamma, nullptr);
}

void gather_rows(std::int64_t cols, const TensorView& table, const TensorView& indices, const TensorView& rows) {
  const IndexedRowsArgs a = indexed_rows_args("gather_rows", cols, table, indices, rows);
  run(rows, a, cpu::gather_rows, DTRAIN_CUDA_KERNEL(gather_rows));
}

void scatter_add_rows(std::int64_t cols, const TensorView& rows, const TensorView& indices, const TensorView& table) {
  const IndexedRowsArgs a = indexed_rows_args("scatter_add_rows", cols, table, indices, rows);
  run(table, a, cpu::scatter_add_rows, DTRAIN_CUDA_KERNEL(scatter_add_rows));
}

namespace {

IndexedRowsArgs slice_args(const char* kernel, std::int64_t cols, std::int64_t first, const TensorView& table,
                           const TensorView& indices, const TensorView& rows) {
  IndexedRowsArgs a = indexed_rows_args(kernel, cols, table, indices, rows);
  a.slice = true;
  a.first = first;
  return a;
}

}  // namespace

void gather_slice_rows(std::int64_t cols, std::int64_t first, const TensorView& table, const TensorView& indices,
                       const TensorView& rows) {
  run(rows, slice_args("gather_slice_rows", cols, first, table, indices, rows), cpu::gather_rows,
      DTRAIN_CUDA_KERNEL(gather_rows));
}

void scatter_add_slice_rows(std::int64_t cols, std::int64_t first, const TensorView& rows, const TensorView& indices,
                            const TensorView& table) {
  run(table, slice_args("scatter_add_slice_rows", cols, first, table, indices, rows), cpu::scatter_add_rows,
      DTRAIN_CUDA_KERNEL(scatter_add_rows));
}

namespace {

// The operands of pair_rows_sum and its backward, checked: `rows` the table,
// `per_token` (out or d_out) tokens x cols, `weights` tokens * k or, where
// `weights_optional`, empty.
PairRowsArgs pair_rows_args(const char* kernel, std::int64_t k, std::int64_t cols, const TensorView& rows,
                            const TensorView& pair_rows, const TensorView& weights, bool weights_optional,
                            const Operand& per_token, std::initializer_list<Operand> others) {
  if (k <= 0 || cols <= 0) {
    bad(kernel, "k = " + std::to_string(k) + " and cols = " + std::to_string(cols) + " must be positive");
  }
  check_data(kernel, {{"rows", rows}, per_token}, {{"pair_rows", pair_rows}});
  check_dtype(kernel, {"rows", rows}, DType::f32);
  const bool weighted = !(weights_optional && weights.count == 0);
  for (const Operand& o : others) check_data(kernel, {{"rows", rows}, o}, {});
  if (weighted) check_data(kernel, {{"rows", rows}, {"weights", weights}}, {});
  check_dtype(kernel, {"pair_rows", pair_rows}, DType::i64);
  if (pair_rows.count % k != 0) {
    bad(kernel, "pair_rows holds " + std::to_string(pair_rows.count) + " elements, not whole tokens of k = " +
                    std::to_string(k));
  }
  if (rows.count % cols != 0) {
    bad(kernel, "rows holds " + std::to_string(rows.count) + " elements, not whole rows of " + std::to_string(cols));
  }
  PairRowsArgs a;
  a.tokens = pair_rows.count / k;
  a.k = k;
  a.cols = cols;
  a.table_rows = rows.count / cols;
  check_count(kernel, per_token, a.tokens * cols);
  if (weighted) {
    check_count(kernel, {"weights", weights}, pair_rows.count);
    a.weights = static_cast<const float*>(weights.data);
  }
  a.pair_rows = static_cast<const std::int64_t*>(pair_rows.data);
  a.rows = static_cast<const float*>(rows.data);
  return a;
}

}  // namespace

void pair_rows_sum(std::int64_t k, std::int64_t cols, const TensorView& rows, const TensorView& pair_rows,
                   const TensorView& weights, const TensorView& out) {
  PairRowsArgs a = pair_rows_args("pair_rows_sum", k, cols, rows, pair_rows, weights, true, {"out", out}, {});
  a.out = static_cast<float*>(out.data);
  run(out, a, cpu::pair_rows_sum, DTRAIN_CUDA_KERNEL(pair_rows_sum));
}

void pair_rows_sum_backward(std::int64_t k, std::int64_t cols, const TensorView& d_out, const TensorView& weights,
                            const TensorView& rows, const TensorView& pair_rows, const TensorView& d_rows,
                            const TensorView& d_weights) {
  const char* kernel = "pair_rows_sum_backward";
  PairRowsArgs a = pair_rows_args(kernel, k, cols, rows, pair_rows, weights, false, {"d_out", d_out},
                                  {{"d_rows", d_rows}, {"d_weights", d_weights}});
  check_count(kernel, {"d_rows", d_rows}, rows.count);
  check_count(kernel, {"d_weights", d_weights}, pair_rows.count);
  a.d_out = static_cast<const float*>(d_out.data);
  a.d_rows = static_cast<float*>(d_rows.data);
  a.d_weights = static_cast<float*>(d_weights.data);
  run(d_rows, a, cpu::pair_rows_sum_backward, DTRAIN_CUDA_KERNEL(pair_rows_sum_backward));
}

namespace {

// The logits (f32, rows x cols), targets (i32 or i64, rows) and per-row f32
// vectors of the cross-entropy kernels, all in one place.
LogitSlice check_cross_entropy(const char* kernel, RowShape shape, std::int64_t first, const TensorView& logits,
                               const TensorView& targets, std::initializer_list<Operand> per_row,
                               const Operand& matrix) {
  check_shape(kernel, shape);
  check_dtype(kernel, {"logits", logits}, DType::f32);
  check_data(kernel, {{"logits", logits}, matrix}, {{"targets", targets}});
  check_count(kernel, {"logits", logits}, elements(shape));
  check_count(kernel, matrix, elements(shape));
  if (targets.dtype != DType::i32 && targets.dtype != DType::i64) {
    bad(kernel, std::string("targets are ") + dtype_name(targets.dtype) + "; i32 or i64 only");
  }
  check_count(kernel, {"targets", targets}, shape.rows);
  for (const Operand& o : per_row) {
    check_dtype(kernel, o, DType::f32);
    check_count(kernel, o, shape.rows);
    if (!same_place(o.view, logits)) {
      bad(kernel, std::string(o.name) + " is " + place_name(o.view) + " and logits " + place_name(logits));
    }
    check_device_alignment(o.view, o.name);
  }
  return {shape, first, targets.dtype, targets.data, static_cast<const float*>(logits.data)};
}

float* floats(const TensorView& v) { return static_cast<float*>(v.data); }

}  // namespace

void cross_entropy_statistics(RowShape shape, std::int64_t first, const TensorView& logits,
                              const TensorView& targets, const TensorView& max, const TensorView& sum_exp,
                              const TensorView& target, const TensorView& sum) {
  CrossEntropyStatsArgs a;
  a.logits = check_cross_entropy("cross_entropy_statistics", shape, first, logits, targets,
                                 {{"max", max}, {"sum_exp", sum_exp}, {"target", target}, {"sum", sum}},
                                 {"logits", logits});
  a.max = floats(max);
  a.sum_exp = floats(sum_exp);
  a.target = floats(target);
  a.sum = floats(sum);
  run(max, a, cpu::cross_entropy_statistics, DTRAIN_CUDA_KERNEL(cross_entropy_statistics));
}

void cross_entropy_gradient(RowShape shape, std::int64_t first, std::int64_t vocab, float smoothing,
                            std::int64_t ignore_index, const TensorView& logits, const TensorView& targets,
                            const TensorView& lse, const TensorView& scale, const TensorView& dlogits) {
  const char* kernel = "cross_entropy_gradient";
  CrossEntropyGradArgs a;
  a.logits = check_cross_entropy(kernel, shape, first, logits, targets, {{"lse", lse}, {"scale", scale}},
                                 {"dlogits", dlogits});
  if (vocab <= 0) bad(kernel, "vocab = " + std::to_string(vocab) + " must be positive");
  a.vocab = vocab;
  a.smoothing = smoothing;
  a.ignore_index = ignore_index;
  a.lse = floats(lse);
  a.scale = floats(scale);
  a.dz = floats(dlogits);
  run(dlogits, a, cpu::cross_entropy_gradient, DTRAIN_CUDA_KERNEL(cross_entropy_gradient));
}

}  // namespace dtrain::device
