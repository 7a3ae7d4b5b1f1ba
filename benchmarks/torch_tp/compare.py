"""A transformer MLP block, forward and backward, tensor-parallel over this job's ranks, two ways in one run.

    dtrun -n 2 python3 benchmarks/torch_tp/compare.py [--tokens 2048] [--hidden 1024] [--ffn 4096] ...

Run it under dtrun (not torchrun), as benchmarks/torch_ddp/compare.py is;
the binding must be importable (PYTHONPATH=<build>/bindings/python,
LD_LIBRARY_PATH=<build>/capi).

Both sides compute y = W2 gelu(W1 x + b1) + b2 over the same weights and
tokens, f32, one compute thread per rank:
  torch    torch.distributed.tensor.parallel: ColwiseParallel on the first
           linear layer, RowwiseParallel on the second, over gloo
  dtrain   dtrain.tp.column_linear_* and row_linear_* on the torch tensors
           (DLPack, no copy), GELU by torch
A step is the forward and the backward for a fixed upstream gradient, with
the weights' and the input's gradients.

--device cuda puts both sides' tensors on the GPU (torch's GELU and GEMMs on
its default stream, libdtrain's on its own stream after it; a step ends with
the device synchronised). At tp = 1 only: torch's tensor parallelism on CUDA
needs NCCL and a GPU per rank, so ranks sharing one GPU cannot run it; at
tp = 1 the torch side is the plain block, which is what tp = 1 computes. The sides alternate in blocks of
--steps steps, --rounds times; every timed step starts with the ranks
together. Rank 0 prints median step times, the ratio dtrain / torch, and
GFLOP/s per rank (12 T H F / tp floating-point operations a step).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_common as common  # noqa: E402  (first: it sets the thread counts numpy and torch read)

import dtrain  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokens", type=int, default=2048, help="tokens (rows) per step (default 2048)")
    p.add_argument("--hidden", type=int, default=1024, help="model width (default 1024)")
    p.add_argument("--ffn", type=int, default=4096, help="MLP width (default 4096)")
    p.add_argument("--steps", type=int, default=3, help="timed steps per block (default 3)")
    p.add_argument("--rounds", type=int, default=3, help="blocks per side (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps per side first (default 1)")
    p.add_argument("--seed", type=int, default=1, help="seed of the weights and data (default 1)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where the tensors are (default cpu; cuda: tp = 1 only)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def full_block(torch, args):
    """The whole block's weights, input and upstream gradient, the same on every rank."""
    g = torch.Generator().manual_seed(args.seed)
    t, h, f = args.tokens, args.hidden, args.ffn

    def rand(*shape, scale):
        return (torch.rand(*shape, generator=g) * 2 - 1) * scale

    full = {"w1": rand(f, h, scale=h ** -0.5), "b1": rand(f, scale=0.1), "w2": rand(h, f, scale=f ** -0.5),
            "b2": rand(h, scale=0.1), "x": rand(t, h, scale=1.0), "dy": rand(t, h, scale=1.0)}
    return {name: value.to(args.device) for name, value in full.items()}


class TorchSide:
    name = "torch"

    def __init__(self, torch, full, world):
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
        self.torch = torch
        h, f = full["w1"].shape[1], full["w1"].shape[0]
        model = torch.nn.Sequential(torch.nn.Linear(h, f), torch.nn.GELU(approximate="tanh"), torch.nn.Linear(f, h))
        with torch.no_grad():
            model[0].weight.copy_(full["w1"])
            model[0].bias.copy_(full["b1"])
            model[2].weight.copy_(full["w2"])
            model[2].bias.copy_(full["b2"])
        if full["x"].is_cuda:
            self.model = model.cuda()  # tp = 1: the plain block
        else:
            mesh = init_device_mesh("cpu", (world,))
            self.model = parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
        self.x = full["x"].clone().requires_grad_(True)
        self.dy = full["dy"]

    def step(self):
        for p in self.model.parameters():
            p.grad = None
        self.x.grad = None
        y = self.model(self.x)
        y.backward(self.dy)
        return y


