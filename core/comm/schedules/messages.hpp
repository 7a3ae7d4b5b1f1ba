// What the schedules need of a transport: tagged messages to and from the
// ranks of a communicator, each tracked by a Transfer that the transport
// completes. The schedules (algorithms.hpp) are written against this
// interface alone; a transport (the UCX backend's UCP worker, say)
// implements it. Nothing here names a transport's own types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtrain::comm::schedule {

// A message's tag; the layout is tags.hpp's. A receive matches all 64 bits.
using Tag = std::uint64_t;

// How a transfer ended.
enum class MessageStatus : std::uint8_t {
  ok,
  truncated,      // a receive got another number of bytes than it expected
  out_of_memory,  // the transport could not allocate what the message needs
  lost,           // the peer is gone, or the transfer was cancelled
};

// One message in flight. The transport calls back into it on completion, so
// it must not move or die while pending(); operations keep theirs in stable
// storage.
struct Transfer {
  // Told when the transfer fails, so the operation does not wait for others.
  struct Owner {
    virtual void transfer_failed(const Transfer& transfer) = 0;

   protected:
    ~Owner() = default;
  };

  Owner* owner = nullptr;
  int peer = -1;
  bool receive = false;
  std::size_t bytes = 0;     // sent, or expected
  std::size_t received = 0;  // what arrived (receives)
  MessageStatus status = MessageStatus::ok;
  // The transport's own code for how it ended, for Messages::loss().
  std::int32_t cause = 0;
  bool in_flight = false;
  bool posting = false;  // inside the posting call, where the transport may already call back
  void* handle = nullptr;  // the transport's request

  bool pending() const { return in_flight; }
  bool ok() const { return !in_flight && status == MessageStatus::ok; }
};

class Messages {
 public:
  // Posts a tagged send or receive of `bytes` bytes. Either may complete
  // before returning; failures complete the transfer with an error status
  // rather than throwing. A send to a peer that is gone fails at once; a
  // receive from one still gets what it sent before it went.
  virtual void send(Transfer& transfer, int peer, Tag tag, const void* data, std::size_t bytes) = 0;
  virtual void recv(Transfer& transfer, int peer, Tag tag, void* data, std::size_t bytes) = 0;
  // Asks for a pending receive to be cancelled; it then completes as lost
  // (or ok, if the data had already arrived).
  virtual void cancel(Transfer& transfer) = 0;
  // Failed, closed or departed: nothing more will come from `peer`.
  virtual bool gone(int peer) const = 0;
  // Why `peer` is of no more use, for messages: "has left (...)" or
  // "failed (...)"; `cause` is a transfer's (0: none).
  virtual std::string loss(int peer, std::int32_t cause) const = 0;

 protected:
  ~Messages() = default;
};

}  // namespace dtrain::comm::schedule
