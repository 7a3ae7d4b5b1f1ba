// The summary dtrun prints when a job fails, in the manner of torchrun's
// ChildFailedError: the first failure (its root cause) and then every rank
// of this node that did not exit 0, with how it ended.
#pragma once

#include <string>
#include <vector>

#include "rank_process.hpp"
#include "supervisor.hpp"

namespace dtrun {

// The report for `outcome`, "" when the job succeeded. `node` names this
// node ("node 0 of 2"; "" with one node).
std::string failure_report(const std::vector<RankProcess>& ranks, const Outcome& outcome, const std::string& node);

}  // namespace dtrun
