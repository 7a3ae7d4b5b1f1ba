// The flight recorder: what every communicator of this process was doing,
// written to a file when something goes wrong, so that the ranks' files
// together show which rank is behind and on which operation
// (`dtrun --analyze DIR`).
//
// With DTRAIN_FLIGHT_RECORDER_DIR=DIR (dtrun sets it to LOG_DIR/flight
// under --log-dir) each process writes DIR/flight.rank<R>.jsonl when one of
// its communicators times out, loses a peer (DT_ERR_REMOTE,
// DT_ERR_TRANSPORT), finds the ranks disagree about a collective
// (DT_ERR_MISMATCH) or is aborted (dt_comm_abort), and when it receives
// SIGUSR1 (the handler is installed only where SIGUSR1 had its default
// action; then the empty file DIR/sigusr1.<pid> says so, and dtrun asks
// such ranks for their records with SIGUSR1 before it stops a failed
// job). A later dump replaces the file (written beside it, then
// renamed), so the file holds the latest state. Without the variable
// nothing is written; the rings are kept either way (op_log.hpp).
//
// The file is JSON Lines: one flat object per line, strings and integers.
//   {"record":"process","format":1,"world_rank":R,"pid":P,"time_us":T,"reason":"..."}
//   {"record":"comm","comm":"c0","comm_rank":r,"comm_size":n,"backend":"ucx","failure":"..."}
//   {"record":"op","comm":"c0","id":7,"seq":5,"kind":"allreduce","dtype":"float32","count":2,
//    "op":"sum","root":-1,"tag":-1,"bytes":8,"state":"started","status":"DT_INPROGRESS",
//    "start_us":..,"end_us":0,"what":"allreduce #5 (2 float32, sum)"}
// one "comm" line per communicator, followed by its operations oldest
// first. `comm` labels a communicator alike on every rank ("c0" for the
// first dt_comm_create, "c0.s1.k2" for the ranks of color 2 of its first
// split). `seq` numbers collectives from 1 (0 for point-to-point); `state`
// is started, completed or failed; times are microseconds since the Unix
// epoch, end_us 0 while started; `failure` is why the communicator broke
// ("" while it works).
#pragma once

#include <string>

namespace dtrain::comm {
class OpLog;
}

namespace dtrain::comm::flight {

// Adds and removes a communicator's log from what a dump writes.
void enroll(OpLog* log);
void withdraw(OpLog* log);

// Writes every enrolled log with `reason` when DTRAIN_FLIGHT_RECORDER_DIR
// is set; never throws (a file that cannot be written is logged).
void dump(const std::string& reason);

}  // namespace dtrain::comm::flight
