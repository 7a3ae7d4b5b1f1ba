// Merges the ranks' Chrome traces (DTRAIN_TRACE_FILE=PATH makes each rank
// write PATH.rank<R>, core/comm/trace_file.hpp) into one file, PATH, in
// Chrome's JSON Object Format: {"traceEvents":[...],"displayTimeUnit":"ms"}.
// A rank's file that lacks its closing "]" (the rank died) is taken as far
// as its last complete line. The ranks' files are left in place.
#pragma once

#include <string>

namespace dtrun {

// Merges PATH.rank0 .. PATH.rank<world_size - 1> (those that exist) into
// PATH; returns how many ranks' files were merged. Throws
// std::runtime_error when PATH cannot be written.
int merge_traces(const std::string& path, int world_size);

}  // namespace dtrun
