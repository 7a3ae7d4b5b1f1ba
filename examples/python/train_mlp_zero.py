"""Trains train_mlp.py's MLP with ZeRO: dtrain.Zero owns the parameters,
gradients and AdamW state and shards them over the ranks.

    dtrun -n 2 python3 examples/python/train_mlp_zero.py [--stage 3] [--steps N] ...

One unit per layer (its weight and bias). In stage 3 (FSDP) a layer's full
weights exist only while its unit is gathered, in the forward and again in
the backward; the same loop runs on stages 0-2, where gathering costs
nothing. Exits with 1 when the loss did not fall below half of the first
step's.
"""

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the ranks are the parallelism

import numpy as np  # noqa: E402

import dtrain  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synthetic  # noqa: E402
from train_mlp import CLASSES, INPUTS  # noqa: E402


def forward(z, layers, x, y):
    """The summed cross-entropy, and what backward needs (inputs of each layer, softmax)."""
    acts = [x]
    for l in range(layers):
        with z.unit(l):
            h = acts[-1] @ z.parameter(2 * l).T + z.parameter(2 * l + 1)
        acts.append(np.maximum(h, 0.0) if l + 1 < layers else h)
    logits = acts[-1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted.astype(np.float64))
    total = exp.sum(axis=1, keepdims=True)
    loss = float(np.sum(np.log(total[:, 0]) - shifted[np.arange(len(y)), y]))
    return loss, acts, (exp / total).astype(np.float32)


def backward(z, layers, acts, probs, y):
    """Adds this rank's mean gradient into the Zero's buffers, last layer first, marking each."""
    delta = probs
    delta[np.arange(len(y)), y] -= 1.0
    delta /= len(y)
    for l in reversed(range(layers)):
        with z.unit(l):
            z.gradient(2 * l)[...] += delta.T @ acts[l]
            z.gradient(2 * l + 1)[...] += delta.sum(axis=0)
            z.mark_ready(2 * l)
            z.mark_ready(2 * l + 1)
            if l > 0:
                delta = (delta @ z.parameter(2 * l)) * (acts[l] > 0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stage", type=int, default=3, choices=range(4), help="ZeRO stage (default 3)")
    p.add_argument("--steps", type=int, default=200, help="optimizer steps (default 200)")
    p.add_argument("--batch", type=int, default=256, help="global batch over all ranks (default 256)")
    p.add_argument("--hidden", type=int, default=256, help="width of the hidden layers (default 256)")
    p.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (default 0.002)")
    p.add_argument("--seed", type=int, default=1, help="seed of data, teacher and weights (default 1)")
    args = p.parse_args()

    with dtrain.Comm() as comm:
        rank, world = comm.rank, comm.size
        say = print if rank == 0 else (lambda *a, **k: None)
        task = synthetic.Task(args.seed, INPUTS, CLASSES)
        dims = [INPUTS, args.hidden, args.hidden, CLASSES]
        layers = len(dims) - 1
        # Rank 0's initial values become every rank's.
        params = synthetic.init_params(dims, synthetic.key(args.seed, synthetic.INIT))
        with dtrain.Zero(comm, params, "adamw", stage=args.stage, unit_sizes=[2] * layers, lr=args.lr) as z:
            memory = z.memory()
            say(f"train_mlp_zero.py: {world} ranks, ZeRO stage {args.stage}; MLP {' -> '.join(map(str, dims))}; "
                f"{memory.total} bytes held on rank 0 (peak {memory.peak})")
            begin, count = synthetic.shard(args.batch, rank, world)
            losses = []
            for step in range(1, args.steps + 1):
                x, y = task.samples(synthetic.TRAIN, (step - 1) * args.batch + begin, count)
                loss_sum, acts, probs = forward(z, layers, x, y)
                backward(z, layers, acts, probs, y)
                z.wait()
                z.step()
                stats = np.array([loss_sum, count], dtype=np.float64)
                comm.allreduce(stats)
                losses.append(stats[0] / stats[1])
                if step == 1 or step % 20 == 0 or step == args.steps:
                    say(f"step {step:5d}/{args.steps}  loss {losses[-1]:.4f}", flush=True)
    first, last = losses[0], float(np.mean(losses[-10:]))
    ok = last < 0.5 * first
    say(f"train_mlp_zero.py: {'OK' if ok else 'FAILED'}, loss {first:.4f} -> {last:.4f} "
        f"({last / first:.2f} of the first)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
