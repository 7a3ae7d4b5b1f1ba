"""One PyTorch model trained twice in one run: with torch FSDP (FULL_SHARD, gloo) and with libdtrain's ZeRO stage 3.

    dtrun -n 4 python3 benchmarks/torch_zero/compare.py [--steps N] [--rounds N] ...

Run it under dtrun (not torchrun): dtrun gives every rank its place in the
job, the ranks then agree on a port for torch's own rendezvous through a
libdtrain broadcast. The binding must be importable (PYTHONPATH=<build>/
bindings/python, LD_LIBRARY_PATH=<build>/capi).

Both sides train the same layers (examples/c/mlp: 64 -> 256 -> 256 -> 10,
float32), from the same initial weights (examples/python/synthetic.py), on
the same synthetic batches, with AdamW of the same hyperparameters, one
BLAS/OpenMP thread per rank and one shard unit per Linear; only the sharding
machinery differs:
  torch    torch.distributed.fsdp.FullyShardedDataParallel, FULL_SHARD, gloo,
           each Linear its own FSDP unit, torch.optim.AdamW on the shards
  dtrain   dtrain.Zero(stage=3) owns the parameters, gradients and AdamW
           state, one unit per Linear, prefetching the next unit. Each Linear
           gathers its unit before it runs and computes with the library's
           memory through torch.from_numpy of the parameter views (no copy);
           its backward gathers the unit again, writes the weight and bias
           gradients straight into the library's gradient views, marks them
           ready and releases the unit, so their reduce-scatter travels while
           the layers below are differentiated.
The two alternate in blocks of --steps steps, --rounds times, so that a noisy
machine treats them alike; every timed step starts with the ranks together.
Rank 0 prints median step times, the ratio dtrain / torch, the first and
last losses of each side, and the bytes each rank holds: torch's sharded
flat parameters, their gradients and the optimizer state tensors; dtrain's
dt_zero_memory_usage (between steps, and its peak).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_common as common  # noqa: E402  (first: it sets the thread counts numpy and torch read)

import numpy as np  # noqa: E402

import dtrain  # noqa: E402


def parse_args():
    return common.parse_args(__doc__)


# AdamW as both sides run it (dt_optimizer's defaults, spelled out for torch).
BETAS, EPS, WEIGHT_DECAY = (0.9, 0.999), 1e-8, 0.0


def tensor_bytes(t):
    return t.numel() * t.element_size()


class TorchSide:
    name = "torch"

    def __init__(self, torch, dims, args):
        from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        self.torch = torch
        model = common.build_model(torch, dims, args.seed)
        self.model = FullyShardedDataParallel(
            model, sharding_strategy=ShardingStrategy.FULL_SHARD,
            auto_wrap_policy=ModuleWrapPolicy({torch.nn.Linear}), device_id=torch.device("cpu"))
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=args.lr, betas=BETAS, eps=EPS,
                                     weight_decay=WEIGHT_DECAY)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = self.torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()  # returns once FSDP's reduce-scatters are done
        self.opt.step()
        return loss.item(), 0.0

    def memory(self):
        """This rank's bytes between steps: its flat parameter shards, their gradients, AdamW's state."""
        params = grads = state = 0
        for p in self.model.parameters():
            params += tensor_bytes(p)
            grads += tensor_bytes(p.grad) if p.grad is not None else 0
            state += sum(tensor_bytes(v) for v in self.opt.state[p].values() if self.torch.is_tensor(v))
        return {"parameters": params, "gradients": grads, "optimizer_state": state,
                "total": params + grads + state}


class DtrainSide:
    name = "dtrain"

    def __init__(self, torch, dims, comm, args):
        self.torch = torch
        layers = len(dims) - 1
        self.zero = dtrain.Zero(comm, common.initial_params(dims, args.seed), stage=3, unit_sizes=[2] * layers,
                                prefetch=True, kind="adamw", lr=args.lr, betas=BETAS, eps=EPS,
                                weight_decay=WEIGHT_DECAY)
        self.model = sharded_model(torch, self.zero, layers)

    def step(self, x, y):
        loss = self.torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()  # each layer's backward hands its gradients over and marks them
        waited = common.seconds(self.zero.wait)
        self.zero.step()
        return loss.item(), waited

    def memory(self):
        """This rank's bytes between steps and its peak, as dt_zero_memory_usage counts them."""
        m = self.zero.memory()
        return {"parameters": m.parameters, "gradients": m.gradients, "optimizer_state": m.optimizer_state,
                "master_weights": m.master_weights, "communication": m.communication, "padding": m.padding,
                "total": m.total, "peak": m.peak}

    def close(self):
        self.zero.close()


