// Tensor parallelism (dtrain/tp.h): DLTensors become checked matrices in one
// place (host memory or one CUDA device) here; the layers live in
// core/parallel/tp.
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
#include "placed_call.hpp"

using dtrain::TensorView;
using dtrain::capi::entry;
using dtrain::capi::require;
namespace tp = dtrain::parallel::tp;

namespace {

[[noreturn]] void invalid(const std::string& message) { dtrain::raise(DT_ERR_INVALID_ARGUMENT, message); }

// One call's tensors, as the layers take them, and its group over `tp`.
class Call {
 public:
  explicit Call(dt_comm* comm) : comm_(comm ? require(comm, "tp")->impl.get() : nullptr), placed_(comm_) {}

  TensorView view(const DLTensor* tensor, const char* name) { return placed_.view(tensor, name); }

  // A tensor of two or more dimensions as rows x cols (cols: the last dimension).
  tp::Matrix matrix(const DLTensor* tensor, const char* name) {
    const TensorView v = view(tensor, name);
    if (tensor->ndim < 2) {
      invalid(std::string(name) + " has " + std::to_string(tensor->ndim) + " dimensions; it needs at least 2");
    }
    const std::int64_t cols = tensor->shape[tensor->ndim - 1];
    return {v, cols == 0 ? 0 : v.count / cols, cols};
  }

  // A weight for sharding: 1-D tensors are a column of rows (a bias), or a
  // single row when split by columns.
  tp::Matrix weight(const DLTensor* tensor, const char* name, tp::ShardKind kind) {
    if (require(tensor, name)->ndim != 1) return matrix(tensor, name);
    const TensorView v = view(tensor, name);
    return kind == tp::ShardKind::columns ? tp::Matrix{v, 1, v.count} : tp::Matrix{v, v.count, 1};
  }

  // An optional matrix or view: NULL stays absent.
  std::optional<tp::Matrix> optional_matrix(const DLTensor* tensor, const char* name) {
    if (tensor == nullptr) return std::nullopt;
    return matrix(tensor, name);
  }
  std::optional<TensorView> optional_view(const DLTensor* tensor, const char* name) {
    if (tensor == nullptr) return std::nullopt;
    return view(tensor, name);
  }

  dtrain::device::Queue& queue() { return placed_.queue(); }
  // Once every tensor is parsed: the group works on their Queue.
  tp::Group group() { return tp::Group(*require(comm_, "tp"), placed_.queue()); }
  void finish() { placed_.finish(); }

 private:
  dtrain::comm::Communicator* comm_;
  dtrain::capi::PlacedCall placed_;
};

// A tp call's body on its Call over `comm` (NULL for dt_tp_shard, which
// communicates nothing), returning once its work has run.
template <typename Body>
dt_status tp_entry(dt_comm* comm, Body&& body) {
  return entry([&] {
    Call call(comm);
    body(call);
    call.finish();
  });
}

tp::LinearFlags linear_flags(unsigned flags) {
  const unsigned known = DT_TP_SEQUENCE_PARALLEL | DT_TP_GATHER_OUTPUT | DT_TP_ACCUMULATE;
  if (flags & ~known) invalid("flags " + std::to_string(flags) + " has bits that are not DT_TP_* flags");
  return {(flags & DT_TP_SEQUENCE_PARALLEL) != 0, (flags & DT_TP_GATHER_OUTPUT) != 0, (flags & DT_TP_ACCUMULATE) != 0};
}

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
  return tp_entry(comm, [&](Call& call) {
    const tp::LinearFlags f = linear_flags(flags);
    const tp::Matrix in = call.matrix(x, "x"), w = call.matrix(weight, "weight");
    const auto b = call.optional_view(bias, "bias");
    const tp::Matrix out = call.matrix(y, "y");
    tp::Group group = call.group();
    layer(group, in, w, pointer_or_null(b), out, f);
  });
}

dt_status linear_backward(LinearBackward layer, dt_comm* comm, const DLTensor* x, const DLTensor* weight,
                          const DLTensor* dy, DLTensor* dx, DLTensor* dweight, DLTensor* dbias, unsigned flags) {
  return tp_entry(comm, [&](Call& call) {
    const tp::LinearFlags f = linear_flags(flags);
    const tp::Matrix in = call.matrix(x, "x"), w = call.matrix(weight, "weight"), grad_y = call.matrix(dy, "dy");
    const auto grad_x = call.optional_matrix(dx, "dx");
    const auto grad_w = call.optional_matrix(dweight, "dweight");
    const auto grad_b = call.optional_view(dbias, "dbias");
    tp::Group group = call.group();
    layer(group, in, w, grad_y, pointer_or_null(grad_x), pointer_or_null(grad_w), pointer_or_null(grad_b), f);
  });
}

