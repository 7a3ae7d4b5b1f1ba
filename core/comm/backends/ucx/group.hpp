// What this backend's own collectives know of their communicator: what a
// schedule knows (comm/schedules/operation.hpp) and the transports behind
// it, the UCP worker and the ranks' shared memory, with the tuning that
// chooses between them. The schedules run over the worker as messages; the
// shared-memory collectives (local_collective.hpp) and the small allreduce
// (small_allreduce.hpp) use these directly.
#pragma once

#include "comm/backends/ucx/transport.hpp"
#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"
#include "comm/schedules/combine.hpp"
#include "comm/schedules/operation.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm::ucx {

struct Tuning;
class Mailboxes;

struct Group : schedule::Group {
  Transport* transport = nullptr;  // also `messages`
  const Tuning* tuning = nullptr;
  // Shared memory with the peers, where every rank runs on this host and
  // could map it; otherwise nullptr.
  Mailboxes* mailboxes = nullptr;
};

// The schedules' names this backend uses.
using schedule::all_of;
using schedule::bytes_view;
using schedule::collective_tag;
using schedule::Combine;
using schedule::describe_rank;
using schedule::Operation;
using schedule::Range;
using schedule::segment;
using schedule::Task;
using schedule::transfer_error;

}  // namespace dtrain::comm::ucx
