#include "comm/backends/ucx/tuning.hpp"

#include <climits>
#include <string>

#include "base/env.hpp"
#include "base/error.hpp"

namespace dtrain::comm::ucx {

namespace {

struct Choice {
  const char* name;
  Algorithm algorithm;
};

Algorithm read_algorithm(const char* variable, Algorithm fallback, std::initializer_list<Choice> choices) {
  auto text = env::get(variable);
  if (!text) return fallback;
  std::string allowed;
  for (const Choice& c : choices) {
    if (*text == c.name) return c.algorithm;
    allowed += allowed.empty() ? "" : ", ";
    allowed += c.name;
  }
  raise(DT_ERR_INVALID_ARGUMENT, std::string(variable) + "='" + *text + "' is not one of " + allowed);
}

}  // namespace

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::automatic: return "auto";
    case Algorithm::ring: return "ring";
    case Algorithm::recursive_doubling: return "rd";
    case Algorithm::halving_doubling: return "rhd";
    case Algorithm::bruck: return "bruck";
    case Algorithm::pipeline: return "pipeline";
    case Algorithm::tree: return "tree";
  }
  return "?";
}

Tuning Tuning::from_env() {
  Tuning t;
  t.allreduce = read_algorithm("DTRAIN_ALLREDUCE_ALGO", t.allreduce,
                               {{"auto", Algorithm::automatic},
                                {"ring", Algorithm::ring},
                                {"rd", Algorithm::recursive_doubling},
                                {"rhd", Algorithm::halving_doubling}});
  t.reduce_scatter = read_algorithm("DTRAIN_REDUCE_SCATTER_ALGO", t.reduce_scatter,
                                    {{"auto", Algorithm::automatic},
                                     {"ring", Algorithm::ring},
                                     {"rd", Algorithm::recursive_doubling}});
  t.allgather = read_algorithm("DTRAIN_ALLGATHER_ALGO", t.allgather,
                               {{"auto", Algorithm::automatic}, {"ring", Algorithm::ring}, {"bruck", Algorithm::bruck}});
  t.broadcast = read_algorithm("DTRAIN_BROADCAST_ALGO", t.broadcast,
                               {{"auto", Algorithm::automatic},
                                {"pipeline", Algorithm::pipeline},
                                {"tree", Algorithm::tree}});
  if (auto v = env::get_int("DTRAIN_UCX_SMALL_BYTES", 0, INT_MAX)) t.small_bytes = static_cast<std::size_t>(*v);
  if (auto v = env::get_int("DTRAIN_UCX_LOCAL_BYTES", 0, 1 << 30)) t.local_bytes = static_cast<std::size_t>(*v);
  if (auto v = env::get_int("DTRAIN_UCX_SINGLE_COPY_BYTES", 0, INT_MAX)) {
    t.single_copy_bytes = static_cast<std::size_t>(*v);
  }
  if (auto v = env::get_int("DTRAIN_UCX_HALVING_BYTES", 0, INT_MAX)) t.halving_bytes = static_cast<std::size_t>(*v);
  if (auto v = env::get_int("DTRAIN_UCX_CHUNK_BYTES", 1024, INT_MAX)) t.chunk_bytes = static_cast<std::size_t>(*v);
  if (auto v = env::get_int("DTRAIN_UCX_PIPELINE_DEPTH", 1, 64)) t.pipeline_depth = *v;
  if (auto v = env::get_int("DTRAIN_UCX_SPIN_US", 0, 1000000)) t.spin_us = *v;
  return t;
}

// The ring moves 2(n-1)/n of the buffer per rank in 2(n-1) steps and
// halving-doubling as much in 2 log2(n) steps; recursive doubling moves the
// whole buffer log2(n) times in about log2(n) steps. The fewest steps win
// for small buffers, the more so the fewer ranks share the volume: on shared
// memory recursive doubling led up to 32 KiB at 2 ranks but only to 8-16 KiB
// at 4, where halving-doubling led up to 64 KiB and the ring's pipeline
// beyond (at 2 ranks the ring leads from 64 KiB). The ring also needs at
// least one element per rank.
Algorithm Tuning::pick_allreduce(std::size_t bytes, std::int64_t count, int size) const {
  if (allreduce != Algorithm::automatic) return allreduce;
  if (count < size || bytes * static_cast<std::size_t>(size - 1) < small_bytes) return Algorithm::recursive_doubling;
  if (size > 2 && bytes <= halving_bytes) return Algorithm::halving_doubling;
  return Algorithm::ring;
}

Algorithm Tuning::pick_reduce_scatter(std::size_t total_bytes, int) const {
  if (reduce_scatter != Algorithm::automatic) return reduce_scatter;
  return total_bytes <= small_bytes ? Algorithm::recursive_doubling : Algorithm::ring;
}

Algorithm Tuning::pick_allgather(std::size_t total_bytes, int) const {
  if (allgather != Algorithm::automatic) return allgather;
  return total_bytes <= small_bytes ? Algorithm::bruck : Algorithm::ring;
}

Algorithm Tuning::pick_broadcast(std::size_t bytes, int size) const {
  if (broadcast != Algorithm::automatic) return broadcast;
  return bytes <= small_bytes || size <= 2 ? Algorithm::tree : Algorithm::pipeline;
}

}  // namespace dtrain::comm::ucx
