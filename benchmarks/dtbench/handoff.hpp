// dtbench handoff: what it costs to hand bytes from one core to another
// through shared memory, written through the cache or streamed around it.
#pragma once

namespace dtbench {

// argv[0] is "handoff". Returns the process exit status: 0 also where fewer
// than two CPUs are available (it prints a "skipped: ..." line saying why),
// 1 when the results cannot be written; bad options exit with 2.
int run_handoff(int argc, char** argv);

}  // namespace dtbench
