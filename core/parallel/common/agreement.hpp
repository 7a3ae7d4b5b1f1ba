// Before ranks work on a list of tensors together they check that they all
// mean the same list; otherwise collectives of different sizes would hang or
// mix unrelated data. One small allgather compares a digest of the layout and
// the settings; only when digests differ does a second exchange find the
// first tensor that differs, so that every rank can say which and where.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "base/tensor_list.hpp"

namespace dtrain::parallel::common {

struct Setting {
  std::string name;
  std::int64_t value;
};

struct AgreementSubject {
  std::string context;  // what is being set up: "dt_ddp_create"
  std::string item;     // what one tensor is called: "gradient"
};

// Collective over `comm`. `local_failure`, when set, is this rank's own
// refusal of its arguments: the rank still takes part, so that the others
// hear of it instead of waiting for collectives that never come, and then
// rethrows it. Every other rank throws DT_ERR_MISMATCH, all with the same
// message, when a rank refused its arguments or ranks disagree about a
// setting, the number of tensors or a tensor's dtype or shape (naming the
// first such tensor and the lowest rank that differs from rank 0).
void agree_on_layout(comm::Communicator& comm, const AgreementSubject& subject,
                     const std::vector<TensorLayout>& tensors, const std::vector<Setting>& settings,
                     const std::exception_ptr& local_failure);

}  // namespace dtrain::parallel::common
