// Before dtrun stops a failed job, it asks each rank still running for its
// flight record, so that the analysis sees every rank, not only those
// whose own deadline came first (flight_recorder.hpp: a rank that listens
// for SIGUSR1 says so with DIR/sigusr1.<pid>).
#pragma once

#include <string>
#include <vector>

#include "rank_process.hpp"

namespace dtrun {

// Sends SIGUSR1 to the running ranks that listen for it, and waits until
// each that is not stopped has written DIR/flight.rank<R>.jsonl anew, at
// most `wait_seconds`.
void request_flight_records(const std::string& dir, const std::vector<RankProcess>& ranks, double wait_seconds);

}  // namespace dtrun
