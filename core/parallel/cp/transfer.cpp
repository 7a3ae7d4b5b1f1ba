#include "parallel/cp/transfer.hpp"

#include <utility>


namespace dtrain::parallel::cp {

Transfer::Transfer(comm::Communicator& comm, Direction direction, float* data, std::int64_t count, int peer, int tag)
    : comm_(comm) {
  const TensorView buffer = host_view(data, count, DType::f32);
  request_ = direction == Direction::send ? comm.send(buffer, peer, tag) : comm.recv(buffer, peer, tag);
}

Transfer::~Transfer() {
  if (request_) comm_.abort();
}

void Transfer::wait() {
  const comm::RequestPtr request = std::move(request_);
  request_ = nullptr;
  comm_.wait(request, -1);
}

}  // namespace dtrain::parallel::cp
