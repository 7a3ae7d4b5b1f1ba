#include "comm/backends/ucx/local_exchange.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "comm/backends/ucx/scheduled_local.hpp"
#include "comm/backends/ucx/tuning.hpp"

namespace dtrain::comm::ucx {

namespace {

constexpr std::size_t kLine = 64;

// What a piece begins with: the rank's call (call_check.hpp) without its
// sequence number (the stamp is the same on every rank), whether the rank
// has more pieces to write, and whether it is read in a single copy. Small,
// so that with the header and a few bytes of payload it is one line.
constexpr std::uint8_t kMore = 1;
constexpr std::uint8_t kSingleCopy = 2;
struct Preamble {
  std::uint8_t kind;
  std::uint8_t dtype;
  std::int8_t op;  // -1: none
  std::uint8_t flags;
  std::int32_t root;    // -1: none
  std::int64_t count;   // -1: none
  std::int64_t counts;  // a digest of per-rank counts, or 0
};
static_assert(sizeof(Preamble) == 24, "the preamble is packed");

Preamble preamble_of(const Call& call, bool more, bool single_copy) {
  return {static_cast<std::uint8_t>(call.kind),
          static_cast<std::uint8_t>(call.dtype),
          static_cast<std::int8_t>(call.op),
          static_cast<std::uint8_t>((more ? kMore : 0) | (single_copy ? kSingleCopy : 0)),
          static_cast<std::int32_t>(call.root), call.count,
          call.counts};
}

Call call_of(const Preamble& p, std::int64_t sequence) {
  return {static_cast<CallKind>(p.kind), sequence, p.dtype, p.count, p.op, p.root, p.counts};
}

bool same_call(const Preamble& a, const Preamble& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.root == b.root && a.count == b.count &&
         a.counts == b.counts && (a.flags & kSingleCopy) == (b.flags & kSingleCopy);
}

// alltoallv's tables, after the preamble: every send count, then every
// receive count, then where each of the rank's blocks begins in its memory
// (read there by destinations that take it in a single copy).
std::size_t counts_bytes_for(int size) { return 2 * static_cast<std::size_t>(size) * sizeof(std::int64_t); }
std::size_t table_bytes_for(int size) {
  return counts_bytes_for(size) + static_cast<std::size_t>(size) * sizeof(std::uint64_t);
}

// Where each rank's block begins when packed in rank order, into `first`.
void starts(const std::vector<std::int64_t>& counts, std::vector<std::int64_t>& first) {
  first.assign(counts.size(), 0);
  if (!counts.empty()) std::partial_sum(counts.begin(), counts.end() - 1, first.begin() + 1);
}

const Preamble& preamble(const std::byte* part) { return *reinterpret_cast<const Preamble*>(part); }
const std::int64_t* table(const std::byte* part) {
  return reinterpret_cast<const std::int64_t*>(part + sizeof(Preamble));
}

}  // namespace

bool LocalExchange::fits(std::size_t capacity, int size) {
  const std::size_t fixed = sizeof(Preamble) + table_bytes_for(size);
  return capacity > fixed && (capacity - fixed) / static_cast<std::size_t>(size) >= kLine;
}

void LocalExchange::prepare(std::uint64_t sequence, const Collective& collective) {
  element_ = dtype_size(collective.recv.dtype);
  call_ = Call{collective.kind, static_cast<std::int64_t>(sequence + 1), static_cast<std::int64_t>(collective.recv.dtype)};
  per_destination_ = false;
  send_counts_.clear();
  recv_counts_.clear();
  aside_.clear();
  reads_.clear();
  reduce_count_ = 0;
  own_bytes_ = 0;
  sends_only_ = false;
  plan(collective);
  kind_ = Mailboxes::kind_code(call_.kind, collective.recv.dtype, collective.op);
  single_copy_ = reads_in_a_single_copy();
  // A single copy reads this rank's own buffers: it waits until its peers have.
  sends_only_ = sends_only_ && !single_copy_;
  // A broadcast's or scatter's other ranks need only the root's part, and in
  // one piece (as the root then writes it) only the root's call: they wait
  // for the root alone, not for each other.
  const bool from_root = (call_.kind == CallKind::broadcast || call_.kind == CallKind::scatter) && call_.root != group_.rank;
  if (from_root && !single_copy_ && reads_.front().count <= piece_elements()) only_ = static_cast<int>(call_.root);
  blocks_read_in_place_ = std::any_of(streams_.begin(), streams_.end(), [](const Stream& s) { return s.direct; });
  acknowledging_ = false;
  piece_ = 0;
}

void LocalExchange::plan(const Collective& c) {
  const int n = group_.size;
  const int me = group_.rank;
  const auto at = [this](const TensorView& view, std::int64_t element) {
    return static_cast<std::byte*>(view.data) + static_cast<std::size_t>(element) * element_;
  };
  const auto reduce = [&](std::int64_t first, std::int64_t count) {
    combine_ = Combine(c.op, c.recv.dtype);
    reduce_first_ = first;
    reduce_count_ = count;
    reduce_own_ = at(c.send, first);
    reduce_into_ = static_cast<std::byte*>(c.recv.data);
  };
  const auto keep = [&](const std::byte* from, std::byte* into, std::int64_t count) {
    own_from_ = from;
    own_into_ = into;
    own_bytes_ = static_cast<std::size_t>(count) * element_;
  };
  // Every rank's count (`even`, or recv_counts when -1) into counts_, where
  // each begins into firsts_, and what the ranks compare of them.
  const auto uneven = [&](std::int64_t even) {
    if (even >= 0) {
      counts_.assign(static_cast<std::size_t>(n), even);
      call_.count = even;
    } else {
      counts_ = c.recv_counts;
      call_.counts = counts_digest(counts_);
    }
    starts(counts_, firsts_);
  };
  streams_.assign(1, Stream{});
  switch (c.kind) {
    case CallKind::allgather:
    case CallKind::allgatherv: {
      uneven(c.kind == CallKind::allgather ? c.send.count : -1);
      const std::vector<std::int64_t>& counts = counts_;
      const std::vector<std::int64_t>& first = firsts_;
      streams_[0] = {static_cast<const std::byte*>(c.send.data), counts[me]};
      keep(streams_[0].data, at(c.recv, first[me]), counts[me]);
      for (int p = 0; p < n; ++p) {
        if (p != me) reads_.push_back({p, 0, 0, counts[p], at(c.recv, first[p])});
      }
      break;
    }
    case CallKind::reduce_scatter:
    case CallKind::reduce_scatterv: {
      uneven(c.kind == CallKind::reduce_scatter ? c.recv.count : -1);
      const std::vector<std::int64_t>& counts = counts_;
      const std::vector<std::int64_t>& first = firsts_;
      call_.op = static_cast<std::int64_t>(c.op);
      const std::int64_t total = first[n - 1] + counts[n - 1];
      streams_[0] = {static_cast<const std::byte*>(c.send.data), total, first[me], counts[me]};
      reduce(first[me], counts[me]);
      break;
    }
    case CallKind::broadcast:
      call_.count = c.recv.count;
      call_.root = c.root;
      if (me == c.root) {
        streams_[0] = {static_cast<const std::byte*>(c.recv.data), c.recv.count};
        sends_only_ = true;
      } else {
        reads_.push_back({c.root, 0, 0, c.recv.count, at(c.recv, 0)});
      }
      break;
    case CallKind::reduce:
      call_.count = c.send.count;
      call_.op = static_cast<std::int64_t>(c.op);
      call_.root = c.root;
      if (me == c.root) {
        reduce(0, c.send.count);
      } else {
        streams_[0] = {static_cast<const std::byte*>(c.send.data), c.send.count};
        sends_only_ = true;
      }
      break;
    case CallKind::gather:
      call_.count = c.send.count;
      call_.root = c.root;
      if (me != c.root) {
        streams_[0] = {static_cast<const std::byte*>(c.send.data), c.send.count};
        sends_only_ = true;
        break;
      }
      keep(static_cast<const std::byte*>(c.send.data), at(c.recv, me * c.send.count), c.send.count);
      for (int p = 0; p < n; ++p) {
        if (p != me) reads_.push_back({p, 0, 0, c.send.count, at(c.recv, p * c.send.count)});
      }
      break;
    case CallKind::scatter:
      per_destination_ = true;
      streams_.assign(static_cast<std::size_t>(n), Stream{});
      call_.count = c.recv.count;
      call_.root = c.root;
      if (me != c.root) {
        reads_.push_back({c.root, me, 0, c.recv.count, at(c.recv, 0)});
        break;
      }
      for (int d = 0; d < n; ++d) {
        if (d != me) streams_[d] = {at(c.send, d * c.recv.count), c.recv.count};
      }
      keep(at(c.send, me * c.recv.count), at(c.recv, 0), c.recv.count);
      sends_only_ = true;
      break;
    case CallKind::alltoall:
    case CallKind::alltoallv: {
      per_destination_ = true;
      streams_.assign(static_cast<std::size_t>(n), Stream{});
      call_.kind = CallKind::alltoallv;  // the counts say which
      send_counts_ = c.send_counts;
      recv_counts_ = c.recv_counts;
      std::vector<std::int64_t>& send_first = counts_;
      std::vector<std::int64_t>& recv_first = firsts_;
      starts(send_counts_, send_first);
      starts(recv_counts_, recv_first);
      const auto* source = static_cast<const std::byte*>(c.send.data);
      if (c.send.data == c.recv.data && c.send.count > 0) {
        // In place: the blocks to send are kept aside before any arrives.
        aside_.assign(source, source + c.send.bytes());
        source = aside_.data();
      }
      for (int d = 0; d < n; ++d) {
        if (d != me) {
          streams_[d] = {source + static_cast<std::size_t>(send_first[d]) * element_, send_counts_[d]};
          streams_[d].direct = read_directly(send_counts_[d]);
          reads_.push_back({d, me, 0, recv_counts_[d], at(c.recv, recv_first[d]), read_directly(recv_counts_[d])});
        }
      }
      keep(source + static_cast<std::size_t>(send_first[me]) * element_, at(c.recv, recv_first[me]),
           std::min(send_counts_[me], recv_counts_[me]));
      break;
    }
    default: raise(DT_ERR_INTERNAL, std::string("no shared-memory schedule for ") + call_kind_name(c.kind));
  }
}

bool LocalExchange::read_directly(std::int64_t block) const {
  return mailboxes().readable() && block > 0 &&
         static_cast<std::size_t>(block) * element_ * static_cast<std::size_t>(group_.size) >=
             group_.tuning->single_copy_bytes;
}

bool LocalExchange::reads_in_a_single_copy() const {
  if (!mailboxes().single_copy()) return false;
  const std::size_t table = streams_.size() * sizeof(std::uint64_t);
  if (mailboxes().shared_capacity() < sizeof(Preamble) + table) return false;
  // Sizes every rank knows alike, so that all choose alike.
  std::int64_t total = 0;
  switch (call_.kind) {
    case CallKind::allgather:
    case CallKind::gather:
    case CallKind::scatter: total = call_.count * group_.size; break;
    case CallKind::allgatherv: total = std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0}); break;
    case CallKind::broadcast: total = call_.count; break;
    default: return false;  // reductions read to combine; alltoallv's blocks choose one by one
  }
  return static_cast<std::size_t>(total) * element_ >= group_.tuning->single_copy_bytes;
}

