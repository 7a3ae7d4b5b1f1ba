// Setting up the shared memory of collectives (local_allreduce.hpp,
// local_exchange.hpp),
// part of a new communicator's handshake. Where every rank runs on this host
// (which each rank tells from the identities alone, so all agree), two
// allgathers: each rank's mailbox (its file descriptor, and the bytes it
// holds), then whether each could map every other's. Only if all could do
// they use it, with the smallest capacity any rank offered.

#include <algorithm>
#include <cstdint>
#include <memory>

#include "base/error.hpp"
#include "base/log.hpp"
#include "comm/backends/ucx/backend.hpp"
#include "comm/backends/ucx/liveness.hpp"
#include "comm/backends/ucx/mailboxes.hpp"

namespace dtrain::comm::ucx {

namespace {

struct Offer {
  std::int32_t fd;  // -1: this rank has no mailbox
  std::uint32_t capacity;
};

}  // namespace

void UcxBackend::share_memory(Clock::time_point deadline) {
  const int n = engine_.size();
  const int me = engine_.rank();
  bool one_host = n > 1;
  for (const ProcessIdentity& process : identities_) one_host = one_host && identities_[0].can_watch(process);
  if (!one_host) return;

  const std::size_t wanted = engine_.tuning().local_bytes;
  std::unique_ptr<Mailboxes> mailboxes;
  if (wanted > 0) {
    try {
      mailboxes = std::make_unique<Mailboxes>(me, n, wanted, !outnumber_their_cores(identities_, identities_[me]));
    } catch (const std::exception& e) {
      DT_LOG(debug) << "rank " << me << ": collectives go over UCX: " << e.what();
    }
  }
  const std::vector<Offer> offers =
      everyones(Offer{mailboxes ? mailboxes->fd() : -1, static_cast<std::uint32_t>(mailboxes ? wanted : 0)}, deadline);

  std::size_t agreed = wanted;
  bool mapped = mailboxes != nullptr;
  for (int r = 0; r < n && mapped; ++r) {
    const Offer& offer = offers[static_cast<std::size_t>(r)];
    agreed = std::min<std::size_t>(agreed, offer.capacity);
    try {
      if (offer.fd < 0) raise(DT_ERR_UNSUPPORTED, "rank " + std::to_string(r) + " has no mailbox");
      mailboxes->attach(r, identities_[static_cast<std::size_t>(r)].pid, offer.fd, offer.capacity);
    } catch (const std::exception& e) {
      // Any failure: this rank must still take part in the verdicts.
      DT_LOG(debug) << "rank " << me << ": collectives go over UCX: " << e.what();
      mapped = false;
    }
  }
  const std::vector<std::int32_t> verdicts = everyones(std::int32_t{mapped ? 1 : 0}, deadline);
  if (std::find(verdicts.begin(), verdicts.end(), 0) != verdicts.end() || agreed < Mailboxes::kLeastCapacity) return;
  // Every peer has mapped it: the descriptor is no longer needed.
  mailboxes->close_file(agreed);
  engine_.share_memory(std::move(mailboxes));
}

}  // namespace dtrain::comm::ucx
