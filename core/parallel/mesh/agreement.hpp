// Before ranks build a mesh or a mesh communicator together, they check that
// they all asked for the same thing: one small allgather of a fixed-size
// record per rank. A rank that refused its own arguments still takes part,
// so the others hear of it instead of waiting in a split that never comes.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace dtrain::parallel::mesh {

using Record = std::vector<std::int64_t>;

// Collective over `comm`; every rank passes a record of the same length.
// `local_failure` set: this rank's record is not looked at, and after the
// exchange the failure is rethrown. Otherwise throws DT_ERR_MISMATCH, with
// the same message on every rank ("<context>: ranks disagree: ..."), when a
// rank refused its arguments or a record differs from rank 0's, describing
// both with `describe`.
void agree_on_record(comm::Communicator& comm, const std::string& context, const Record& record,
                     const std::exception_ptr& local_failure,
                     const std::function<std::string(const Record&)>& describe);

}  // namespace dtrain::parallel::mesh
