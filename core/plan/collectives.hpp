// Time of a collective over a group of GPUs under the alpha-beta model:
// a message of B bytes over a link costs alpha + B / beta. Rings move
// (n - 1)/n of the data per rank in n - 1 steps; a group that spans nodes
// runs hierarchically (inside each node, then across nodes on 1/k of the
// data, k members per node, each member on its own NIC). docs/planner.md,
// "Communication", derives each formula.
#pragma once

#include "plan/cluster.hpp"

namespace dtrain::plan {

// A group of `size` GPUs, `local` of them in each node it spans
// (local == size: all in one node; local == 1: one per node).
struct Group {
  int size = 1;
  int local = 1;
};

// The group of a mesh dimension of `size` ranks whose neighbours are
// `stride` ranks apart (the product of the sizes of the dimensions inside
// it), on nodes of `gpus_per_node` consecutive ranks.
Group group_of(int size, int stride, int gpus_per_node);

// Flat rings on one link, `bytes` being the whole buffer (allreduce), or the
// gathered result (allgather) or the input (reduce-scatter).
double ring_allreduce(int n, double bytes, const Link& link);
double ring_allgather(int n, double bytes, const Link& link);
// A pipelined binary tree (NCCL's for small messages): 2 log2(n) latencies,
// the data through once up and once down.
double tree_allreduce(int n, double bytes, const Link& link);

// On a group of the cluster: hierarchical when it spans nodes; allreduce
// takes the faster of ring and tree.
double allreduce(const Group& g, double bytes, const Cluster& c);
double allgather(const Group& g, double bytes, const Cluster& c);
double reduce_scatter(const Group& g, double bytes, const Cluster& c);
// Every rank sends bytes/n to each other rank: the share for ranks of its
// node over the intra link, the rest over the inter link.
double alltoall(const Group& g, double bytes, const Cluster& c);
// One message between neighbours of a dimension: within a node when the
// dimension's stride keeps them there.
double send(double bytes, bool same_node, const Cluster& c);

}  // namespace dtrain::plan
