// Tensor parallelism (dtrain/tp.h): DLTensors become checked host matrices
// here; the layers live in core/parallel/tp.
#include <optional>
#include <string>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "parallel/tp/linear.hpp"
#include "parallel/tp/regions.hpp"
#include "parallel/tp/shards.hpp"
#include "parallel/tp/vocab.hpp"

using dtrain::TensorView;
using dtrain::capi::entry;
using dtrain::capi::require;
namespace tp = dtrain::parallel::tp;

namespace {

[[noreturn]] void invalid(const std::string& message) { dtrain::raise(DT_ERR_INVALID_ARGUMENT, message); }

TensorView view_of(const DLTensor* tensor, const char* name) { return dtrain::check_host_tensor(tensor, name); }

// A tensor of two or more dimensions as rows x cols (cols: the last dimension).
tp::Matrix matrix_of(const DLTensor* tensor, const char* name) {
  const TensorView view = view_of(tensor, name);
  if (tensor->ndim < 2) {
    invalid(std::string(name) + " has " + std::to_string(tensor->ndim) + " dimensions; it needs at least 2");
  }
  const std::int64_t cols = tensor->shape[tensor->ndim - 1];
  return {view, cols == 0 ? 0 : view.count / cols, cols};
}

// A weight for sharding: 1-D tensors are a column of rows (a bias), or a
// single row when split by columns.
tp::Matrix weight_of(const DLTensor* tensor, const char* name, tp::ShardKind kind) {
  if (require(tensor, name)->ndim != 1) return matrix_of(tensor, name);
  const TensorView view = view_of(tensor, name);
  return kind == tp::ShardKind::columns ? tp::Matrix{view, 1, view.count} : tp::Matrix{view, view.count, 1};
}

tp::LinearFlags linear_flags(unsigned flags) {
  const unsigned known = DT_TP_SEQUENCE_PARALLEL | DT_TP_GATHER_OUTPUT | DT_TP_ACCUMULATE;
  if (flags & ~known) invalid("flags " + std::to_string(flags) + " has bits that are not DT_TP_* flags");
  return {(flags & DT_TP_SEQUENCE_PARALLEL) != 0, (flags & DT_TP_GATHER_OUTPUT) != 0, (flags & DT_TP_ACCUMULATE) != 0};
}

tp::Group group_of(dt_comm* comm) { return tp::Group(*require(comm, "tp")->impl); }

// Enums from C are read as raw ints (base/enum_value.hpp) and checked.
tp::Region region_of(const dt_tp_region& region) {
  const int raw = dtrain::enum_value(region);
  if (raw < DT_TP_COPY || raw > DT_TP_SEQ_REDUCE_SCATTER) {
    invalid("region " + std::to_string(raw) + " is not a dt_tp_region");
  }
  return static_cast<tp::Region>(raw);
}

tp::ShardKind shard_kind_of(const dt_tp_shard_kind& kind) {
  const int raw = dtrain::enum_value(kind);
  if (raw < DT_TP_SHARD_ROWS || raw > DT_TP_SHARD_QKV) {
    invalid("kind " + std::to_string(raw) + " is not a dt_tp_shard_kind");
  }
  return static_cast<tp::ShardKind>(raw);
}

// An optional tensor: NULL stays absent.
template <typename T, typename Parse>
std::optional<T> optional_of(const DLTensor* tensor, const char* name, Parse parse) {
  if (tensor == nullptr) return std::nullopt;
  return parse(tensor, name);
}

template <typename T>
const T* pointer_or_null(const std::optional<T>& value) {
  return value ? &*value : nullptr;
}

// The column- and row-parallel layers take the same arguments: one body
// each for forward and backward, given the layer.
using LinearForward = void (*)(tp::Group&, const tp::Matrix&, const tp::Matrix&, const TensorView*,
                               const tp::Matrix&, tp::LinearFlags);
using LinearBackward = void (*)(tp::Group&, const tp::Matrix&, const tp::Matrix&, const tp::Matrix&,
                                const tp::Matrix*, const tp::Matrix*, const TensorView*, tp::LinearFlags);

dt_status linear_forward(LinearForward layer, dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                         const DLTensor* bias, DLTensor* y, unsigned flags) {
  return entry([&] {
    tp::Group group = group_of(comm);
    const auto b = optional_of<TensorView>(bias, "bias", view_of);
    layer(group, matrix_of(x, "x"), matrix_of(weight, "weight"), pointer_or_null(b), matrix_of(y, "y"),
          linear_flags(flags));
  });
}

dt_status linear_backward(LinearBackward layer, dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                          const DLTensor* dy, DLTensor* dx, DLTensor* dweight, DLTensor* dbias, unsigned flags) {
  return entry([&] {
    tp::Group group = group_of(comm);
    const auto grad_x = optional_of<tp::Matrix>(dx, "dx", matrix_of);
    const auto grad_w = optional_of<tp::Matrix>(dweight, "dweight", matrix_of);
    const auto grad_b = optional_of<TensorView>(dbias, "dbias", view_of);
    layer(group, matrix_of(x, "x"), matrix_of(weight, "weight"), matrix_of(dy, "dy"), pointer_or_null(grad_x),
          pointer_or_null(grad_w), pointer_or_null(grad_b), linear_flags(flags));
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_tp_region_forward(dt_comm* comm, dt_tp_region region, const DLTensor* input,
                                      DLTensor* output) {
  return entry([&] {
    tp::Group group = group_of(comm);
    tp::region_forward(group, region_of(region), matrix_of(input, "input"), matrix_of(output, "output"));
  });
}

DT_API dt_status dt_tp_region_backward(dt_comm* comm, dt_tp_region region, const DLTensor* grad_out,
                                       DLTensor* grad_in) {
  return entry([&] {
    tp::Group group = group_of(comm);
    tp::region_backward(group, region_of(region), matrix_of(grad_out, "grad_out"), matrix_of(grad_in, "grad_in"));
  });
}

DT_API dt_status dt_tp_column_linear_forward(dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                                             const DLTensor* bias, DLTensor* y, unsigned flags) {
  return linear_forward(tp::column_forward, comm, x, weight, bias, y, flags);
}

DT_API dt_status dt_tp_column_linear_backward(dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                                              const DLTensor* dy, DLTensor* dx, DLTensor* dweight, DLTensor* dbias,
                                              unsigned flags) {
  return linear_backward(tp::column_backward, comm, x, weight, dy, dx, dweight, dbias, flags);
}

DT_API dt_status dt_tp_row_linear_forward(dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                                          const DLTensor* bias, DLTensor* y, unsigned flags) {
  return linear_forward(tp::row_forward, comm, x, weight, bias, y, flags);
}

DT_API dt_status dt_tp_row_linear_backward(dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                                           const DLTensor* dy, DLTensor* dx, DLTensor* dweight, DLTensor* dbias,
                                           unsigned flags) {
  return linear_backward(tp::row_backward, comm, x, weight, dy, dx, dweight, dbias, flags);
}

DT_API dt_status dt_tp_embedding_forward(dt_comm* comm, const DLTensor* table, const DLTensor* ids,
                                         DLTensor* output, unsigned flags) {
  return entry([&] {
    tp::Group group = group_of(comm);
    const tp::LinearFlags f = linear_flags(flags);
    if (f.gather_output || f.accumulate) invalid("the embedding's forward takes only DT_TP_SEQUENCE_PARALLEL");
    tp::embedding_forward(group, matrix_of(table, "table"), view_of(ids, "ids"), matrix_of(output, "output"),
                          f.sequence_parallel);
  });
}

DT_API dt_status dt_tp_embedding_backward(dt_comm* comm, const DLTensor* ids, const DLTensor* dout,
                                          DLTensor* dtable, unsigned flags) {
  return entry([&] {
    tp::Group group = group_of(comm);
    const tp::LinearFlags f = linear_flags(flags);
    if (f.gather_output) invalid("the embedding takes DT_TP_SEQUENCE_PARALLEL and DT_TP_ACCUMULATE only");
    tp::embedding_backward(group, view_of(ids, "ids"), matrix_of(dout, "dout"), matrix_of(dtable, "dtable"),
                           f.sequence_parallel, f.accumulate);
  });
}

DT_API dt_status dt_tp_cross_entropy_forward(dt_comm* comm, const DLTensor* logits, const DLTensor* targets,
                                             DLTensor* loss, DLTensor* lse, float label_smoothing,
                                             int64_t ignore_index) {
  return entry([&] {
    tp::Group group = group_of(comm);
    tp::cross_entropy_forward(group, matrix_of(logits, "logits"), view_of(targets, "targets"), view_of(loss, "loss"),
                              view_of(lse, "lse"), {label_smoothing, ignore_index});
  });
}

DT_API dt_status dt_tp_cross_entropy_backward(dt_comm* comm, const DLTensor* logits, const DLTensor* targets,
                                              const DLTensor* lse, const DLTensor* dloss, DLTensor* dlogits,
                                              float label_smoothing, int64_t ignore_index) {
  return entry([&] {
    tp::Group group = group_of(comm);
    tp::cross_entropy_backward(group, matrix_of(logits, "logits"), view_of(targets, "targets"), view_of(lse, "lse"),
                               view_of(dloss, "dloss"), matrix_of(dlogits, "dlogits"),
                               {label_smoothing, ignore_index});
  });
}

DT_API dt_status dt_tp_shard(dt_tp_shard_kind kind, const DLTensor* full, DLTensor* local, int rank, int size,
                             int q_heads, int kv_heads) {
  return entry([&] {
    const tp::ShardKind k = shard_kind_of(kind);
    tp::shard(k, weight_of(full, "full", k), weight_of(local, "local", k), rank, size, {q_heads, kv_heads});
  });
}

DT_API dt_status dt_tp_unshard(dt_comm* comm, dt_tp_shard_kind kind, const DLTensor* local, DLTensor* full,
                               int q_heads, int kv_heads) {
  return entry([&] {
    tp::Group group = group_of(comm);
    const tp::ShardKind k = shard_kind_of(kind);
    tp::unshard(group, k, weight_of(local, "local", k), weight_of(full, "full", k), {q_heads, kv_heads});
  });
}

}  // extern "C"
