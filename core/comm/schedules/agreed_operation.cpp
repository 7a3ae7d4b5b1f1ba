#include "comm/schedules/agreed_operation.hpp"

#include <string>

#include "base/dtype.hpp"
#include "base/error.hpp"
#include "comm/reduce_op.hpp"

namespace dtrain::comm::schedule {

namespace {

const char* which_name(std::int32_t which) {
  switch (static_cast<AgreedOperation::Which>(which)) {
    case AgreedOperation::Which::reduce: return "reduce";
    case AgreedOperation::Which::gather: return "gather";
    case AgreedOperation::Which::scatter: return "scatter";
    case AgreedOperation::Which::allgatherv: return "allgatherv";
    case AgreedOperation::Which::reduce_scatterv: return "reduce_scatterv";
  }
  return "an unknown operation";
}

std::string describe(const Promise& p) {
  std::string text = std::string(which_name(p.operation)) + " of " + dtype_name(static_cast<DType>(p.dtype));
  if (p.op >= 0) text += std::string(", op ") + reduce_op_name(static_cast<ReduceOp>(p.op));
  if (p.root >= 0) text += ", root " + std::to_string(p.root);
  if (p.count >= 0) text += ", " + std::to_string(p.count) + " elements per rank";
  if (p.counts_digest != 0) text += ", recv_counts with digest " + std::to_string(p.counts_digest);
  return text;
}

}  // namespace

AgreedOperation::AgreedOperation(const char* name, const Promise& promise)
    : Operation(name, Kind::collective), mine_(promise) {}

void AgreedOperation::post_promises(std::vector<Transfer*>& list) {
  theirs_.assign(static_cast<std::size_t>(size()), mine_);
  for (int step = 1; step < size(); ++step) {
    const int peer = (rank() + step) % size();
    Transfer& out = transfer();
    send(out, peer, 0, &mine_, sizeof(Promise));
    Transfer& in = transfer();
    recv(in, peer, 0, &theirs_[static_cast<std::size_t>(peer)], sizeof(Promise));
    list.push_back(&out);
    list.push_back(&in);
  }
}

void AgreedOperation::check_promises() const {
  for (int r = 0; r < size(); ++r) {
    const Promise& other = theirs_[static_cast<std::size_t>(r)];
    if (other == mine_) continue;
    raise(DT_ERR_MISMATCH, "ranks disagree: this rank (" + describe_rank(group(), rank()) + ") calls " +
                               describe(mine_) + " but " + describe_rank(group(), r) + " calls " +
                               describe(other));
  }
}

}  // namespace dtrain::comm::schedule
