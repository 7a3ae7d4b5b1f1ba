// Context parallelism (dtrain/cp.h). The attention calls run where their
// tensors are (PlacedCall: host memory or one CUDA device); the layout
// helpers take host memory. The ring and all-to-all calls check their
// arguments inside the agreement the core runs first, so that a rank
// refusing its own arguments still tells the others instead of leaving them
// waiting.
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "arguments.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "placed_call.hpp"
#include "parallel/cp/agreement.hpp"
#include "parallel/cp/arguments.hpp"
#include "parallel/cp/float32_copy.hpp"
#include "device/attention.hpp"
#include "parallel/cp/layout.hpp"
#include "parallel/cp/ring.hpp"
#include "parallel/cp/shard.hpp"
#include "parallel/cp/ulysses.hpp"
#include "dtrain/cp.h"

using dtrain::DType;
using dtrain::capi::entry;
using dtrain::capi::PlacedCall;
using Role = dtrain::parallel::cp::Float32Copy::Role;
using dtrain::capi::require;
using namespace dtrain::parallel::cp;

namespace {

[[noreturn]] void invalid(const std::string& message) { dtrain::raise(DT_ERR_INVALID_ARGUMENT, message); }

// `tensor` as a host array of `dtype` and `ndim` dimensions.
PlacedArray host_array(const DLTensor* tensor, const char* name, DType dtype, std::size_t ndim) {
  return placed_array(dtrain::capi::host_tensor(tensor, name), name, dtype, ndim);
}

// `tensor`, where the call's tensors are, as an array of `dtype` and `ndim`
// dimensions.
PlacedArray array(PlacedCall& call, const DLTensor* tensor, const char* name, DType dtype, std::size_t ndim) {
  return placed_array(dtrain::with_layout(tensor, call.view(tensor, name)), name, dtype, ndim);
}

// The dtype the attention's data tensors share: that of `first` (q, or o
// for the merge), which must be float32, float16 or bfloat16. A NULL
// `first` is refused when it is parsed.
DType data_dtype(const DLTensor* first, const char* name) {
  if (first == nullptr) return DType::f32;
  const std::optional<DType> dtype = dtrain::dtype_from_dlpack(first->dtype);
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    invalid(std::string(name) + " is " + (dtype ? dtrain::dtype_name(*dtype) : "of no dtype libdtrain knows") +
            "; attention takes float32, float16 or bfloat16");
  }
  return *dtype;
}

// q, k and v, parsed in order, and checked together.
AttentionInputs attention_inputs(PlacedCall& call, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                 int causal, double scale) {
  const DType dtype = data_dtype(q, "q");
  PlacedArray queries = array(call, q, "q", dtype, 3);
  PlacedArray keys = array(call, k, "k", dtype, 3);
  PlacedArray values = array(call, v, "v", dtype, 3);
  return check_attention_inputs(std::move(queries), std::move(keys), std::move(values), causal, scale);
}

struct BlockOutputs {
  PlacedArray o, lse;
};

BlockOutputs check_outputs(PlacedCall& call, const AttentionShape& shape, DType dtype, DLTensor* o, DLTensor* lse) {
  BlockOutputs out{array(call, o, "o", dtype, 3), array(call, lse, "lse", DType::f32, 2)};
  expect_shape(out.o, output_shape(shape));
  expect_shape(out.lse, lse_shape(shape));
  return out;
}

// A layout, and queries, keys and values of one local length that the
// layout can hold on a group of `cp_size`; for the all-to-all, head counts
// it can split.
struct ShardedInputs {
  SequenceLayout layout = SequenceLayout::contiguous;
  AttentionInputs in;
};

enum class Strategy { ring, all_to_all };

