// Context parallelism (dtrain/cp.h). The ring calls check their arguments
// inside the agreement the core runs first, so that a rank refusing its own
// arguments still tells the others instead of leaving them waiting.
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "parallel/cp/agreement.hpp"
#include "parallel/cp/arguments.hpp"
#include "parallel/cp/block_attention.hpp"
#include "parallel/cp/layout.hpp"
#include "parallel/cp/ring.hpp"
#include "parallel/cp/shard.hpp"
#include "dtrain/cp.h"

using dtrain::DType;
using dtrain::capi::entry;
using dtrain::capi::require;
using namespace dtrain::parallel::cp;

namespace {

struct BlockOutputs {
  HostArray o, lse;
};

BlockOutputs check_outputs(const AttentionShape& shape, DLTensor* o, DLTensor* lse) {
  BlockOutputs out{host_array(o, "o", DType::f32, 3), host_array(lse, "lse", DType::f32, 2)};
  expect_shape(out.o, output_shape(shape));
  expect_shape(out.lse, lse_shape(shape));
  return out;
}

// Ring arguments: a layout, and queries, keys and values of one local
// length that the layout can hold on a group of `cp_size`.
struct RingInputs {
  SequenceLayout layout = SequenceLayout::contiguous;
  AttentionInputs in;
};

RingInputs check_ring_inputs(int cp_size, int layout, int causal, double scale, const DLTensor* q, const DLTensor* k,
                             const DLTensor* v) {
  RingInputs ring{layout_from(layout), check_attention_inputs(q, k, v, causal, scale)};
  const AttentionShape& shape = ring.in.shape;
  if (shape.kv_rows != shape.q_rows) {
    dtrain::raise(DT_ERR_INVALID_ARGUMENT, "k and v have " + std::to_string(shape.kv_rows) + " rows but q has " +
                                                std::to_string(shape.q_rows) +
                                                "; ring attention needs each rank's shard of one sequence");
  }
  check_local_rows(ring.layout, cp_size, shape.q_rows);
  return ring;
}

// Runs `check` (returning the checked arguments, a struct with a `ring`
// member, or throwing) and then the agreement every rank takes part in,
// whether or not its own check passed; returns the arguments agreed on.
template <typename Check>
auto checked_together(dtrain::comm::Communicator& comm, const char* context, Check&& check) {
  std::optional<decltype(check())> args;
  std::exception_ptr failure;
  try {
    args.emplace(check());
  } catch (...) {
    failure = std::current_exception();
  }
  const RingInputs agreed = args ? args->ring : RingInputs{};
  agree_on_attention(comm, context, agreed.layout, agreed.in.shape, failure);
  return std::move(*args);
}

}  // namespace

