#include "plan/collectives.hpp"

#include <algorithm>
#include <cmath>

namespace dtrain::plan {

Group group_of(int size, int stride, int gpus_per_node) {
  Group g;
  g.size = size;
  // Neighbours `stride` apart: a node of G ranks holds G / stride of them,
  // and never more than the group.
  // A group that does not tile the nodes (tp = 6 on nodes of 8) has members
  // on both sides of a node boundary in some ring: it runs at the pace of
  // the link between nodes, as if one member were on each.
  g.local = 1;
  if (stride >= gpus_per_node || gpus_per_node % stride != 0) return g;
  const int per_node = gpus_per_node / stride;
  if (size <= per_node && per_node % size == 0) g.local = size;
  if (size > per_node && size % per_node == 0) g.local = per_node;
  return g;
}

double ring_allreduce(int n, double bytes, const Link& link) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) * (link.latency + bytes / n / link.bandwidth);
}

double ring_allgather(int n, double bytes, const Link& link) {
  if (n <= 1) return 0;
  return (n - 1) * (link.latency + bytes / n / link.bandwidth);
}

double tree_allreduce(int n, double bytes, const Link& link) {
  if (n <= 1) return 0;
  return 2.0 * std::ceil(std::log2(n)) * link.latency + 2.0 * bytes / link.bandwidth;
}

namespace {

double flat_allreduce(int n, double bytes, const Link& link) {
  return std::min(ring_allreduce(n, bytes, link), tree_allreduce(n, bytes, link));
}

int nodes_of(const Group& g) { return g.size / g.local; }

}  // namespace

double allreduce(const Group& g, double bytes, const Cluster& c) {
  if (g.local == g.size) return flat_allreduce(g.size, bytes, c.intra);
  // Reduce-scatter in the node, allreduce of 1/local across nodes, allgather in the node.
  return 2.0 * ring_allgather(g.local, bytes, c.intra) + flat_allreduce(nodes_of(g), bytes / g.local, c.inter);
}

double allgather(const Group& g, double bytes, const Cluster& c) {
  if (g.local == g.size) return ring_allgather(g.size, bytes, c.intra);
  return ring_allgather(nodes_of(g), bytes / g.local, c.inter) + ring_allgather(g.local, bytes, c.intra);
}

double reduce_scatter(const Group& g, double bytes, const Cluster& c) {
  // The mirror image of allgather: the same steps in reverse.
  return allgather(g, bytes, c);
}

double alltoall(const Group& g, double bytes, const Cluster& c) {
  if (g.size <= 1) return 0;
  const double share = bytes / g.size;
  const double intra = (g.local - 1) * share / c.intra.bandwidth;
  const double inter = (g.size - g.local) * share / c.inter.bandwidth;
  const double latency = (g.local - 1) * c.intra.latency + (g.size - g.local) * c.inter.latency;
  return intra + inter + latency;
}

double send(double bytes, bool same_node, const Cluster& c) {
  const Link& link = same_node ? c.intra : c.inter;
  return link.latency + bytes / link.bandwidth;
}

}  // namespace dtrain::plan
