// dt_comm_split over UCX. Everything goes through the parent's own
// transport, as two allgathers on the parent: first (color, key, address
// length) of every rank, then the new workers' addresses, padded to the
// longest. Each group then connects its own new worker.

#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "comm/backends/ucx/backend.hpp"
#include "comm/backends/ucx/group.hpp"
#include "comm/schedules/tags.hpp"
#include "dtrain/common.h"

namespace dtrain::comm::ucx {

namespace {

struct Entry {
  std::int32_t color;
  std::int32_t key;
  std::uint32_t address_bytes;
  std::int32_t ready;  // 0: this rank could not create its worker
};

}  // namespace

std::unique_ptr<Backend> UcxBackend::split(int color, int key, int* new_rank, int* new_size) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  const int n = engine_.size();
  const int me = engine_.rank();
  const bool member = color != DT_UNDEF;
  const int split_number = splits_++;

  // Created before the exchange so its address can go with it. A failure is
  // reported to the group rather than thrown here, which would leave the
  // other ranks waiting in the exchange.
  std::unique_ptr<Transport> transport;
  std::string trouble;
  if (member) {
    try {
      transport = std::make_unique<Transport>(n, scope_);
    } catch (const Error& e) {
      trouble = e.what();
    }
  }

  const std::vector<Entry> entries =
      everyones(Entry{member ? color : -1, key, transport ? static_cast<std::uint32_t>(transport->address().size()) : 0,
                   member && !transport ? 0 : 1},
             deadline);

  std::uint32_t longest = 0;
  for (const Entry& e : entries) longest = std::max(longest, e.address_bytes);
  auto padded = std::make_shared<std::vector<char>>(longest, '\0');
  auto all = std::make_shared<std::vector<char>>(static_cast<std::size_t>(n) * longest);
  if (longest > 0) {
    if (transport) std::memcpy(padded->data(), transport->address().data(), transport->address().size());
    auto op = schedule::ring_allgather(bytes_view(padded->data(), longest), bytes_view(all->data(), all->size()));
    op->keep_alive(padded);
    op->keep_alive(all);
    run(std::move(op), deadline);
  }
  if (!member) return nullptr;

  std::vector<int> members;
  for (int r = 0; r < n; ++r) {
    if (entries[r].color == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return entries[a].key < entries[b].key; });
  for (int r : members) {
    if (entries[r].ready == 0) {
      raise(DT_ERR_TRANSPORT, "rank " + std::to_string(me) + ": dt_comm_split: " +
                                  (r == me ? trouble : "rank " + std::to_string(r) + " could not create its UCX worker"));
    }
  }

  std::vector<std::string> addresses;
  std::vector<int> world;
  std::vector<ProcessIdentity> identities;
  for (int r : members) {
    addresses.emplace_back(all->data() + static_cast<std::size_t>(r) * longest, entries[r].address_bytes);
    world.push_back(world_ranks_[r]);
    identities.push_back(identities_[r]);
  }
  *new_rank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  *new_size = static_cast<int>(members.size());
  // A context id of its own (mixing the parent's, the split's number and the
  // color), so that even a misdelivered message could not match.
  const std::uint32_t context =
      (context_ * 131u + static_cast<std::uint32_t>(split_number) * 31u + static_cast<std::uint32_t>(color) + 1u) &
      schedule::kContextMask;
  transport->connect(addresses, *new_rank, context);
  auto child = std::make_unique<UcxBackend>(std::move(transport), *new_rank, context, std::move(world),
                                            std::move(identities), engine_.tuning(), timeout_ms_);
  child->handshake(deadline);
  return child;
}

}  // namespace dtrain::comm::ucx