extern "C" {

DT_API dt_status dt_cp_positions(dt_cp_layout layout, int cp_size, int cp_rank, DLTensor* positions) {
  return entry([&] {
    const SequenceLayout checked = layout_from(layout);
    check_group(cp_size, cp_rank);
    const HostArray out = host_array(positions, "positions", DType::i64, 1);
    check_local_rows(checked, cp_size, out.shape[0]);
    const auto values = global_positions(checked, cp_size, cp_rank, out.shape[0]);
    std::copy(values.begin(), values.end(), out.data<std::int64_t>());
  });
}

DT_API dt_status dt_cp_shard(dt_cp_layout layout, int cp_size, int cp_rank, const DLTensor* full, DLTensor* local) {
  return entry([&] { copy_shard(layout_from(layout), cp_size, cp_rank, full, local, ShardDirection::full_to_local); });
}

DT_API dt_status dt_cp_unshard(dt_cp_layout layout, int cp_size, int cp_rank, const DLTensor* local,
                               DLTensor* full) {
  return entry([&] { copy_shard(layout_from(layout), cp_size, cp_rank, full, local, ShardDirection::local_to_full); });
}

DT_API dt_status dt_cp_attention(const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                 const DLTensor* q_positions, const DLTensor* k_positions, int causal, double scale,
                                 DLTensor* o, DLTensor* lse) {
  return entry([&] {
    const AttentionInputs in = check_attention_inputs(q, k, v, causal, scale);
    const BlockOutputs out = check_outputs(in.shape, o, lse);
    std::optional<HostArray> q_at, k_at;
    if (in.shape.causal) {
      q_at = host_array(q_positions, "q_positions", DType::i64, 1);
      k_at = host_array(k_positions, "k_positions", DType::i64, 1);
      expect_shape(*q_at, {in.shape.q_rows});
      expect_shape(*k_at, {in.shape.kv_rows});
    }
    refuse_overlap({&out.o, &out.lse}, {&in.q, &in.k, &in.v, q_at ? &*q_at : nullptr, k_at ? &*k_at : nullptr});
    const BlockPositions positions{q_at ? q_at->data<const std::int64_t>() : nullptr,
                                   k_at ? k_at->data<const std::int64_t>() : nullptr};
    attention_forward(in.shape, in.q.data<const float>(), in.k.data<const float>(), in.v.data<const float>(),
                      positions, out.o.data<float>(), out.lse.data<float>());
  });
}

DT_API dt_status dt_cp_attention_merge(DLTensor* o, DLTensor* lse, const DLTensor* o_other,
                                       const DLTensor* lse_other) {
  return entry([&] {
    const HostArray o_in = host_array(o, "o", DType::f32, 3);
    const HostArray lse_in = host_array(lse, "lse", DType::f32, 2);
    const HostArray o_other_in = host_array(o_other, "o_other", DType::f32, 3);
    const HostArray lse_other_in = host_array(lse_other, "lse_other", DType::f32, 2);
    expect_shape(lse_in, {o_in.shape[0], o_in.shape[1]});
    expect_shape(o_other_in, o_in.shape);
    expect_shape(lse_other_in, lse_in.shape);
    refuse_overlap({&o_in, &lse_in}, {&o_other_in, &lse_other_in});
    merge_attention(o_in.shape[0], o_in.shape[1], o_in.shape[2], o_in.data<float>(), lse_in.data<float>(),
                    o_other_in.data<const float>(), lse_other_in.data<const float>());
  });
}

DT_API dt_status dt_cp_ring_attention_forward(dt_comm* comm, dt_cp_layout layout, int causal, double scale,
                                              const DLTensor* q, const DLTensor* k, const DLTensor* v, DLTensor* o,
                                              DLTensor* lse) {
  return entry([&] {
    auto& group = *require(comm, "comm")->impl;
    struct Args {
      RingInputs ring;
      BlockOutputs out;
    };
    const Args args = checked_together(group, "dt_cp_ring_attention_forward", [&] {
      Args checked{check_ring_inputs(group.size(), layout, causal, scale, q, k, v), {}};
      checked.out = check_outputs(checked.ring.in.shape, o, lse);
      const AttentionInputs& in = checked.ring.in;
      refuse_overlap({&checked.out.o, &checked.out.lse}, {&in.q, &in.k, &in.v});
      return checked;
    });
    const AttentionInputs& in = args.ring.in;
    ring_attention_forward(group, args.ring.layout, in.shape, in.q.data<const float>(), in.k.data<const float>(),
                           in.v.data<const float>(), args.out.o.data<float>(), args.out.lse.data<float>());
  });
}

DT_API dt_status dt_cp_ring_attention_backward(dt_comm* comm, dt_cp_layout layout, int causal, double scale,
                                               const DLTensor* q, const DLTensor* k, const DLTensor* v,
                                               const DLTensor* o, const DLTensor* lse, const DLTensor* d_o,
                                               DLTensor* dq, DLTensor* dk, DLTensor* dv) {
  return entry([&] {
    auto& group = *require(comm, "comm")->impl;
    struct Args {
      RingInputs ring;
      HostArray o, lse, d_o, dq, dk, dv;
    };
    const Args args = checked_together(group, "dt_cp_ring_attention_backward", [&] {
      Args checked{check_ring_inputs(group.size(), layout, causal, scale, q, k, v), {}, {}, {}, {}, {}, {}};
      const AttentionInputs& in = checked.ring.in;
      checked.o = host_array(o, "o", DType::f32, 3);
      checked.lse = host_array(lse, "lse", DType::f32, 2);
      checked.d_o = host_array(d_o, "d_o", DType::f32, 3);
      checked.dq = host_array(dq, "dq", DType::f32, 3);
      checked.dk = host_array(dk, "dk", DType::f32, 3);
      checked.dv = host_array(dv, "dv", DType::f32, 3);
      for (const HostArray* like_q : {&checked.o, &checked.d_o, &checked.dq}) expect_shape(*like_q, in.q.shape);
      expect_shape(checked.lse, lse_shape(in.shape));
      expect_shape(checked.dk, in.k.shape);
      expect_shape(checked.dv, in.k.shape);
      refuse_overlap({&checked.dq, &checked.dk, &checked.dv},
                     {&in.q, &in.k, &in.v, &checked.o, &checked.lse, &checked.d_o});
      return checked;
    });
    const AttentionInputs& in = args.ring.in;
    ring_attention_backward(group, args.ring.layout, in.shape,
                            {in.q.data<const float>(), in.k.data<const float>(), in.v.data<const float>(),
                             args.o.data<const float>(), args.lse.data<const float>(), args.d_o.data<const float>()},
                            args.dq.data<float>(), args.dk.data<float>(), args.dv.data<float>());
  });
}

}  // extern "C"
