"""An MLP split into pipeline stages over this job's ranks, 1F1B, two ways in one run.

    dtrun -n 2 python3 benchmarks/torch_pipe/compare.py [--layers 8] [--width 1024] [--batch 512] [--microbatches 8]

Run it under dtrun; the binding must be importable (PYTHONPATH=<build>/bindings/python,
LD_LIBRARY_PATH=<build>/capi).

The model is --layers Linear + tanh layers of --width, split evenly over the
ranks as stages, with a mean-squared-error loss after the last; a step is
the forward and backward of --batch samples in --microbatches micro-batches
under the 1F1B schedule (no optimizer), f32, one compute thread per rank:
  torch    torch.distributed.pipelining: PipelineStage and Schedule1F1B over gloo
  dtrain   dtrain.Pipeline over dtrain.PipelineSchedule("1f1b"), whose stage
           functions run the same torch modules (autograd for backward)
Both sides start from the same weights and data, and their parameter
gradients are checked equal after a step. The sides alternate in blocks of
--steps steps, --rounds times; every timed step starts with the ranks
together. Rank 0 prints the slowest rank's median step time of each and
dtrain / torch.
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
    p.add_argument("--layers", type=int, default=8, help="layers, a multiple of the ranks (default 8)")
    p.add_argument("--width", type=int, default=1024, help="layer width (default 1024)")
    p.add_argument("--batch", type=int, default=512, help="samples per step (default 512)")
    p.add_argument("--microbatches", type=int, default=8, help="micro-batches per step (default 8)")
    p.add_argument("--steps", type=int, default=3, help="timed steps per block (default 3)")
    p.add_argument("--rounds", type=int, default=3, help="blocks per side (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps per side first (default 1)")
    p.add_argument("--seed", type=int, default=1, help="seed of the weights and data (default 1)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def stage_module(torch, args, rank, world):
    """This rank's layers, with the weights every rank derives from the seed."""
    g = torch.Generator().manual_seed(args.seed)
    layers = []
    for _ in range(args.layers):
        linear = torch.nn.Linear(args.width, args.width)
        with torch.no_grad():
            linear.weight.copy_((torch.rand(args.width, args.width, generator=g) * 2 - 1) * args.width ** -0.5)
            linear.bias.copy_((torch.rand(args.width, generator=g) * 2 - 1) * 0.1)
        layers += [linear, torch.nn.Tanh()]
    per = 2 * args.layers // world
    return torch.nn.Sequential(*layers[rank * per:(rank + 1) * per])


class TorchSide:
    name = "torch"

    def __init__(self, torch, args, rank, world, x, y):
        from torch.distributed.pipelining import PipelineStage, Schedule1F1B
        self.module = stage_module(torch, args, rank, world)
        self.rank, self.world, self.x, self.y = rank, world, x, y
        stage = PipelineStage(self.module, rank, world, torch.device("cpu"))
        scale = 1.0 / args.batch
        # scale_grads off: the loss is already a share of the batch's mean.
        self.schedule = Schedule1F1B(stage, args.microbatches,
                                     loss_fn=lambda out, target: ((out - target) ** 2).sum() * scale,
                                     scale_grads=False)

    def step(self):
        self.module.zero_grad(set_to_none=False)
        if self.rank == 0:
            self.schedule.step(self.x)
        elif self.rank == self.world - 1:
            self.schedule.step(target=self.y)
        else:
            self.schedule.step()


class DtrainSide:
    name = "dtrain"

    def __init__(self, torch, comm, args, rank, world, x, y):
        self.torch, self.rank, self.world = torch, rank, world
        self.module = stage_module(torch, args, rank, world)
        m = args.microbatches
        self.xs, self.ys = torch.chunk(x, m), torch.chunk(y, m)
        self.rows = args.batch // m
        self.width = args.width
        self.scale = 1.0 / args.batch
        self.saved = {}
        schedule = dtrain.PipelineSchedule("1f1b", world, m)
        self.pipeline = dtrain.Pipeline(comm, schedule, self.rows * args.width, "float32", self.forward,
                                        self.backward)

    def forward(self, chunk, mb, input, output):
        torch = self.torch
        if input is None:
            x = self.xs[mb]
        else:
            x = torch.from_numpy(input.copy()).view(self.rows, self.width).requires_grad_(True)
        out = self.module(x)
        if output is None:
            out = ((out - self.ys[mb]) ** 2).sum() * self.scale
        else:
            output[:] = out.detach().numpy().reshape(-1)
        self.saved[mb] = (x, out)

    def backward(self, chunk, mb, grad_output, grad_input):
        torch = self.torch
        x, out = self.saved.pop(mb)
        if grad_output is None:
            out.backward()
        else:
            out.backward(torch.from_numpy(grad_output.copy()).view(self.rows, self.width))
        if grad_input is not None:
            grad_input[:] = x.grad.numpy().reshape(-1)

    def step(self):
        self.module.zero_grad(set_to_none=False)
        self.pipeline.step()


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(
        lambda world: (world < 2 or args.layers % world or args.batch % args.microbatches)
        and f"needs 2 ranks or more, --layers a multiple of the {world} ranks and --batch a multiple of --microbatches")
    rank, world = comm.rank, comm.size

    g = torch.Generator().manual_seed(args.seed + 1)
    x = torch.rand(args.batch, args.width, generator=g) * 2 - 1
    y = torch.rand(args.batch, args.width, generator=g) * 2 - 1
    sides = [TorchSide(torch, args, rank, world, x, y), DtrainSide(torch, comm, args, rank, world, x, y)]
    for side in sides:
        for _ in range(args.warmup):
            side.step()
    for a, b in zip(sides[0].module.parameters(), sides[1].module.parameters()):
        if not torch.allclose(a.grad, b.grad, rtol=1e-4, atol=1e-6):
            sys.exit(f"compare.py: rank {rank}: the two sides' gradients differ")
    times = {side.name: [] for side in sides}
    for _ in range(args.rounds):
        for side in sides:
            for _ in range(args.steps):
                comm.barrier()
                t0 = time.perf_counter()
                side.step()
                times[side.name].append(time.perf_counter() - t0)
    slowest = {}
    for name, samples in times.items():
        mine = np.array(samples)
        comm.allreduce(mine, op="max")
        slowest[name] = statistics.median(mine.tolist()) * 1e3
    ratio = slowest["dtrain"] / slowest["torch"]
    say(f"# pipeline, p = {world}, 1F1B: {args.layers} layers of {args.width}, batch {args.batch} in "
        f"{args.microbatches} micro-batches, f32")
    say(f"torch (Schedule1F1B, gloo)  {slowest['torch']:9.1f} ms")
    say(f"dtrain (Pipeline, 1f1b)     {slowest['dtrain']:9.1f} ms")
    say(f"dtrain / torch              {ratio:9.3f}  (target <= 0.8)")
    common.finish(args, comm, dist, say,
                  {"benchmark": "torch_pipe", "stages": world, "layers": args.layers, "width": args.width,
                   "batch": args.batch, "microbatches": args.microbatches, "torch_ms": slowest["torch"],
                   "dtrain_ms": slowest["dtrain"], "dtrain_over_torch": ratio})


if __name__ == "__main__":
    main()
