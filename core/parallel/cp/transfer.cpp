#include "parallel/cp/transfer.hpp"

#include <utility>
#include <vector>

namespace dtrain::parallel::cp {

Shift::Shift(comm::Communicator& comm, device::Queue& compute, device::Queue& transfers, const float* send,
             float* receive, std::int64_t count, int tag)
    : comm_(comm), compute_(compute), transfers_(transfers) {
  compute.signal(transfers.stream());
  const int size = comm.size();
  const int rank = comm.rank();
  const std::vector<comm::P2pOp> ops = {
      {true, transfers.view(const_cast<float*>(send), count, DType::f32), (rank + 1) % size, tag},
      {false, transfers.view(receive, count, DType::f32), (rank + size - 1) % size, tag},
  };
  request_ = comm.p2p_group(ops);
}

Shift::~Shift() {
  if (!request_) return;
  comm_.abort();
  settle();
}

void Shift::wait() {
  const comm::RequestPtr request = std::move(request_);
  request_ = nullptr;
  try {
    comm_.wait(request, -1);
  } catch (...) {
    settle();
    throw;
  }
  compute_.wait_for(transfers_.stream());
}

void Shift::settle() noexcept {
  try {
    transfers_.synchronize();
    compute_.wait_for(transfers_.stream());
  } catch (...) {
    // The device failed too; the call is already failing with its own error.
  }
}

}  // namespace dtrain::parallel::cp