ShardedInputs check_sharded_inputs(PlacedCall& call, Strategy strategy, int cp_size, int layout, int causal,
                                   double scale, const DLTensor* q, const DLTensor* k, const DLTensor* v) {
  ShardedInputs sharded{layout_from(layout), attention_inputs(call, q, k, v, causal, scale)};
  const AttentionShape& shape = sharded.in.shape;
  if (shape.kv_rows != shape.q_rows) {
    invalid("k and v have " + std::to_string(shape.kv_rows) + " rows but q has " + std::to_string(shape.q_rows) +
            "; each rank passes its shard of one sequence");
  }
  check_local_rows(sharded.layout, cp_size, shape.q_rows);
  if (strategy == Strategy::all_to_all && (shape.q_heads % cp_size != 0 || shape.kv_heads % cp_size != 0)) {
    invalid("all-to-all attention splits the heads between the " + std::to_string(cp_size) + " ranks, but q has " +
            std::to_string(shape.q_heads) + " and k and v " + std::to_string(shape.kv_heads));
  }
  return sharded;
}

// Runs `check` (returning the checked arguments, a struct with a `sharded`
// member, or throwing; it places its tensors through `call`) and then the
// agreement every rank takes part in, whether or not its own check passed;
// returns the arguments agreed on.
template <typename Check>
auto checked_together(dtrain::comm::Communicator& comm, PlacedCall& call, const char* context, Check&& check) {
  std::optional<decltype(check())> args;
  std::exception_ptr failure;
  try {
    args.emplace(check());
  } catch (...) {
    failure = std::current_exception();
  }
  const ShardedInputs agreed = args ? args->sharded : ShardedInputs{};
  agree_on_attention(comm, context, agreed.layout, agreed.in.shape, call.queue().memory() == dtrain::Memory::cuda,
                     failure);
  return std::move(*args);
}

dt_status sharded_forward(const char* context, Strategy strategy, ShardedForward run, dt_comm* comm, int layout,
                          int causal, double scale, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                          DLTensor* o, DLTensor* lse) {
  return entry([&] {
    auto& group = *require(comm, "comm")->impl;
    PlacedCall call(&group);
    struct Args {
      ShardedInputs sharded;
      BlockOutputs out;
    };
    const Args args = checked_together(group, call, context, [&] {
      Args checked{check_sharded_inputs(call, strategy, group.size(), layout, causal, scale, q, k, v), {}};
      checked.out = check_outputs(call, checked.sharded.in.shape, checked.sharded.in.q.view.dtype, o, lse);
      const AttentionInputs& in = checked.sharded.in;
      refuse_overlap({&checked.out.o, &checked.out.lse}, {&in.q, &in.k, &in.v});
      return checked;
    });
    const AttentionInputs& in = args.sharded.in;
    auto& queue = call.queue();
    const Float32Copy q32(queue, in.q.view, Role::input), k32(queue, in.k.view, Role::input),
        v32(queue, in.v.view, Role::input);
    Float32Copy o32(queue, args.out.o.view, Role::output);
    run(group, queue, args.sharded.layout, in.shape, q32.data(), k32.data(), v32.data(), o32.data(),
        args.out.lse.data<float>());
    o32.round_back();
    call.finish();
  });
}

