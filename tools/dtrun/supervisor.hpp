// Watches the ranks of a job until all have exited: copies their output,
// forwards SIGINT and SIGTERM, and fails fast — when one rank fails, the
// others get SIGTERM and, after the grace period, SIGKILL.
#pragma once

#include <vector>

#include "rank_process.hpp"

namespace dtrun {

// Installs dtrun's signal handling. Call before starting any rank, so that
// no child's exit goes unnoticed.
void install_signal_handlers();

// Runs until every rank has exited; returns dtrun's exit status: 0 when
// every rank exited 0, otherwise the status of the first rank that failed.
int supervise(std::vector<RankProcess>& ranks, double grace_seconds);

}  // namespace dtrun