std::size_t LocalExchange::table_bytes() const {
  return call_.kind == CallKind::alltoallv ? table_bytes_for(group_.size) : 0;
}

std::size_t LocalExchange::addresses_offset() const {
  return sizeof(Preamble) + (call_.kind == CallKind::alltoallv ? counts_bytes_for(group_.size) : 0);
}

void LocalExchange::write_addresses(std::byte* area) const {
  auto* table = reinterpret_cast<std::uint64_t*>(area + addresses_offset());
  for (std::size_t s = 0; s < streams_.size(); ++s) table[s] = reinterpret_cast<std::uintptr_t>(streams_[s].data);
}

std::size_t LocalExchange::payload_offset() const { return sizeof(Preamble) + table_bytes(); }

std::int64_t LocalExchange::piece_elements() const {
  const std::size_t payload = mailboxes().shared_capacity() - payload_offset();
  const std::size_t per_stream =
      per_destination_ ? payload / static_cast<std::size_t>(group_.size) / kLine * kLine : payload;
  return static_cast<std::int64_t>(per_stream / element_);
}

std::size_t LocalExchange::stream_offset(int stream) const {
  return payload_offset() + static_cast<std::size_t>(stream) * static_cast<std::size_t>(piece_elements()) * element_;
}

void LocalExchange::begin_piece() {
  next_ = 0;
  if (single_copy_ || (piece_ == 0 && blocks_read_in_place_)) keep_streams_apart();
  if (single_copy_) {
    // The streams stay where they are, and their addresses go instead.
    std::byte* area = group_.mailboxes->contribution_area();
    *reinterpret_cast<Preamble*>(area) = preamble_of(call_, false, true);
    write_addresses(area);
    stamp_ = group_.mailboxes->publish(0, kind_);
    return;
  }
  const std::int64_t limit = piece_elements();
  const std::int64_t lo = piece_ * limit;
  const std::int64_t hi = lo + limit;
  // The piece's part of each stream, less the skipped range: up to two runs.
  struct Run {
    std::size_t stream;
    std::int64_t from, to;
  };
  const auto runs_in = [&](std::size_t s, auto&& take) {
    const Stream& stream = streams_[s];
    if (stream.direct) return;
    const std::int64_t end = std::min(stream.count, hi);
    const std::int64_t skip_end = stream.skip_first + stream.skip_count;
    take(Run{s, lo, std::min(end, stream.skip_first)});
    take(Run{s, std::max(lo, skip_end), end});
  };
  bool more = false;
  std::size_t piece_bytes = 0;
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    more = more || (!streams_[s].direct && streams_[s].count > hi);
    runs_in(s, [&](const Run& run) {
      if (run.from < run.to) piece_bytes += static_cast<std::size_t>(run.to - run.from) * element_;
    });
  }
  // How each run is copied depends on the piece's size (handoff.hpp).
  std::byte* area = group_.mailboxes->contribution_area();
  Handoff& handoff = group_.mailboxes->handoff();
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    runs_in(s, [&](const Run& run) {
      if (run.from >= run.to) return;
      handoff.copy(area + stream_offset(static_cast<int>(s)) + static_cast<std::size_t>(run.from - lo) * element_,
                   streams_[s].data + static_cast<std::size_t>(run.from) * element_,
                   static_cast<std::size_t>(run.to - run.from) * element_, piece_bytes);
    });
  }
  *reinterpret_cast<Preamble*>(area) = preamble_of(call_, more, false);
  if (call_.kind == CallKind::alltoallv) {
    auto* counts = reinterpret_cast<std::int64_t*>(area + sizeof(Preamble));
    std::copy(send_counts_.begin(), send_counts_.end(), counts);
    std::copy(recv_counts_.begin(), recv_counts_.end(), counts + group_.size);
    if (piece_ == 0) write_addresses(area);  // read with the counts, at the first piece
  }
  stamp_ = group_.mailboxes->publish(0, kind_);
  if (sends_only_ && piece_ == 0 && !more) {
    // All it sends is in its mailbox: the peers take it from there.
    if (own_bytes_ > 0 && own_into_ != own_from_) std::memmove(own_into_, own_from_, own_bytes_);
    over_ = true;
  }
}

