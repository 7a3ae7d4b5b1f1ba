// Collective entry points and the arguments only the C layer can see (a
// NULL `out`, an options version this library does not know). A
// rank that refuses them must still take part in the agreement the core
// runs first, or the other ranks would wait for collectives that never
// come: it joins as a rank that refused, and the others get
// DT_ERR_MISMATCH naming it.
#pragma once

#include <exception>
#include <vector>

#include "base/error.hpp"
#include "comm/communicator.hpp"
#include "parallel/common/agreement.hpp"

namespace dtrain::capi {

// Takes part in the agreement on `subject` that the other ranks run, with
// as many `settings` as theirs (their values are not looked at), then
// rethrows this rank's own error.
[[noreturn]] inline void refuse_together(comm::Communicator& comm, const parallel::common::AgreementSubject& subject,
                                         const std::vector<parallel::common::Setting>& settings,
                                         std::exception_ptr failure) {
  parallel::common::agree_on_layout(comm, subject, {}, settings, failure);
  std::rethrow_exception(failure);  // not reached: agree_on_layout rethrows it
}

}  // namespace dtrain::capi
