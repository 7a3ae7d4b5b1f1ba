// Collectives whose ranks first show each other what they were asked to do
// (the rooted and uneven ones: reduce, gather, scatter, allgatherv,
// reduce_scatterv). A rank that disagrees about the operation, dtype, op,
// root or counts would otherwise leave the others waiting for messages that
// never come, or send ones that do not fit; with the promises exchanged
// first, every rank sees the same set and fails with DT_ERR_MISMATCH before
// any data moves. The exchange costs one small message to and from every
// peer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/schedules/operation.hpp"

namespace dtrain::comm::schedule {

// What one rank promises to do; compared byte for byte across ranks.
struct Promise {
  std::int32_t operation = 0;  // which collective: AgreedOperation::Which
  std::int32_t dtype = 0;
  std::int32_t op = -1;          // the ReduceOp, or -1
  std::int32_t root = -1;        // or -1
  std::int64_t count = -1;       // the count every rank shares, or -1
  std::int64_t counts_digest = 0;   // counts_digest(recv_counts) (call_check.hpp), or 0

  bool operator==(const Promise&) const = default;
};

class AgreedOperation : public Operation {
 public:
  enum class Which : std::int32_t { reduce = 1, gather, scatter, allgatherv, reduce_scatterv };

  // `name` is a string literal naming `which`.
  AgreedOperation(const char* name, const Promise& promise);

 protected:
  // Sends this rank's promise to every peer and receives theirs (step 0 of
  // the operation); the lane awaits the transfers it appends to `list`.
  void post_promises(std::vector<Transfer*>& list);
  // Throws DT_ERR_MISMATCH naming the first rank whose promise differs
  // from this rank's, once the promises have arrived.
  void check_promises() const;

  // The step of the data messages that follow the promises.
  static constexpr std::uint32_t kDataStep = 1;

 private:
  const Promise mine_;
  std::vector<Promise> theirs_;
};

}  // namespace dtrain::comm::schedule