dt_status sharded_backward(const char* context, Strategy strategy, ShardedBackward run, dt_comm* comm, int layout,
                           int causal, double scale, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                           const DLTensor* o, const DLTensor* lse, const DLTensor* d_o, DLTensor* dq, DLTensor* dk,
                           DLTensor* dv) {
  return entry([&] {
    auto& group = *require(comm, "comm")->impl;
    PlacedCall call(&group);
    struct Args {
      ShardedInputs sharded;
      PlacedArray o, lse, d_o, dq, dk, dv;
    };
    const Args args = checked_together(group, call, context, [&] {
      Args checked{check_sharded_inputs(call, strategy, group.size(), layout, causal, scale, q, k, v),
                   {}, {}, {}, {}, {}, {}};
      const AttentionInputs& in = checked.sharded.in;
      const DType dtype = in.q.view.dtype;
      checked.o = array(call, o, "o", dtype, 3);
      checked.lse = array(call, lse, "lse", DType::f32, 2);
      checked.d_o = array(call, d_o, "d_o", dtype, 3);
      checked.dq = array(call, dq, "dq", dtype, 3);
      checked.dk = array(call, dk, "dk", dtype, 3);
      checked.dv = array(call, dv, "dv", dtype, 3);
      for (const PlacedArray* like_q : {&checked.o, &checked.d_o, &checked.dq}) expect_shape(*like_q, in.q.shape);
      expect_shape(checked.lse, lse_shape(in.shape));
      expect_shape(checked.dk, in.k.shape);
      expect_shape(checked.dv, in.k.shape);
      refuse_overlap({&checked.dq, &checked.dk, &checked.dv},
                     {&in.q, &in.k, &in.v, &checked.o, &checked.lse, &checked.d_o});
      return checked;
    });
    const AttentionInputs& in = args.sharded.in;
    auto& queue = call.queue();
    const Float32Copy q32(queue, in.q.view, Role::input), k32(queue, in.k.view, Role::input),
        v32(queue, in.v.view, Role::input), o32(queue, args.o.view, Role::input),
        d_o32(queue, args.d_o.view, Role::input);
    Float32Copy dq32(queue, args.dq.view, Role::output), dk32(queue, args.dk.view, Role::output),
        dv32(queue, args.dv.view, Role::output);
    run(group, queue, args.sharded.layout, in.shape,
        {q32.data(), k32.data(), v32.data(), o32.data(), args.lse.data<const float>(), d_o32.data()}, dq32.data(),
        dk32.data(), dv32.data());
    for (Float32Copy* gradient : {&dq32, &dk32, &dv32}) gradient->round_back();
    call.finish();
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_cp_positions(dt_cp_layout layout, int cp_size, int cp_rank, DLTensor* positions) {
  return entry([&] {
    const SequenceLayout checked = layout_from(dtrain::enum_value(layout));
    check_group(cp_size, cp_rank);
    const PlacedArray out = host_array(positions, "positions", DType::i64, 1);
    check_local_rows(checked, cp_size, out.shape[0]);
    const auto values = global_positions(checked, cp_size, cp_rank, out.shape[0]);
    std::copy(values.begin(), values.end(), out.data<std::int64_t>());
  });
}

DT_API dt_status dt_cp_shard(dt_cp_layout layout, int cp_size, int cp_rank, const DLTensor* full, DLTensor* local) {
  return entry([&] {
    const SequenceLayout checked = layout_from(dtrain::enum_value(layout));
    const dtrain::CheckedTensor whole = dtrain::capi::host_tensor(full, "full");
    const dtrain::CheckedTensor shard = dtrain::capi::host_tensor(local, "local");
    copy_shard(checked, cp_size, cp_rank, whole, shard, ShardDirection::full_to_local);
  });
}

DT_API dt_status dt_cp_unshard(dt_cp_layout layout, int cp_size, int cp_rank, const DLTensor* local,
                               DLTensor* full) {
  return entry([&] {
    const SequenceLayout checked = layout_from(dtrain::enum_value(layout));
    const dtrain::CheckedTensor whole = dtrain::capi::host_tensor(full, "full");
    const dtrain::CheckedTensor shard = dtrain::capi::host_tensor(local, "local");
    copy_shard(checked, cp_size, cp_rank, whole, shard, ShardDirection::local_to_full);
  });
}

DT_API dt_status dt_cp_attention(const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                 const DLTensor* q_positions, const DLTensor* k_positions, int causal, double scale,
                                 DLTensor* o, DLTensor* lse) {
  return entry([&] {
    PlacedCall call;
    const AttentionInputs in = attention_inputs(call, q, k, v, causal, scale);
    const BlockOutputs out = check_outputs(call, in.shape, in.q.view.dtype, o, lse);
    std::optional<PlacedArray> q_at, k_at;
    if (in.shape.causal) {
      q_at = array(call, q_positions, "q_positions", DType::i64, 1);
      k_at = array(call, k_positions, "k_positions", DType::i64, 1);
      expect_shape(*q_at, {in.shape.q_rows});
      expect_shape(*k_at, {in.shape.kv_rows});
    }
    refuse_overlap({&out.o, &out.lse}, {&in.q, &in.k, &in.v, q_at ? &*q_at : nullptr, k_at ? &*k_at : nullptr});
    const dtrain::device::AttentionPositions positions{q_at ? q_at->data<const std::int64_t>() : nullptr,
                                                       k_at ? k_at->data<const std::int64_t>() : nullptr};
    auto& queue = call.queue();
    const Float32Copy q32(queue, in.q.view, Role::input), k32(queue, in.k.view, Role::input),
        v32(queue, in.v.view, Role::input);
    Float32Copy o32(queue, out.o.view, Role::output);
    dtrain::device::attention_forward(queue, in.shape, q32.data(), k32.data(), v32.data(), positions, o32.data(),
                                      out.lse.data<float>());
    o32.round_back();
    call.finish();
  });
}

DT_API dt_status dt_cp_attention_merge(DLTensor* o, DLTensor* lse, const DLTensor* o_other,
                                       const DLTensor* lse_other) {
  return entry([&] {
    PlacedCall call;
    const DType dtype = data_dtype(o, "o");
    const PlacedArray o_in = array(call, o, "o", dtype, 3);
    const PlacedArray lse_in = array(call, lse, "lse", DType::f32, 2);
    const PlacedArray o_other_in = array(call, o_other, "o_other", dtype, 3);
    const PlacedArray lse_other_in = array(call, lse_other, "lse_other", DType::f32, 2);
    expect_shape(lse_in, {o_in.shape[0], o_in.shape[1]});
    expect_shape(o_other_in, o_in.shape);
    expect_shape(lse_other_in, lse_in.shape);
    refuse_overlap({&o_in, &lse_in}, {&o_other_in, &lse_other_in});
    auto& queue = call.queue();
    Float32Copy o32(queue, o_in.view, Role::both);
    const Float32Copy other32(queue, o_other_in.view, Role::input);
    dtrain::device::attention_merge(queue, o_in.shape[0], o_in.shape[1], o_in.shape[2], o32.data(),
                                    lse_in.data<float>(), other32.data(), lse_other_in.data<const float>());
    o32.round_back();
    call.finish();
  });
}

DT_API dt_status dt_cp_ring_attention_forward(dt_comm* comm, dt_cp_layout layout, int causal, double scale,
                                              const DLTensor* q, const DLTensor* k, const DLTensor* v, DLTensor* o,
                                              DLTensor* lse) {
  return sharded_forward("dt_cp_ring_attention_forward", Strategy::ring, ring_attention_forward, comm,
                         dtrain::enum_value(layout), causal, scale, q, k, v, o, lse);
}

DT_API dt_status dt_cp_ring_attention_backward(dt_comm* comm, dt_cp_layout layout, int causal, double scale,
                                               const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                               const DLTensor* o, const DLTensor* lse, const DLTensor* d_o,
                                               DLTensor* dq, DLTensor* dk, DLTensor* dv) {
  return sharded_backward("dt_cp_ring_attention_backward", Strategy::ring, ring_attention_backward, comm,
                          dtrain::enum_value(layout), causal, scale, q, k, v, o, lse, d_o, dq, dk, dv);
}

DT_API dt_status dt_cp_ulysses_attention_forward(dt_comm* comm, dt_cp_layout layout, int causal, double scale,
                                                 const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                                 DLTensor* o, DLTensor* lse) {
  return sharded_forward("dt_cp_ulysses_attention_forward", Strategy::all_to_all, ulysses_attention_forward, comm,
                         dtrain::enum_value(layout), causal, scale, q, k, v, o, lse);
}

DT_API dt_status dt_cp_ulysses_attention_backward(dt_comm* comm, dt_cp_layout layout, int causal, double scale,
                                                  const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                                  const DLTensor* o, const DLTensor* lse, const DLTensor* d_o,
                                                  DLTensor* dq, DLTensor* dk, DLTensor* dv) {
  return sharded_backward("dt_cp_ulysses_attention_backward", Strategy::all_to_all, ulysses_attention_backward,
                          comm, dtrain::enum_value(layout), causal, scale, q, k, v, o, lse, d_o, dq, dk, dv);
}

}  // extern "C"
