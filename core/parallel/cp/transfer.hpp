// One float buffer on its way to or from a neighbour in the ring, started at
// once and waited for later, so that the attention of the current block runs
// while the next one moves.
#pragma once

#include <cstdint>

#include "comm/communicator.hpp"

namespace dtrain::parallel::cp {

class Transfer {
 public:
  enum class Direction { send, receive };

  // Starts sending `count` floats at `data` to `peer`, or receiving them
  // from it, with `tag`. The buffer must outlive the transfer.
  Transfer(comm::Communicator& comm, Direction direction, float* data, std::int64_t count, int peer, int tag);
  // A transfer left before it was waited for (an exception unwinding the
  // ring) aborts the communicator, so that the transport stops touching a
  // buffer about to be freed.
  ~Transfer();

  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Waits within the communicator's deadline; throws its error.
  void wait();

 private:
  comm::Communicator& comm_;
  comm::RequestPtr request_;
};

}  // namespace dtrain::parallel::cp