ImmediateCollective::Progress LocalExchange::step() {
  if (over_ || !ready()) return over_ ? Progress::over : Progress::none;
  if (!arrived()) {
    lose_missing_peer();
  } else if (acknowledging_) {
    over_ = true;  // every peer has read what it needed of this rank's buffers
  } else if (piece_ > 0 || calls_agree()) {
    single_copy_ ? read_in_place() : take_piece();
  }
  return over_ ? Progress::over : Progress::some;
}

bool LocalExchange::calls_agree() {
  const int n = group_.size;
  const Preamble mine = preamble_of(call_, false, single_copy_);
  // The ranks whose calls it compares: every one, or this one and only_.
  const auto compared = [&](int r) { return only_ < 0 || r == only_ || r == group_.rank; };
  bool agree = true;
  for (int r = 0; r < n && agree; ++r) {
    if (!compared(r)) continue;
    const Mailboxes::Header* part = mailboxes().arrived(r, stamp_);
    // A peer in an allreduce (local_allreduce.hpp) wrote values, not a call.
    agree = Mailboxes::call_of(part->kind) != CallKind::allreduce && same_call(preamble(Mailboxes::data(part)), mine);
  }
  if (!agree) {
    std::vector<Call> calls;
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r) {
      if (!compared(r)) continue;
      ranks.push_back(r);
      const Mailboxes::Header* part = mailboxes().arrived(r, stamp_);
      if (Mailboxes::call_of(part->kind) == CallKind::allreduce) {
        calls.push_back({CallKind::allreduce, call_.sequence, static_cast<std::int64_t>(Mailboxes::dtype_of(part->kind)),
                         -1, static_cast<std::int64_t>(Mailboxes::op_of(part->kind))});
      } else {
        calls.push_back(call_of(preamble(Mailboxes::data(part)), call_.sequence));
      }
    }
    fail(DT_ERR_MISMATCH, describe_disagreement(calls, ranks));
    return false;
  }
  if (call_.kind != CallKind::alltoallv) return true;
  // Every rank's send counts against the receive counts of their
  // destinations: every rank sees every pair, so all decide alike.
  for (int from = 0; from < n; ++from) {
    const std::int64_t* sends = table(Mailboxes::data(mailboxes().arrived(from, stamp_)));
    for (int to = 0; to < n; ++to) {
      const std::int64_t* receives = table(Mailboxes::data(mailboxes().arrived(to, stamp_))) + n;
      if (from == to || sends[to] == receives[from]) continue;
      fail(DT_ERR_MISMATCH, "ranks disagree about alltoallv #" + std::to_string(call_.sequence) + ": " +
                                describe_rank(group_, from) + " sends " + std::to_string(sends[to]) + " elements to " +
                                describe_rank(group_, to) + ", which expects " + std::to_string(receives[from]));
      return false;
    }
  }
  return true;
}

