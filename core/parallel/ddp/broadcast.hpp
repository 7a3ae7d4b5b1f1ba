// Makes replicas start identical: every rank's parameters become root's.
// Without it each rank would train from its own random initialisation and
// the averaged gradients would be applied to different models.
#pragma once

#include "base/tensor_list.hpp"
#include "comm/communicator.hpp"

namespace dtrain::parallel::ddp {

// Collective over `comm`; blocking, within the communicator's deadline.
// Parameters may have any supported dtype (integer buffers such as step
// counters included). Ranks first agree on the list, as DataParallel does:
// DT_ERR_MISMATCH on every rank when counts, dtypes, shapes or roots differ;
// a rank whose own arguments are bad (a refused parse of `parameters`
// included) throws DT_ERR_INVALID_ARGUMENT and the others DT_ERR_MISMATCH.
void broadcast_parameters(comm::Communicator& comm, const ParsedTensors& parameters, int root);

}  // namespace dtrain::parallel::ddp