// Either half of a region: `from` -> `to`, named as the header names them.
using RegionHalf = void (*)(tp::Group&, tp::Region, const tp::Matrix&, const tp::Matrix&);

dt_status region_half(RegionHalf half, dt_comm* comm, dt_tp_region region, const DLTensor* from,
                      const char* from_name, DLTensor* to, const char* to_name) {
  return tp_entry(comm, [&](Call& call) {
    const tp::Region r = region_of(region);
    const tp::Matrix in = call.matrix(from, from_name), out = call.matrix(to, to_name);
    tp::Group group = call.group();
    half(group, r, in, out);
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_tp_region_forward(dt_comm* comm, dt_tp_region region, const DLTensor* input,
                                      DLTensor* output) {
  return region_half(tp::region_forward, comm, region, input, "input", output, "output");
}

DT_API dt_status dt_tp_region_backward(dt_comm* comm, dt_tp_region region, const DLTensor* grad_out,
                                       DLTensor* grad_in) {
  return region_half(tp::region_backward, comm, region, grad_out, "grad_out", grad_in, "grad_in");
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
  return tp_entry(comm, [&](Call& call) {
    const tp::LinearFlags f = linear_flags(flags);
    if (f.gather_output || f.accumulate) invalid("the embedding's forward takes only DT_TP_SEQUENCE_PARALLEL");
    const tp::Matrix t = call.matrix(table, "table");
    const TensorView i = call.view(ids, "ids");
    const tp::Matrix out = call.matrix(output, "output");
    tp::Group group = call.group();
    tp::embedding_forward(group, t, i, out, f.sequence_parallel);
  });
}

DT_API dt_status dt_tp_embedding_backward(dt_comm* comm, const DLTensor* ids, const DLTensor* dout,
                                          DLTensor* dtable, unsigned flags) {
  return tp_entry(comm, [&](Call& call) {
    const tp::LinearFlags f = linear_flags(flags);
    if (f.gather_output) invalid("the embedding takes DT_TP_SEQUENCE_PARALLEL and DT_TP_ACCUMULATE only");
    const TensorView i = call.view(ids, "ids");
    const tp::Matrix grad = call.matrix(dout, "dout"), grad_table = call.matrix(dtable, "dtable");
    tp::Group group = call.group();
    tp::embedding_backward(group, i, grad, grad_table, f.sequence_parallel, f.accumulate);
  });
}

DT_API dt_status dt_tp_cross_entropy_forward(dt_comm* comm, const DLTensor* logits, const DLTensor* targets,
                                             DLTensor* loss, DLTensor* lse, float label_smoothing,
                                             int64_t ignore_index) {
  return tp_entry(comm, [&](Call& call) {
    const tp::Matrix z = call.matrix(logits, "logits");
    const TensorView t = call.view(targets, "targets"), l = call.view(loss, "loss"), s = call.view(lse, "lse");
    tp::Group group = call.group();
    tp::cross_entropy_forward(group, z, t, l, s, {label_smoothing, ignore_index});
  });
}

DT_API dt_status dt_tp_cross_entropy_backward(dt_comm* comm, const DLTensor* logits, const DLTensor* targets,
                                              const DLTensor* lse, const DLTensor* dloss, DLTensor* dlogits,
                                              float label_smoothing, int64_t ignore_index) {
  return tp_entry(comm, [&](Call& call) {
    const tp::Matrix z = call.matrix(logits, "logits");
    const TensorView t = call.view(targets, "targets"), s = call.view(lse, "lse"), d = call.view(dloss, "dloss");
    const tp::Matrix dz = call.matrix(dlogits, "dlogits");
    tp::Group group = call.group();
    tp::cross_entropy_backward(group, z, t, s, d, dz, {label_smoothing, ignore_index});
  });
}

DT_API dt_status dt_tp_shard(dt_tp_shard_kind kind, const DLTensor* full, DLTensor* local, int rank, int size,
                             int q_heads, int kv_heads) {
  return tp_entry(nullptr, [&](Call& call) {
    const tp::ShardKind k = shard_kind_of(kind);
    const tp::Matrix whole = call.weight(full, "full", k), part = call.weight(local, "local", k);
    tp::shard(call.queue(), k, whole, part, rank, size, {q_heads, kv_heads});
  });
}

DT_API dt_status dt_tp_unshard(dt_comm* comm, dt_tp_shard_kind kind, const DLTensor* local, DLTensor* full,
                               int q_heads, int kv_heads) {
  return tp_entry(comm, [&](Call& call) {
    const tp::ShardKind k = shard_kind_of(kind);
    const tp::Matrix part = call.weight(local, "local", k), whole = call.weight(full, "full", k);
    tp::Group group = call.group();
    tp::unshard(group, k, part, whole, {q_heads, kv_heads});
  });
}

}  // extern "C"
