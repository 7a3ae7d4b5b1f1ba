#include "comm/call_check.hpp"

#include "base/digest.hpp"
#include "base/env.hpp"

namespace dtrain::comm {

const char* call_kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::allreduce: return "allreduce";
    case CallKind::reduce_scatter: return "reduce_scatter";
    case CallKind::allgather: return "allgather";
    case CallKind::broadcast: return "broadcast";
    case CallKind::alltoall: return "alltoall";
    case CallKind::alltoallv: return "alltoallv";
    case CallKind::barrier: return "barrier";
    case CallKind::reduce: return "reduce";
    case CallKind::gather: return "gather";
    case CallKind::scatter: return "scatter";
    case CallKind::allgatherv: return "allgatherv";
    case CallKind::reduce_scatterv: return "reduce_scatterv";
    case CallKind::send: return "send";
    case CallKind::recv: return "recv";
    case CallKind::p2p_group: return "p2p_group";
  }
  return "an unknown collective";
}

std::array<std::int64_t, kCallWords> encode(const Call& call) {
  return {static_cast<std::int64_t>(call.kind), call.sequence, call.dtype, call.count, call.op, call.root,
          call.counts};
}

Call decode(const std::int64_t* words) {
  Call call;
  call.kind = static_cast<CallKind>(words[0]);
  call.sequence = words[1];
  call.dtype = words[2];
  call.count = words[3];
  call.op = words[4];
  call.root = words[5];
  call.counts = words[6];
  return call;
}

namespace {

// "allreduce(4096 float32, sum)". Fields come from peers: only known values
// are given names.
std::string signature(const Call& call) {
  std::string text;
  const auto add = [&text](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  std::string elements = call.count >= 0 ? std::to_string(call.count) : "";
  if (call.dtype >= 0 && call.dtype <= static_cast<std::int64_t>(DType::u8)) {
    const char* dtype = dtype_name(static_cast<DType>(call.dtype));
    elements += elements.empty() ? dtype : std::string(" ") + dtype;
  }
  if (!elements.empty()) add(elements);
  if (call.op >= static_cast<std::int64_t>(ReduceOp::sum) && call.op <= static_cast<std::int64_t>(ReduceOp::prod)) {
    add(reduce_op_name(static_cast<ReduceOp>(call.op)));
  }
  if (call.root >= 0) add("root " + std::to_string(call.root));
  if (call.counts != 0) add("counts digest " + std::to_string(call.counts));
  return std::string(call_kind_name(call.kind)) + "(" + text + ")";
}

}  // namespace

std::string describe_disagreement(const std::vector<Call>& calls, const std::vector<int>& ranks) {
  const auto rank_of = [&](std::size_t i) { return ranks.empty() ? static_cast<int>(i) : ranks[i]; };
  std::string text;
  for (std::size_t first = 0; first < calls.size();) {
    std::size_t last = first;
    while (last + 1 < calls.size() && calls[last + 1] == calls[first] && rank_of(last + 1) == rank_of(last) + 1) ++last;
    text += text.empty() ? "" : ", ";
    text += first == last ? "rank " + std::to_string(rank_of(first)) + " called "
                          : "ranks " + std::to_string(rank_of(first)) + "-" + std::to_string(rank_of(last)) + " all called ";
    text += signature(calls[first]);
    if (calls[first].sequence != calls[0].sequence) text += " as collective #" + std::to_string(calls[first].sequence);
    first = last + 1;
  }
  return "ranks disagree about collective #" + std::to_string(calls.empty() ? 0 : calls[0].sequence) + ": " + text;
}

std::int64_t counts_digest(const std::vector<std::int64_t>& counts) {
  Digest digest;
  for (std::int64_t count : counts) digest.add(count);
  // Positive and never 0, which stands for "no counts".
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(digest.value()) >> 1) | 1;
}

bool call_checks_enabled() { return env::get_int("DTRAIN_CHECK_COLLECTIVES", 0, 1).value_or(0) == 1; }

}  // namespace dtrain::comm