class DtrainSide:
    name = "dtrain"

    def __init__(self, torch, comm, full):
        self.torch, self.comm = torch, comm
        r, n = comm.rank, comm.size
        f, h = full["w1"].shape
        self.w1 = full["w1"][r * f // n:(r + 1) * f // n].contiguous()
        self.b1 = full["b1"][r * f // n:(r + 1) * f // n].contiguous()
        self.w2 = full["w2"][:, r * f // n:(r + 1) * f // n].contiguous()
        self.b2 = full["b2"]
        self.x, self.dy = full["x"], full["dy"]
        t = self.x.shape[0]
        z = lambda *s: torch.zeros(*s, device=self.x.device)  # noqa: E731
        self.h, self.y = z(t, f // n), z(t, h)
        self.da, self.dx = z(t, f // n), z(t, h)
        self.dw1, self.db1, self.dw2, self.db2 = z(f // n, h), z(f // n), z(h, f // n), z(h)

    def step(self):
        torch, tp = self.torch, dtrain.tp
        tp.column_linear_forward(self.comm, self.x, self.w1, self.b1, self.h)
        h = self.h.clone().requires_grad_(True)
        a = torch.nn.functional.gelu(h, approximate="tanh")
        tp.row_linear_forward(self.comm, a.detach(), self.w2, self.b2, self.y)
        tp.row_linear_backward(self.comm, a.detach(), self.w2, self.dy, self.da, self.dw2, self.db2)
        a.backward(self.da)
        tp.column_linear_backward(self.comm, self.x, self.w1, h.grad, self.dx, self.dw1, self.db1)
        return self.y


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(
        lambda world: "--device cuda compares at tp = 1 only (torch's tensor parallelism on CUDA needs a GPU "
                      "per rank, over NCCL)" if args.device == "cuda" and world > 1 else None)
    world = comm.size
    if args.device == "cuda" and not torch.cuda.is_available():
        say("compare.py: torch sees no CUDA device; skipping the CUDA comparison")
        return 0
    finish_step = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)

    full = full_block(torch, args)
    sides = [TorchSide(torch, full, world), DtrainSide(torch, comm, full)]
    # Both compute the same block: compare their outputs before timing.
    outputs = [side.step().detach() for side in sides]
    torch_y = outputs[0].full_tensor() if hasattr(outputs[0], "full_tensor") else outputs[0]
    difference = float((torch_y - outputs[1]).abs().max() / outputs[1].abs().max())
    finish_step()
    if difference > 1e-4:
        sys.exit(f"compare.py: the sides disagree: relative difference {difference:.2e}")

    times = {side.name: [] for side in sides}
    for side in sides:
        for _ in range(args.warmup):
            side.step()
    for _ in range(args.rounds):
        for side in sides:
            for _ in range(args.steps):
                comm.barrier()
                t0 = time.perf_counter()
                side.step()
                finish_step()
                times[side.name].append(time.perf_counter() - t0)

    medians = common.np.array([statistics.median(times["torch"]), statistics.median(times["dtrain"])])
    comm.allreduce(medians, op="max")  # a step takes as long as its slowest rank
    torch_ms, dtrain_ms = (1e3 * medians).tolist()
    flops = 12.0 * args.tokens * args.hidden * args.ffn / world
    say(f"MLP block {args.tokens} tokens x {args.hidden} -> {args.ffn} -> {args.hidden}, f32, tp = {world}, "
        f"{args.device}, one thread per rank; outputs agree to {difference:.1e}")
    say(f"{'side':8} {'step ms':>10} {'GFLOP/s per rank':>18}")
    for name, ms in (("torch", torch_ms), ("dtrain", dtrain_ms)):
        say(f"{name:8} {ms:10.1f} {flops / ms / 1e6:18.1f}")
    common.say_ratio(say, torch_ms, dtrain_ms)
    common.finish(args, comm, dist, say,
                  {"benchmark": "tp_mlp_block", "tp": world, "device": args.device, "tokens": args.tokens, "hidden": args.hidden,
                   "ffn": args.ffn, "torch_ms": torch_ms, "dtrain_ms": dtrain_ms,
                   "gflops_per_rank": {"torch": flops / torch_ms / 1e6, "dtrain": flops / dtrain_ms / 1e6},
                   "relative_difference": difference})
    return 0


if __name__ == "__main__":
    sys.exit(main())
