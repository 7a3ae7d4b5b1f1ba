"""Causal attention, forward and backward, with dtrain's ring attention over this job's ranks and with PyTorch, in one run.

    dtrun -n 2 python3 benchmarks/torch_cp/compare.py [--seq 2048] [--heads 8] [--head-dim 64] ...

Run it under dtrun (not torchrun), as benchmarks/torch_tp/compare.py is;
the binding must be importable (PYTHONPATH=<build>/bindings/python,
LD_LIBRARY_PATH=<build>/capi).

PyTorch's own context parallelism
(torch.distributed.tensor.experimental.context_parallel) does not run on
CPU: it replaces only the CUDA attention kernels (flash, memory-efficient,
cuDNN) with its ring, and scaled_dot_product_attention on CPU tensors calls
aten._scaled_dot_product_flash_attention_for_cpu, for which DTensor has no
sharding rule (NotImplementedError; forcing the math kernel fails too, on
mixed Tensor and DTensor arguments; PyTorch 2.15). So the torch side is
torch.nn.functional.scaled_dot_product_attention over the whole sequence on
rank 0 alone, the other ranks waiting: the single-device attention a
context-parallel layer has to beat. Every run still tries context_parallel
first on a small sequence over gloo, beside dtrain's communicator, and
prints and records what it said.

Three sides, each a step of one causal attention layer's forward and its
backward for a fixed upstream gradient (f32, --heads heads of --head-dim,
--seq tokens, one compute thread per rank):
  torch         scaled_dot_product_attention(is_causal=True) and autograd,
                the whole sequence on rank 0
  dtrain whole  dtrain.ring_attention_forward/backward on a communicator of
                rank 0 alone (cp = 1: dtrain's kernel over the whole sequence)
  dtrain ring   the same calls over every rank, the sequence in the zigzag
                layout (dtrain.cp_shard)
Before timing, every rank checks that dtrain's ring gives torch's output and
gradients for its rows, and rank 0 that the whole-sequence side does too
(largest difference over the largest magnitude, at most --tolerance). The
sides then alternate in blocks of --steps steps, --rounds times; every timed
step starts with the ranks together after a barrier, and a ring step takes
as long as its slowest rank. Rank 0 prints median step times, the machine's
load average before and after, and writes --json.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_common as common  # noqa: E402  (first: it sets the thread counts numpy and torch read)

import dtrain  # noqa: E402

np = common.np


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seq", type=int, default=2048, help="sequence length (default 2048; 2 x ranks must divide it)")
    p.add_argument("--heads", type=int, default=8, help="attention heads (default 8)")
    p.add_argument("--head-dim", type=int, default=64, help="head dimension (default 64)")
    p.add_argument("--steps", type=int, default=2, help="timed steps per block (default 2)")
    p.add_argument("--rounds", type=int, default=3, help="blocks per side (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps per side first (default 1)")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest relative difference allowed between the sides (default 1e-4)")
    p.add_argument("--seed", type=int, default=1, help="seed of the inputs (default 1)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def probe_context_parallel(torch, world, heads, head_dim):
    """What torch's context_parallel does with causal attention on CPU over gloo: "runs" or its error."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.experimental import context_parallel
    mesh = init_device_mesh("cpu", (world,))
    buffers = [torch.randn(1, heads, 8 * world, head_dim) for _ in range(3)]
    try:
        with context_parallel(mesh, buffers=buffers, buffer_seq_dims=[2, 2, 2]):
            q, k, v = (b.detach().requires_grad_(True) for b in buffers)
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    except Exception as error:  # noqa: BLE001  (any failure is the answer sought)
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return "runs"


def inputs(torch, args):
    """q, k, v and the upstream gradient, [seq, heads, head_dim], the same on every rank."""
    g = torch.Generator().manual_seed(args.seed)
    return [torch.randn(args.seq, args.heads, args.head_dim, generator=g) for _ in range(4)]


class TorchSide:
    """SDPA over the whole sequence; torch's layout is [batch, heads, seq, head_dim]."""
    name = "torch"

    def __init__(self, torch, full):
        self.torch = torch
        self.q, self.k, self.v = (t.transpose(0, 1).unsqueeze(0).contiguous().requires_grad_(True) for t in full[:3])
        self.d_o = full[3].transpose(0, 1).unsqueeze(0).contiguous()

    def step(self):
        for t in (self.q, self.k, self.v):
            t.grad = None
        o = self.torch.nn.functional.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=True)
        o.backward(self.d_o)
        return o.detach(), self.q.grad, self.k.grad, self.v.grad

    def results(self):
        """[seq, heads, head_dim] numpy views of o, dq, dk, dv, as dtrain lays them out."""
        return [t[0].transpose(0, 1).contiguous().numpy() for t in self.step()]


