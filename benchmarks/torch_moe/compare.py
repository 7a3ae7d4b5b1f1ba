"""An MoE layer's token exchange over this job's ranks (ep = world), two ways in one run.

    dtrun -n 2 python3 benchmarks/torch_moe/compare.py [--tokens 4096] [--hidden 1024] [--experts 8] [--top-k 2]

Run it under dtrun; the binding must be importable (PYTHONPATH=<build>/bindings/python,
LD_LIBRARY_PATH=<build>/capi).

Every rank routes its tokens once (random logits, seeded by rank) with
dtrain.moe_route. A step then moves the tokens to their experts' ranks and
back, with identity experts, and sums each token's k weighted rows:
  dtrain   MoePlan (the counts' exchange), plan.dispatch and plan.combine
  torch    the same written as Megatron-Core's all-to-all token dispatcher
           does it: an all_to_all_single of the per-expert counts, a
           permutation by expert, all_to_all_single of the rows there,
           regrouped by local expert, the reverse, and index_add_ of the
           weighted rows, over gloo
Both sides produce the same output (checked). The sides alternate in blocks
of --steps steps, --rounds times; every timed step starts with the ranks
together. Rank 0 prints median step times and dtrain / torch, one compute
thread per rank.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_common as common  # noqa: E402  (first: it sets the thread counts numpy and torch read)

import numpy as np  # noqa: E402

import dtrain  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokens", type=int, default=4096, help="tokens per rank (default 4096)")
    p.add_argument("--hidden", type=int, default=1024, help="hidden size, float32 (default 1024)")
    p.add_argument("--experts", type=int, default=8, help="experts, a multiple of the ranks (default 8)")
    p.add_argument("--top-k", type=int, default=2, help="experts per token (default 2)")
    p.add_argument("--steps", type=int, default=5, help="timed steps per block (default 5)")
    p.add_argument("--rounds", type=int, default=3, help="blocks per side (default 3)")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps per side first (default 2)")
    p.add_argument("--seed", type=int, default=1, help="seed of the logits and tokens (default 1)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


class DtrainSide:
    name = "dtrain"

    def __init__(self, comm, options, experts, weights, tokens):
        self.comm, self.options = comm, options
        self.experts, self.weights, self.tokens = experts, weights, tokens

    def step(self):
        with dtrain.MoePlan(self.comm, self.experts, self.tokens.shape[1], self.options) as plan:
            received = plan.dispatch(self.tokens)
            return plan.combine(received, self.weights)


class TorchSide:
    """Megatron-Core's all-to-all dispatcher (MoEAlltoAllTokenDispatcher), without its CUDA details."""

    name = "torch"

    def __init__(self, torch, dist, world, num_experts, experts, weights, tokens):
        self.torch, self.dist, self.world = torch, dist, world
        self.num_experts, self.local = num_experts, num_experts // world
        self.experts = torch.from_numpy(experts)
        self.weights = torch.from_numpy(weights)
        self.tokens = torch.from_numpy(tokens)

    def step(self):
        torch, dist = self.torch, self.dist
        t, k = self.experts.shape
        flat = self.experts.reshape(-1)
        # Rows in send order: by expert (hence by destination rank), then by token.
        order = torch.argsort(flat, stable=True)
        rows = self.tokens.index_select(0, order // k)
        per_expert = torch.bincount(flat, minlength=self.num_experts)
        # Counts: [rank][local expert] from every source.
        got = torch.empty_like(per_expert)
        dist.all_to_all_single(got, per_expert)
        got = got.reshape(self.world, self.local)
        send_splits = per_expert.reshape(self.world, self.local).sum(1).tolist()
        recv_splits = got.sum(1).tolist()
        arrived = rows.new_empty((sum(recv_splits), rows.shape[1]))
        dist.all_to_all_single(arrived, rows, recv_splits, send_splits)
        # Regroup [source][expert] chunks as [expert][source] (sort_chunks_by_idxs).
        chunks = list(torch.split(arrived, got.reshape(-1).tolist()))
        by_expert = [chunks[s * self.local + e] for e in range(self.local) for s in range(self.world)]
        received = torch.cat(by_expert)
        # Identity experts; back again: [expert][source] -> [source][expert].
        back_chunks = list(torch.split(received, got.t().reshape(-1).tolist()))
        by_source = torch.cat([back_chunks[e * self.world + s] for s in range(self.world) for e in range(self.local)])
        returned = rows.new_empty(rows.shape)
        dist.all_to_all_single(returned, by_source, send_splits, recv_splits)
        pair_weights = self.weights.reshape(-1).index_select(0, order)
        out = torch.zeros_like(self.tokens)
        out.index_add_(0, order // k, returned * pair_weights.unsqueeze(1))
        return out.numpy()


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(
        lambda world: args.experts % world and f"--experts {args.experts} must be a multiple of the {world} ranks")
    rank, world = comm.rank, comm.size

    rng = np.random.default_rng(args.seed * 1000 + rank)
    logits = rng.standard_normal((args.tokens, args.experts), dtype=np.float32)
    tokens = rng.standard_normal((args.tokens, args.hidden), dtype=np.float32)
    options = dtrain.MoeOptions(args.experts, args.top_k)
    weights, experts, _ = dtrain.moe_route(logits, options)
    sides = [TorchSide(torch, dist, world, args.experts, experts, weights, tokens),
             DtrainSide(comm, options, experts, weights, tokens)]

    outputs = {}
    for side in sides:
        for _ in range(args.warmup):
            outputs[side.name] = side.step()
    if not np.allclose(outputs["dtrain"], outputs["torch"], rtol=1e-6, atol=1e-6):
        sys.exit(f"compare.py: rank {rank}: the two sides' outputs differ")
    times = {side.name: [] for side in sides}
    for _ in range(args.rounds):
        for side in sides:
            for _ in range(args.steps):
                comm.barrier()
                t0 = time.perf_counter()
                side.step()
                times[side.name].append(time.perf_counter() - t0)
    # The slowest rank's time per step.
    slowest = {}
    for name, samples in times.items():
        mine = np.array(samples)
        comm.allreduce(mine, op="max")
        slowest[name] = statistics.median(mine.tolist()) * 1e3
    ratio = slowest["dtrain"] / slowest["torch"]
    moved = 2 * args.tokens * args.top_k * args.hidden * 4
    say(f"# MoE token exchange, ep = {world}: {args.tokens} tokens x {args.hidden} float32 per rank, "
        f"E = {args.experts}, k = {args.top_k}, {moved / 2**20:.0f} MiB there and back per rank")
    say(f"torch (all_to_all_single, gloo)  {slowest['torch']:9.2f} ms")
    say(f"dtrain (plan, dispatch, combine) {slowest['dtrain']:9.2f} ms")
    say(f"dtrain / torch                   {ratio:9.3f}  (target <= 0.5)")
    common.finish(args, comm, dist, say,
                  {"benchmark": "torch_moe", "ep": world, "tokens": args.tokens, "hidden": args.hidden,
                   "experts": args.experts, "top_k": args.top_k, "torch_ms": slowest["torch"],
                   "dtrain_ms": slowest["dtrain"], "dtrain_over_torch": ratio})


if __name__ == "__main__":
    main()
