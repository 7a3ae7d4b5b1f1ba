// The timeline: with DTRAIN_TRACE_FILE=PATH every operation of every
// communicator of this process is written to PATH.rank<R> (R: the
// process's rank in its job) as a Chrome trace event, viewable in
// Perfetto (ui.perfetto.dev) or chrome://tracing.
//
// The file is a JSON array in Chrome's "JSON Array Format", one event per
// line:
//   [
//   {"name":"process_name","ph":"M","pid":R,"args":{"name":"rank R"}},
//   {"name":"thread_name","ph":"M","pid":R,"tid":T,"args":{"name":"comm c0 (rank r of n)"}},
//   {"name":"allreduce","cat":"collective","ph":"X","pid":R,"tid":T,"ts":..,"dur":..,"args":{...}},
//   ...
//   ]
// pid is the job rank, tid one per communicator (named by its label); ts
// (start) and dur are microseconds on the wall clock, so that ranks of
// one host line up. args: comm, comm_rank, comm_size, backend, id (the
// communicator's operation number), seq (its collective number, 0 for
// point-to-point), bytes, dtype, count, op, root or peer, tag (ops of a
// p2p_group), status ("DT_OK" or the error). "cat" is "collective" or
// "p2p". The closing "]" is written at exit (and the file flushed whenever a
// communicator is destroyed); a process that dies leaves it out, which
// Chrome and Perfetto accept, and which `dtrun --trace` tolerates when it
// merges the ranks' files into PATH.
//
// Work that is not a communicator's operation (a pipeline stage's forward,
// its wait for an activation) is written the same way as a span on a
// thread of its own name.
#pragma once

#include <cstdint>
#include <string>

#include "comm/op_log.hpp"

namespace dtrain::comm::trace {

// Whether DTRAIN_TRACE_FILE is set (read once per process).
bool enabled();
// Appends `record`, a finished operation of `log`.
void write(const OpLog& log, const OpRecord& record);

// A finished piece of work on this process's thread named `thread` (one
// tid per name): `name` and `category` become the event's "name" and
// "cat", `args` the members of its "args" object (JSON text without the
// braces, "" for none); times are steady_ns().
struct Span {
  std::string thread;
  std::string name;
  const char* category;
  std::int64_t start_ns;
  std::int64_t end_ns;
  std::string args;
};
void write_span(int world_rank, const Span& span);
// Writes what is buffered to the file.
void flush();

// Microseconds since the Unix epoch of a steady-clock time (OpRecord's).
std::int64_t wall_us(std::int64_t steady_ns);

}  // namespace dtrain::comm::trace