def sharded_model(torch, zero, layers):
    """nn.Sequential of `layers` linear layers with ReLU between, each running one unit of `zero`.

    A layer computes y = x W^T + b with the unit's own memory. It is an
    autograd Function rather than torch.nn.Linear because Linear's autograd
    would keep the weight tensor for backward, and after the unit's release
    that memory is the library's again; the Function keeps only its input and
    gathers the unit anew in backward, as FSDP does.
    """

    class ShardedLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, anchor, unit):
            with zero.unit(unit):
                w = torch.from_numpy(zero.parameter(2 * unit))
                b = torch.from_numpy(zero.parameter(2 * unit + 1))
                y = torch.addmm(b, x, w.t())
            ctx.save_for_backward(x)
            ctx.unit = unit
            return y

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            unit = ctx.unit
            with zero.unit(unit):
                # The gradient views hold zeros at the start of the
                # micro-step; adding into them leaves no copy to make.
                torch.from_numpy(zero.gradient(2 * unit)).addmm_(grad.t(), x)
                torch.from_numpy(zero.gradient(2 * unit + 1)).add_(grad.sum(0))
                zero.mark_ready(2 * unit)
                zero.mark_ready(2 * unit + 1)
                below = grad @ torch.from_numpy(zero.parameter(2 * unit)) if ctx.needs_input_grad[0] else None
            return below, None, None

    class Layer(torch.nn.Module):
        def __init__(self, unit):
            super().__init__()
            self.unit = unit
            # An empty tensor that requires grad: the layer's output must
            # too, or autograd would never call the first layer's backward
            # (its input, the batch, requires none).
            self.anchor = torch.nn.Parameter(torch.empty(0))

        def forward(self, x):
            return ShardedLinear.apply(x, self.anchor, self.unit)

    modules = []
    for l in range(layers):
        modules.append(Layer(l))
        if l + 1 < layers:
            modules.append(torch.nn.ReLU())
    return torch.nn.Sequential(*modules)


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(common.even_batch(args, "torch FSDP"))
    rank, world = comm.rank, comm.size

    dims = common.dims(args)
    psi = sum(dims[l] * dims[l + 1] + dims[l + 1] for l in range(len(dims) - 1))
    sides = [TorchSide(torch, dims, args), DtrainSide(torch, dims, comm, args)]

    # The same batches for both sides.
    batches = common.batches(torch, args, rank, world)

    say(f"compare.py: {world} ranks; torch {torch.__version__} FSDP FULL_SHARD over gloo vs dtrain.Zero stage 3 "
        f"({dtrain.build_info()})")
    say(f"compare.py: MLP {' -> '.join(map(str, dims))} ({psi} float32 parameters), global batch {args.batch}, "
        f"AdamW lr {args.lr:g}; one unit per Linear ({sides[1].zero.unit_count} units); "
        f"{args.rounds} rounds x {args.steps} steps after {args.warmup} warmup steps")

    times, waits, losses = common.train(comm, sides, batches, args)

    # Medians over steps and the first and last steps' losses over the whole
    # batch (equal shards: the mean of the ranks'), averaged over ranks.
    torch_ms, dtrain_ms, wait_ms, ends = common.rank_means(
        comm, times, waits, [losses["torch"][0], losses["torch"][-1], losses["dtrain"][0], losses["dtrain"][-1]])
    loss = {"torch": {"first": ends[0], "last": ends[1]}, "dtrain": {"first": ends[2], "last": ends[3]}}

    # Every rank's memory, each in its own slot of one sum.
    memory = {side.name: side.memory() for side in sides}
    keys = {name: sorted(m) for name, m in memory.items()}
    width = sum(len(k) for k in keys.values())
    slots = np.zeros(world * width, dtype=np.float64)
    slots[rank * width:(rank + 1) * width] = [memory[n][k] for n in ("torch", "dtrain") for k in keys[n]]
    comm.allreduce(slots, op="sum")
    per_rank = {"torch": [], "dtrain": []}
    for r in range(world):
        row = iter(slots[r * width:(r + 1) * width].tolist())
        for n in ("torch", "dtrain"):
            per_rank[n].append({k: int(next(row)) for k in keys[n]})
    formula = 16 * psi / world

    say(f"{'':8} {'step ms':>10} {'loss first':>11} {'loss last':>10}")
    for n in ("torch", "dtrain"):
        ms = torch_ms if n == "torch" else dtrain_ms
        extra = f"   (of which {wait_ms:.3f} ms in wait)" if n == "dtrain" else ""
        say(f"{n:8} {ms:10.3f} {loss[n]['first']:11.4f} {loss[n]['last']:10.4f}{extra}")
    common.say_ratio(say, torch_ms, dtrain_ms)
    say(f"memory per rank between steps, KiB (formula 16Ψ/N = {formula / 1024:.1f}):")
    say(f"{'':8} {'rank':>4} {'params':>9} {'grads':>9} {'optimizer':>10} {'total':>9} {'ratio':>7} {'peak':>9}")
    for n in ("torch", "dtrain"):
        for r, m in enumerate(per_rank[n]):
            peak = f"{m['peak'] / 1024:9.1f}" if "peak" in m else f"{'-':>9}"
            say(f"{n:8} {r:4d} {m['parameters'] / 1024:9.1f} {m['gradients'] / 1024:9.1f} "
                f"{m['optimizer_state'] / 1024:10.1f} {m['total'] / 1024:9.1f} {m['total'] / formula:7.4f} {peak}")
    say("torch: its flat parameter shards, their gradients and AdamW's state tensors (step counters included); "
        "dtrain: dt_zero_memory_usage, whose total also counts communication buffers")
    common.finish(args, comm, dist, say,
                  {"benchmark": "zero_vs_torch_fsdp", "world_size": world, "torch": torch.__version__,
                   "library": dtrain.build_info(), "dims": dims, "parameters": psi, "dtype": "float32",
                   "batch": args.batch, "steps": args.steps, "rounds": args.rounds, "warmup": args.warmup,
                   "torch_step_ms": torch_ms, "dtrain_step_ms": dtrain_ms, "dtrain_wait_ms": wait_ms,
                   "ratio": dtrain_ms / torch_ms, "loss": loss,
                   "formula": "16Ψ/N", "formula_bytes": formula, "memory": per_rank}, sides[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