void LocalExchange::take_piece() {
  const std::int64_t limit = piece_elements();
  const std::int64_t lo = piece_ * limit;
  const std::int64_t hi = lo + limit;
  const auto part = [this](int r) { return Mailboxes::data(mailboxes().arrived(r, stamp_)); };
  // The rank's own block, once the calls agree and before any peer's data
  // lands where, in place, it may have been.
  if (piece_ == 0 && own_bytes_ > 0 && own_into_ != own_from_) std::memmove(own_into_, own_from_, own_bytes_);
  if (piece_ == 0) {
    for (const Read& read : reads_) {
      if (read.direct && !read_direct(read)) return acknowledge(false);
    }
  }
  for (const Read& read : reads_) {
    if (read.direct) continue;
    const std::int64_t from = std::max(read.first, lo);
    const std::int64_t to = std::min(read.first + read.count, hi);
    if (from >= to) continue;
    std::memcpy(read.into + static_cast<std::size_t>(from - read.first) * element_,
                part(read.peer) + stream_offset(read.stream) + static_cast<std::size_t>(from - lo) * element_,
                static_cast<std::size_t>(to - from) * element_);
  }
  const std::int64_t from = std::max(reduce_first_, lo);
  const std::int64_t to = std::min(reduce_first_ + reduce_count_, hi);
  if (from < to) {
    const std::int64_t count = to - from;
    std::byte* into = reduce_into_ + static_cast<std::size_t>(from - reduce_first_) * element_;
    const std::byte* own = reduce_own_ + static_cast<std::size_t>(from - reduce_first_) * element_;
    const auto theirs = [&](int r) { return part(r) + stream_offset(0) + static_cast<std::size_t>(from - lo) * element_; };
    const int me = group_.rank;
    const int first_peer = me == 0 ? 1 : 0;
    combine_.apply(into, own, theirs(first_peer), count);
    for (int r = first_peer + 1; r < group_.size; ++r) {
      if (r != me) combine_.apply(into, theirs(r), count);
    }
    combine_.finish(into, count, group_.size);
  }
  // Awaiting only_ alone, it knows the call is one piece.
  bool more = false;
  for (int r = 0; r < group_.size && !more && only_ < 0; ++r) more = (preamble(part(r)).flags & kMore) != 0;
  if (more) {
    ++piece_;
    begin_piece();
  } else if (call_.kind == CallKind::alltoallv && mailboxes().readable()) {
    // Any rank's blocks may have been read in place: every rank says it
    // is done, and those whose blocks were read wait until all have.
    acknowledge(blocks_read_in_place_);
  } else {
    over_ = true;
  }
}

