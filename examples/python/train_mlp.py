"""Trains examples/c/train_mlp.c's MLP from Python: numpy for the math, dtrain for the rest.

    dtrun -n 2 python3 examples/python/train_mlp.py [--steps N] [--batch N] ...
    python3 examples/python/train_mlp.py        # a world of one

Every rank holds a replica, takes its shard of each global batch, and
dtrain.DDP averages the gradients while backward is still running; a
dtrain.Optimizer (AdamW) then takes the same step on every rank. Same task,
seed, layers and options as the C program, so the losses match it. Exits
with 1 when the loss did not fall below half of the first step's.
"""

import argparse
import os
import sys
import time
import zlib

# One BLAS thread per rank: the ranks are the parallelism (before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import dtrain  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synthetic  # noqa: E402

INPUTS, CLASSES, HELDOUT_SAMPLES, FINAL_WINDOW = 64, 10, 4096, 10


class MLP:
    """Linear layers with ReLU between them and softmax cross-entropy.

    Parameters and gradients are numpy arrays in forward order [W0, b0, W1,
    b1, ...], W [out, in]; backward writes the gradients in place (DDP and
    the optimizer hold them) and calls ready(i) as each becomes final.
    """

    def __init__(self, dims, key):
        self.dims = dims
        self.params = synthetic.init_params(dims, key)
        self.grads = [np.zeros_like(p) for p in self.params]

    def forward(self, x, y):
        """The summed cross-entropy and the number of correct argmaxes."""
        self.acts, self.labels = [x], y
        layers = len(self.dims) - 1
        for l in range(layers):
            z = self.acts[-1] @ self.params[2 * l].T + self.params[2 * l + 1]
            self.acts.append(np.maximum(z, 0.0) if l + 1 < layers else z)
        logits = self.acts[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted.astype(np.float64))
        total = exp.sum(axis=1, keepdims=True)
        self.probs = (exp / total).astype(np.float32)
        rows = np.arange(len(y))
        loss = float(np.sum(np.log(total[:, 0]) - shifted[rows, y]))
        return loss, int(np.sum(np.argmax(logits, axis=1) == y))

    def backward(self, ready):
        n = len(self.labels)
        delta = self.probs.copy()
        delta[np.arange(n), self.labels] -= 1.0
        delta /= n
        for l in reversed(range(len(self.dims) - 1)):
            np.matmul(delta.T, self.acts[l], out=self.grads[2 * l])
            np.sum(delta, axis=0, out=self.grads[2 * l + 1])
            # Handing these over now lets their bucket travel while the
            # layers below are still being differentiated.
            ready(2 * l)
            ready(2 * l + 1)
            if l > 0:
                delta = (delta @ self.params[2 * l]) * (self.acts[l] > 0)


def replicas_agree(comm, params):
    """True when every rank's parameters have the same CRC-32."""
    crc = 0
    for p in params:
        crc = zlib.crc32(p.tobytes(), crc)
    # The CRC and its negative: one MAX allreduce gives its maximum and minimum.
    v = np.array([crc, -crc], dtype=np.float64)
    comm.allreduce(v, op="max")
    return v[0] == -v[1]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200, help="optimizer steps (default 200)")
    p.add_argument("--batch", type=int, default=256, help="global batch over all ranks (default 256)")
    p.add_argument("--hidden", type=int, default=256, help="width of the hidden layers (default 256)")
    p.add_argument("--layers", type=int, default=2, help="number of hidden layers (default 2)")
    p.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (default 0.002)")
    p.add_argument("--seed", type=int, default=1, help="seed of data, teacher and weights (default 1)")
    p.add_argument("--log-every", type=int, default=20, help="a progress line every N steps (default 20)")
    p.add_argument("--bucket-kib", type=int, default=8, help="DDP bucket size in KiB (default 8)")
    args = p.parse_args()
    if min(args.steps, args.batch, args.hidden, args.log_every, args.bucket_kib) < 1 or args.layers < 0:
        p.error("sizes must be positive")
    return args


