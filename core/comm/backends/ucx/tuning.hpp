// Which algorithm each collective uses, and the knobs of the pipelined ones.
// Defaults choose by message size; every choice can be forced through the
// environment (read once, when a communicator is created):
//
//   DTRAIN_ALLREDUCE_ALGO       auto | ring | rd | rhd  (rd: recursive
//                               doubling, rhd: recursive halving-doubling)
//   DTRAIN_REDUCE_SCATTER_ALGO  auto | ring | rd     (rd: the whole vector
//                               reduced by recursive doubling, each rank
//                               keeping its block)
//   DTRAIN_ALLGATHER_ALGO       auto | ring | bruck
//   DTRAIN_BROADCAST_ALGO       auto | pipeline | tree  (tree: binomial)
//   DTRAIN_UCX_SMALL_BYTES      size up to which "auto" picks the
//                               latency-bound algorithm (default 65536);
//                               allreduce: size times (ranks - 1) below which
//                               it picks recursive doubling
//   DTRAIN_UCX_LOCAL_BYTES      where every rank runs on one host,
//                               collectives go through shared memory
//                               rather than UCX (those with an algorithm
//                               above when it is "auto"; alltoall(v) and the
//                               rooted and uneven ones always), in pieces
//                               of up to this many bytes (default 1048576;
//                               0: never). Each rank's mailbox takes six
//                               times as much. Ranks agree on the smallest.
//   DTRAIN_UCX_SINGLE_COPY_BYTES through shared memory, allgather(v),
//                               broadcast, gather and scatter of at least
//                               this many bytes in all (default 262144;
//                               0: never), and the alltoall(v) blocks of at
//                               least this many bytes over the ranks, are
//                               read by each rank straight from its peers'
//                               buffers (process_vm_readv) instead of
//                               through their mailboxes: one copy instead
//                               of two. Only where every rank may read
//                               every other's memory and (but for
//                               alltoall(v)) the ranks do not outnumber
//                               their cores.
//   DTRAIN_UCX_HALVING_BYTES    allreduce on more than 2 ranks: size up to
//                               which "auto" picks halving-doubling rather
//                               than the ring (default 65536)
//   DTRAIN_UCX_CHUNK_BYTES      pipeline chunk (default 131072)
//   DTRAIN_UCX_PIPELINE_DEPTH   chunks in flight per operation (default 4)
//   DTRAIN_UCX_SPIN_US          how long a waiting call polls the worker
//                               without an event (yielding the core while
//                               another rank needs it) before sleeping on its
//                               event fd (default 2000)
#pragma once

#include <cstddef>
#include <cstdint>

namespace dtrain::comm::ucx {

enum class Algorithm { automatic, ring, recursive_doubling, halving_doubling, bruck, pipeline, tree };

struct Tuning {
  Algorithm allreduce = Algorithm::automatic;
  Algorithm reduce_scatter = Algorithm::automatic;
  Algorithm allgather = Algorithm::automatic;
  Algorithm broadcast = Algorithm::automatic;
  std::size_t small_bytes = 64 * 1024;
  std::size_t local_bytes = 1024 * 1024;
  std::size_t single_copy_bytes = 256 * 1024;
  std::size_t halving_bytes = 64 * 1024;
  std::size_t chunk_bytes = 128 * 1024;
  int pipeline_depth = 4;
  int spin_us = 2000;

  // The defaults overridden by the variables above; a bad value throws
  // DT_ERR_INVALID_ARGUMENT naming the variable.
  static Tuning from_env();

  // The algorithm to run for `bytes` (the whole buffer each rank ends with)
  // on `size` ranks.
  Algorithm pick_allreduce(std::size_t bytes, std::int64_t count, int size) const;
  Algorithm pick_reduce_scatter(std::size_t total_bytes, int size) const;
  Algorithm pick_allgather(std::size_t total_bytes, int size) const;
  Algorithm pick_broadcast(std::size_t bytes, int size) const;
};

const char* algorithm_name(Algorithm algorithm);

}  // namespace dtrain::comm::ucx
