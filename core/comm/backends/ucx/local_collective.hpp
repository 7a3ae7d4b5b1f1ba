// What the collectives through the ranks' mailboxes (local_allreduce.hpp,
// local_exchange.hpp) share: each step waits until every rank has published
// its part of the current operation (or, for a rank that reads one peer's
// alone, that peer: only_), or until the first one missing is gone (what it
// wrote before going still counts, as a message it sent would).
// Before its first write an operation may also have to wait for its peers
// to be done with the contribution it replaces (Mailboxes::clearance()).
// Nothing is ever in flight, since a rank only writes its own mailbox, and
// nothing signals an arrival, so whoever drives them polls.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/backends/ucx/group.hpp"
#include "comm/backends/ucx/immediate_collective.hpp"
#include "comm/backends/ucx/mailboxes.hpp"

namespace dtrain::comm::ucx {

class LocalCollective : public ImmediateCollective {
 public:
  // Plans the operation (prepare()) and writes its first part (begin())
  // once the mailboxes allow.
  void start(const Group& group, std::uint64_t sequence, const Collective& collective) final;
  // Until the first part is written, waits for the peers that must be done
  // with the contribution it replaces; then step().
  Progress advance() final;
  Outcome outcome() const override { return outcome_; }
  bool quiescent() const override { return true; }
  // Whether `peer`'s part for the current step is still awaited.
  bool involves(int peer) const override;
  // The first rank whose part has not arrived.
  int waiting_on() const override;
  int cancel(Transport&) override { return -1; }
  bool polled() const override { return true; }

  // Every rank whose part has not arrived.
  std::vector<int> missing() const;
  // Whether advance() can take a step: every awaited part of the current
  // one is there, or the first one missing is from a peer that is gone.
  bool ready() const { return over_ || arrived() || group_.transport->gone(next_); }

 protected:
  // Everything start() does before writing to the mailbox.
  virtual void prepare(std::uint64_t sequence, const Collective& collective) = 0;
  // Writes the operation's first part; sets next_ for the step it awaits.
  virtual void begin() = 0;
  // advance() once begun.
  virtual Progress step() = 0;
  const Mailboxes& mailboxes() const { return *group_.mailboxes; }
  // The part of their mailboxes the current step reads.
  virtual Mailboxes::Part awaited() const { return Mailboxes::Part::contribution; }
  // Whether every part of the current step is there. Remembers how far it
  // got, so each peer's stamp is looked at until it is seen.
  bool arrived() const;
  // Whether `peer`'s part of the current step is there.
  bool has_part(int peer) const;
  // Ends the operation: the first rank whose part is missing is gone.
  void lose_missing_peer();
  // Ends the operation with `status`.
  void fail(dt_status status, std::string why);

  Group group_;
  std::uint64_t stamp_ = 0;  // the current step's mailbox operation
  mutable int next_ = 0;     // ranks below it have written the current part
  bool over_ = false;
  bool clearing_ = false;  // not begun: waiting for the peers to have written stamp_
  int only_ = -1;          // once begun, the one peer whose parts it awaits, or -1: all
  Outcome outcome_;
};

}  // namespace dtrain::comm::ucx