def main():
    args = parse_args()
    comm = dtrain.Comm()
    rank, world = comm.rank, comm.size
    if args.batch < world:
        sys.exit(f"train_mlp.py: --batch {args.batch} is smaller than the world ({world} ranks)")
    say = print if rank == 0 else (lambda *a, **k: None)

    task = synthetic.Task(args.seed, INPUTS, CLASSES)
    dims = [INPUTS] + [args.hidden] * args.layers + [CLASSES]
    # Each rank initialises from its own stream; the broadcast makes rank 0's
    # weights everyone's start, whatever the number of ranks.
    model = MLP(dims, synthetic.key(args.seed, synthetic.INIT + rank))
    dtrain.broadcast_parameters(comm, model.params, root=0)
    # Weighted: when the batch does not split evenly, each rank's mean
    # gradient counts by its number of samples.
    ddp = dtrain.DDP(comm, model.grads, bucket_bytes=args.bucket_kib * 1024, weighted=True)
    opt = dtrain.Optimizer(model.params, model.grads, kind="adamw", lr=args.lr)
    say(f"train_mlp.py: {world} rank{'s' if world > 1 else ''}; MLP {' -> '.join(map(str, dims))} "
        f"({sum(p.size for p in model.params)} parameters); global batch {args.batch}; AdamW lr {args.lr:g}; "
        f"{ddp.bucket_count} DDP buckets of <= {args.bucket_kib} KiB; seed {args.seed}")

    begin, count = synthetic.shard(args.batch, rank, world)
    comm_seconds = [0.0]

    def mark_ready(i):
        t0 = time.perf_counter()
        ddp.mark_ready(i)
        comm_seconds[0] += time.perf_counter() - t0

    recent, first_loss = [], None
    comm_total = comm_interval = loss_interval = 0.0
    interval_steps = 0
    start = interval_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = task.samples(synthetic.TRAIN, (step - 1) * args.batch + begin, count)
        ddp.set_local_weight(count)
        loss_sum, correct = model.forward(x, y)
        before = comm_seconds[0]
        model.backward(mark_ready)
        t0 = time.perf_counter()
        ddp.wait()
        waited = time.perf_counter() - t0
        opt.step()
        # The loss averaged over every sample of the global batch.
        stats = np.array([loss_sum, correct, count], dtype=np.float64)
        t0 = time.perf_counter()
        comm.allreduce(stats, op="sum")
        reduced = time.perf_counter() - t0
        loss = stats[0] / stats[2]

        communicating = comm_seconds[0] - before + waited + reduced
        comm_total += communicating
        comm_interval += communicating
        loss_interval += loss
        interval_steps += 1
        first_loss = loss if first_loss is None else first_loss
        recent = (recent + [loss])[-FINAL_WINDOW:]
        if step == 1 or step % args.log_every == 0 or step == args.steps:
            elapsed = time.perf_counter() - interval_start
            say(f"step {step:5d}/{args.steps}  loss {loss_interval / interval_steps:.4f}  "
                f"accuracy {100 * stats[1] / stats[2]:5.1f}%  "
                f"samples/s {args.batch * interval_steps / elapsed:8.0f}  "
                f"comm {1e3 * comm_interval / interval_steps:6.2f} ms/step "
                f"({100 * comm_interval / elapsed:4.1f}%)", flush=True)
            interval_start, interval_steps = time.perf_counter(), 0
            comm_interval = loss_interval = 0.0
    elapsed = time.perf_counter() - start

    final_loss = float(np.mean(recent))
    hbegin, hcount = synthetic.shard(HELDOUT_SAMPLES, rank, world)
    x, y = task.samples(synthetic.HELDOUT, hbegin, hcount)
    totals = np.array(model.forward(x, y), dtype=np.float64)
    comm.allreduce(totals, op="sum")
    agree = replicas_agree(comm, model.params)
    fell = final_loss < 0.5 * first_loss
    say(f"summary: {args.steps} steps x {args.batch} samples on {world} rank{'s' if world > 1 else ''} "
        f"in {elapsed:.2f} s ({args.steps * args.batch / elapsed:.0f} samples/s)")
    say(f"summary: loss {first_loss:.4f} at step 1 -> {final_loss:.4f} (mean of the last {len(recent)} "
        f"steps), {final_loss / first_loss:.2f} of the first")
    say(f"summary: held-out {HELDOUT_SAMPLES} samples: loss {totals[0] / HELDOUT_SAMPLES:.4f}, "
        f"accuracy {100 * totals[1] / HELDOUT_SAMPLES:.1f}%")
    say(f"summary: communicating {1e3 * comm_total:.1f} ms in all, {1e3 * comm_total / args.steps:.2f} "
        f"ms/step, {100 * comm_total / elapsed:.1f}% of the time")
    say(f"summary: replicas {'identical' if agree else 'DIFFER'}")
    if not fell:
        say("train_mlp.py: FAILED, the loss did not fall below half of the first step's")
    elif not agree:
        say("train_mlp.py: FAILED, the replicas' parameters differ")
    else:
        say("train_mlp.py: OK, the loss fell below half of the first step's")
    opt.close()
    ddp.close()
    comm.close()
    return 0 if fell and agree else 1


if __name__ == "__main__":
    sys.exit(main())