void LocalExchange::keep_streams_apart() {
  // What this rank writes while its peers read its streams.
  std::vector<std::pair<const std::byte*, std::size_t>> written;
  for (const Read& read : reads_) written.emplace_back(read.into, static_cast<std::size_t>(read.count) * element_);
  if (own_into_ != own_from_) written.emplace_back(own_into_, own_bytes_);
  const auto overlaps = [&](const Stream& stream) {
    const auto* first = stream.data;
    const std::size_t bytes = static_cast<std::size_t>(stream.count) * element_;
    return std::any_of(written.begin(), written.end(), [&](const auto& w) {
      return bytes > 0 && w.second > 0 && first < w.first + w.second && w.first < first + bytes;
    });
  };
  std::size_t aside = 0;
  for (const Stream& stream : streams_) aside += overlaps(stream) ? static_cast<std::size_t>(stream.count) * element_ : 0;
  if (aside == 0) return;
  // A stream that is also where this rank's result lands (a send buffer
  // inside recv) is read from a copy, as the mailboxes would have been.
  aside_.resize(aside);
  std::byte* next = aside_.data();
  for (Stream& stream : streams_) {
    if (!overlaps(stream)) continue;
    const std::size_t bytes = static_cast<std::size_t>(stream.count) * element_;
    std::memcpy(next, stream.data, bytes);
    stream.data = next;
    next += bytes;
  }
}

