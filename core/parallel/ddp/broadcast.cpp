#include "parallel/ddp/broadcast.hpp"

#include <exception>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "parallel/common/agreement.hpp"

namespace dtrain::parallel::ddp {

void broadcast_parameters(comm::Communicator& comm, const ParsedTensors& parameters, int root) {
  std::vector<TensorLayout> layouts;
  std::exception_ptr failure;
  try {
    if (root < 0 || root >= comm.size()) {
      raise(DT_ERR_INVALID_ARGUMENT, "root " + std::to_string(root) +
                                         " is not a rank of this communicator (size " +
                                         std::to_string(comm.size()) + ")");
    }
    for (const CheckedTensor& parameter : parameters.get()) layouts.push_back(parameter.layout);
  } catch (...) {
    failure = std::current_exception();
  }
  common::agree_on_layout(comm, {"parameter broadcast", "parameter"}, layouts, {{"root", root}}, failure);

  // All at once: collectives on one communicator run in the order issued,
  // and the latency of one overlaps the setup of the next.
  std::vector<comm::RequestPtr> requests;
  for (const CheckedTensor& parameter : parameters.get()) {
    if (parameter.view.count > 0) requests.push_back(comm.broadcast(parameter.view, root));
  }
  for (const auto& request : requests) comm.wait(request, -1);
}

}  // namespace dtrain::parallel::ddp