class DtrainSide:
    """Ring attention over `comm`, this rank's zigzag shard of the sequence."""

    def __init__(self, name, comm, full):
        self.name, self.comm = name, comm
        self.q, self.k, self.v, self.d_o = (dtrain.cp_shard(t.numpy(), comm.size, comm.rank, "zigzag") for t in full)
        self.o, self.dq, self.dk, self.dv = (np.empty_like(self.q) for _ in range(4))
        self.lse = np.empty(self.q.shape[:2], dtype=np.float32)

    def step(self):
        dtrain.ring_attention_forward(self.comm, self.q, self.k, self.v, causal=True, layout="zigzag", o=self.o,
                                      lse=self.lse)
        dtrain.ring_attention_backward(self.comm, self.q, self.k, self.v, self.o, self.lse, self.d_o, causal=True,
                                       layout="zigzag", dq=self.dq, dk=self.dk, dv=self.dv)

    def results(self):
        self.step()
        return [self.o, self.dq, self.dk, self.dv]


def worst_difference(side, reference, comm):
    """Largest |side - reference| over the largest |reference| among o, dq, dk, dv of side's rows."""
    worst = 0.0
    for got, whole in zip(side.results(), reference):
        want = dtrain.cp_shard(whole, comm.size, comm.rank, "zigzag")
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
    return worst


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(
        lambda world: args.seq % (2 * world) and f"--seq {args.seq} must be divisible by 2 x {world} ranks "
                                                 "(the zigzag layout)")
    rank, world = comm.rank, comm.size
    context_parallel = probe_context_parallel(torch, world, args.heads, args.head_dim)
    say(f"# torch context_parallel on CPU over gloo: {context_parallel}")
    load_before = os.getloadavg()

    full = inputs(torch, args)
    alone = comm.split(0 if rank == 0 else None)
    torch_side = TorchSide(torch, full)
    ring = DtrainSide("dtrain ring", comm, full)
    sides = [ring]
    reference = torch_side.results()
    difference = {"dtrain ring": worst_difference(ring, reference, comm)}
    if alone is not None:
        whole = DtrainSide("dtrain whole", alone, full)
        difference["dtrain whole"] = worst_difference(whole, reference, alone)
        sides = [torch_side, whole, ring]
    del reference
    checked = np.array([max(difference.values())])
    comm.allreduce(checked, op="max")
    if checked[0] > args.tolerance:
        sys.exit(f"compare.py: the sides disagree: relative difference {checked[0]:.2e} (rank {rank}: {difference})")

    # Ranks other than 0 take part in the ring's blocks and wait out rank 0's.
    names = ["torch", "dtrain whole", "dtrain ring"]
    times = {name: [] for name in names}
    by_name = {side.name: side for side in sides}
    for side in sides:
        for _ in range(args.warmup):
            side.step()
    for _ in range(args.rounds):
        for name in names:
            for _ in range(args.steps):
                comm.barrier()
                if name in by_name:
                    t0 = time.perf_counter()
                    by_name[name].step()
                    times[name].append(time.perf_counter() - t0)
    medians = np.array([statistics.median(times[name]) if times[name] else 0.0 for name in names])
    comm.allreduce(medians, op="max")  # rank 0's alone, the slowest rank's for the ring
    torch_ms, whole_ms, ring_ms = (1e3 * medians).tolist()
    load_after = os.getloadavg()

    say(f"causal attention forward + backward, seq {args.seq}, {args.heads} heads x {args.head_dim}, f32, "
        f"one thread per rank, cp = {world}; ring vs torch: {checked[0]:.1e} relative")
    say(f"{'side':14} {'ranks':>5} {'step ms':>10} {'vs torch':>9}")
    for name, ranks, ms in (("torch", 1, torch_ms), ("dtrain whole", 1, whole_ms), ("dtrain ring", world, ring_ms)):
        say(f"{name:14} {ranks:5d} {ms:10.1f} {torch_ms / ms:8.2f}x")
    say(f"dtrain ring / dtrain whole: {ring_ms / whole_ms:.3f}; dtrain ring / torch: {ring_ms / torch_ms:.3f}")
    say(f"load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} cores")
    common.finish(args, comm, dist, say,
                  {"benchmark": "cp_attention", "cp": world, "seq": args.seq, "heads": args.heads,
                   "head_dim": args.head_dim, "causal": True, "layout": "zigzag", "torch": torch.__version__,
                   "torch_context_parallel": context_parallel, "torch_ms": torch_ms,
                   "dtrain_whole_ms": whole_ms, "dtrain_ring_ms": ring_ms,
                   "relative_difference": float(checked[0]), "steps": args.steps, "rounds": args.rounds,
                   "load_average": {"before": load_before[0], "after": load_after[0]},
                   "cores": os.cpu_count()}, *([alone] if alone is not None else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