bool LocalExchange::read_direct(const Read& read) {
  if (read.count == 0) return true;
  const std::byte* part = Mailboxes::data(mailboxes().arrived(read.peer, stamp_));
  const std::uint64_t stream = reinterpret_cast<const std::uint64_t*>(part + addresses_offset())[read.stream];
  if (group_.mailboxes->read(read.peer, stream + static_cast<std::uint64_t>(read.first) * element_, read.into,
                             static_cast<std::size_t>(read.count) * element_)) {
    return true;
  }
  const int error = errno;
  fail(error == ESRCH ? DT_ERR_REMOTE : DT_ERR_TRANSPORT,
       "reading " + describe_rank(group_, read.peer) + "'s buffer: " + std::strerror(error));
  return false;
}

void LocalExchange::read_in_place() {
  if (own_bytes_ > 0 && own_into_ != own_from_) std::memmove(own_into_, own_from_, own_bytes_);
  for (const Read& read : reads_) {
    if (!read_direct(read)) break;
  }
  acknowledge(true);
}

void LocalExchange::acknowledge(bool read_by_peers) {
  // The peers' buffers are needed until every rank has read them: each
  // says it is done in its result part, and a rank whose buffers were read
  // ends once all have.
  group_.mailboxes->publish_result(stamp_);
  if (over_) return;
  if (!read_by_peers) {
    over_ = true;
    return;
  }
  acknowledging_ = true;
  next_ = 0;
}

std::unique_ptr<Operation> local_exchange(Collective collective, const Group& group) {
  return std::make_unique<ScheduledLocal<LocalExchange>>(std::move(collective), group);
}

}  // namespace dtrain::comm::ucx
