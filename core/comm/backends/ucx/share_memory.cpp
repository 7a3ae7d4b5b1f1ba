// Setting up the shared memory of collectives (local_allreduce.hpp,
// local_exchange.hpp),
// part of a new communicator's handshake. Where every rank runs on this host
// (which each rank tells from the identities alone, so all agree), two
// allgathers: each rank's mailbox (its file descriptor, the bytes it holds
// and an address in its memory), then whether each could map every other's
// mailbox and read its memory. Only if all could map do they use the
// mailboxes, with the smallest capacity any rank offered, and only if all
// could read do they read large buffers straight from each other's memory
// (single copy, local_exchange.hpp).

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
  std::uint64_t address;  // a word of this rank's memory, to try reading it
};

// What each rank tells the others once it tried their mailboxes.
constexpr std::int32_t kMapped = 1;
constexpr std::int32_t kReadable = 2;  // and their memory (single copy)
constexpr std::int32_t kCoresApart = 4;  // each rank has a core of its own

}  // namespace

void UcxBackend::share_memory(Clock::time_point deadline) {
  const int n = engine_.size();
  const int me = engine_.rank();
  bool one_host = n > 1;
  for (const ProcessIdentity& process : identities_) one_host = one_host && identities_[0].can_watch(process);
  if (!one_host) return;

  const std::size_t wanted = engine_.tuning().local_bytes;
  const bool cores_apart = !outnumber_their_cores(identities_, identities_[me]);
  std::unique_ptr<Mailboxes> mailboxes;
  if (wanted > 0) {
    try {
      mailboxes = std::make_unique<Mailboxes>(me, n, wanted, cores_apart);
    } catch (const std::exception& e) {
      DT_LOG(debug) << "rank " << me << ": collectives go over UCX: " << e.what();
    }
  }
  const std::vector<Offer> offers =
      everyones(Offer{mailboxes ? mailboxes->fd() : -1, static_cast<std::uint32_t>(mailboxes ? wanted : 0),
                      mailboxes ? mailboxes->own_address() : 0},
                deadline);

  std::size_t agreed = wanted;
  bool mapped = mailboxes != nullptr;
  bool readable = mapped && engine_.tuning().single_copy_bytes > 0;
  for (int r = 0; r < n && mapped; ++r) {
    const Offer& offer = offers[static_cast<std::size_t>(r)];
    agreed = std::min<std::size_t>(agreed, offer.capacity);
    try {
      if (offer.fd < 0) raise(DT_ERR_UNSUPPORTED, "rank " + std::to_string(r) + " has no mailbox");
      mailboxes->attach(r, identities_[static_cast<std::size_t>(r)].pid, offer.fd, offer.capacity);
      readable = readable && mailboxes->can_read(r, offer.address);
    } catch (const std::exception& e) {
      // Any failure: this rank must still take part in the verdicts.
      DT_LOG(debug) << "rank " << me << ": collectives go over UCX: " << e.what();
      mapped = false;
    }
  }
  const std::int32_t verdict = mapped ? kMapped | (readable ? kReadable : 0) | (cores_apart ? kCoresApart : 0) : 0;
  const std::vector<std::int32_t> verdicts = everyones(verdict, deadline);
  const auto all = [&](std::int32_t bit) {
    return std::all_of(verdicts.begin(), verdicts.end(), [bit](std::int32_t v) { return (v & bit) != 0; });
  };
  if (!all(kMapped) || agreed < Mailboxes::kLeastCapacity) return;
  mailboxes->set_readable(all(kReadable), all(kCoresApart));
  DT_LOG(debug) << "rank " << me << ": shared memory, " << (all(kReadable) ? "readable" : "not readable")
                << (all(kCoresApart) ? ", a core per rank" : ", ranks sharing cores");
  // Every peer has mapped it: the descriptor is no longer needed.
  mailboxes->close_file(agreed);
  engine_.share_memory(std::move(mailboxes));
  if (engine_.group().mailboxes->readable()) process_memory_ = std::make_unique<ProcessMemory>(engine_.group());
}

}  // namespace dtrain::comm::ucx
