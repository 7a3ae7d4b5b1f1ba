// The search: every configuration of the cluster's GPUs as dp*tp*pp*cp*ep,
// with each ZeRO stage, schedule, virtual stage count, micro-batch size and
// recomputation the options allow, each evaluated; the fastest kept,
// ranked by step time, and the rejected ones counted by reason.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/estimate.hpp"

namespace dtrain::plan {

struct Rejections {
  std::int64_t count = 0;  // configurations rejected for this reason
  Config example;          // the first one
  std::string message;     // and why
};

struct Plan {
  Transformer model;
  Cluster cluster;
  Options options;
  std::vector<Estimate> ranked;  // at most options.keep, fastest first
  std::int64_t evaluated = 0;    // configurations looked at
  std::int64_t feasible = 0;
  std::array<Rejections, static_cast<std::size_t>(Reason::count)> rejected;  // by Reason
  double seconds = 0;                                                        // the search's wall time
};

// Throws DT_ERR_INVALID_ARGUMENT for a model, cluster or options that make
// no search (named in the message). A configuration rejected for its mesh
// shape counts once, not once per variant.
Plan search(const Transformer& t, const Cluster& c, const Options& options);

// Throws DT_ERR_INVALID_ARGUMENT for options out of range.
void check(const Options& options);

}  // namespace dtrain::plan
