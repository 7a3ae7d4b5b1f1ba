"""dtrain.Zero across real ranks; run under dtrun:

    dtrun -n 2 python3 zero.py [EXPECTED_RANKS]

Every rank trains the same two-layer linear model (mean squared error) on its
shard of each global batch, in stages 1, 2 and 3, with SGD (momentum) and
AdamW, and compares its parameters after every step with numpy training on
the whole batch in float64 (rtol 1e-5). Then: memory figures (stage 3 holds
less than stage 1), a checkpoint saved in stage 2 and loaded into stage 3,
and refusals. The checkpoint goes to a temporary folder rank 0 makes, so the
ranks must share a host (as dtrun's do). A failure prints what differed, on
which rank, and exits 1; dtrun then stops the other ranks. CTest runs it as
python_zero_multirank_2.
"""

import contextlib
import shutil
import sys
import tempfile
import traceback

import numpy as np

import dtrain

# Layer l computes h_{l+1} = h_l W_l^T + b_l; parameters in forward order.
SHAPES = [(4, 6), (4,), (3, 4), (3,)]
LAYERS = 2
PER_RANK = 4           # samples per rank in each global batch
STEPS = 3
SGD = dict(kind="sgd", lr=0.1, momentum=0.9)
ADAMW = dict(kind="adamw", lr=0.01, weight_decay=0.1)


class CheckFailed(Exception):
    pass


def close(what, got, want, rtol=1e-5):
    got = np.asarray(got, np.float64)
    bad = np.abs(got - want) > rtol * np.abs(want) + 1e-7
    if got.shape != want.shape or bad.any():
        i = np.flatnonzero(bad)[0] if got.shape == want.shape else None
        detail = (f"shape {got.shape}, want {want.shape}" if i is None else
                  f"{bad.sum()} of {bad.size} elements off; first at {i}: "
                  f"{got.ravel()[i]!r}, want {want.ravel()[i]!r}")
        raise CheckFailed(f"{what}: {detail}")


def initial(rank):
    """Different values on every rank: creation must take rank 0's."""
    rng = np.random.default_rng(100 + rank)
    return [rng.uniform(-0.5, 0.5, shape).astype(np.float32) for shape in SHAPES]


def batch(step, micro, size):
    rng = np.random.default_rng(1000 * step + micro)
    n = PER_RANK * size
    return rng.uniform(-1, 1, (n, 6)), rng.uniform(-1, 1, (n, 3))


def gradients(params, x, t):
    """float64 gradients of the mean over the rows of ½‖y − t‖²."""
    w1, b1, w2, b2 = params
    h = x @ w1.T + b1
    dy = (h @ w2.T + b2 - t) / len(x)
    dh = dy @ w2
    return [dh.T @ x, dh.sum(0), dy.T @ h, dy.sum(0)]


class Reference:
    """One process training the whole model in float64 (PyTorch's formulas)."""

    def __init__(self, params, optimizer):
        self.params = [p.astype(np.float64) for p in params]
        self.optimizer = optimizer
        self.state = [[np.zeros_like(p), np.zeros_like(p)] for p in self.params]
        self.steps = 0

    def step(self, grads):
        self.steps += 1
        o, t = self.optimizer, self.steps
        for p, g, (m, v) in zip(self.params, grads, self.state):
            if o["kind"] == "sgd":
                m[...] = g if t == 1 else o["momentum"] * m + g
                p -= o["lr"] * m
            else:
                p *= 1 - o["lr"] * o["weight_decay"]
                m[...] = 0.9 * m + 0.1 * g
                v[...] = 0.999 * v + 0.001 * g * g
                p -= o["lr"] * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)


def zero_options(stage):
    if stage == 3:
        return dict(stage=3, unit_sizes=[2] * LAYERS)   # one unit per layer
    return dict(stage=stage, bucket_bytes=64)           # small units: several reductions


def unit_of(stage, layer):
    """Stage 3 gathers the layer's unit; in stages 0-2 gathers return at once."""
    return layer if stage == 3 else 0


def read_parameters(z, stage):
    values = []
    for layer in range(LAYERS):
        with z.unit(unit_of(stage, layer)):
            values += [z.parameter(2 * layer).copy(), z.parameter(2 * layer + 1).copy()]
    return values


def micro_step(z, stage, x, t):
    """Forward and backward over this rank's shard, as dtrain/zero.h lays it out."""
    activations = [x]
    for layer in range(LAYERS):
        with z.unit(unit_of(stage, layer)):
            w, b = z.parameter(2 * layer), z.parameter(2 * layer + 1)
            activations.append(activations[-1] @ w.T.astype(np.float64) + b)
    upstream = (activations[-1] - t) / len(x)
    for layer in reversed(range(LAYERS)):
        with z.unit(unit_of(stage, layer)):
            w = z.parameter(2 * layer).astype(np.float64)
            grad_w, grad_b = upstream.T @ activations[layer], upstream.sum(0)
            upstream = upstream @ w
            for index, grad in ((2 * layer + 1, grad_b), (2 * layer, grad_w)):
                z.gradient(index)[...] += grad.astype(np.float32)
                z.mark_ready(index)


def train(comm, stage, optimizer, micro_steps=1):
    """Trains STEPS steps and compares with the reference after each; returns the Zero."""
    what = f"stage {stage} {optimizer['kind']}" + (f", {micro_steps} micro-steps" if micro_steps > 1 else "")
    rank, size = comm.rank, comm.size
    z = dtrain.Zero(comm, initial(rank), optimizer, **zero_options(stage))
    reference = Reference(initial(0), optimizer)
    for p, want in zip(read_parameters(z, stage), reference.params):
        close(f"{what}: rank 0's initial values", p, want, rtol=0)
    for step in range(STEPS):
        total = [np.zeros(shape) for shape in SHAPES]
        for micro in range(micro_steps):
            x, t = batch(step, micro, size)
            mine = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
            # All but the last micro-step only accumulate (stage 1 skips
            # its allreduce; stages 2-3 reduce anyway).
            accumulate_only = micro < micro_steps - 1
            with z.no_sync() if accumulate_only else contextlib.nullcontext():
                micro_step(z, stage, x[mine], t[mine])
                z.wait()
            total = [a + g for a, g in zip(total, gradients(reference.params, x, t))]
        info = z.step()
        if info.skipped or info.step != step + 1:
            raise CheckFailed(f"{what}: step {step} gave {info}")
        norm = np.sqrt(sum(float((g ** 2).sum()) for g in total))
        close(f"{what}: step {step} gradient norm", np.array(info.grad_norm), np.array(norm))
        reference.step(total)
        for i, (p, want) in enumerate(zip(read_parameters(z, stage), reference.params)):
            close(f"{what}: step {step} parameter {i}", p, want)
    return z


def check_memory(comm, trained):
    totals = {}
    for stage, z in trained.items():
        m = z.memory()
        if min(m.parameters, m.gradients, m.optimizer_state) <= 0 or m.master_weights != 0:
            raise CheckFailed(f"stage {stage}: implausible {m}")
        if m.peak < m.total:
            raise CheckFailed(f"stage {stage}: peak {m.peak} below the total now, {m.total}")
        totals[stage] = m
    if not totals[3].total < totals[1].total:
        raise CheckFailed(f"stage 3 holds {totals[3].total} bytes, stage 1 {totals[1].total}")
    if not totals[2].gradients < totals[1].gradients:
        raise CheckFailed(f"stage 2 gradients {totals[2].gradients}, stage 1 {totals[1].gradients}")
    # Stage 3's units hold 28 and 15 elements; what N does not divide is
    # padded, in the shards of whichever ranks own the tail.
    padded = sum((-n) % comm.size for n in (28, 15))
    padding = np.array([totals[3].padding], np.int64)
    comm.allreduce(padding, op="sum")
    if (padding[0] > 0) != (padded > 0):
        raise CheckFailed(f"stage 3 padding {padding[0]} bytes over the ranks for {padded} padded elements")


def check_checkpoint(comm, saved, directory):
    saved.save(directory)
    loaded = dtrain.Zero(comm, [np.zeros(s, np.float32) for s in SHAPES], ADAMW, **zero_options(3))
    loaded.load(directory)
    for i, (got, want) in enumerate(zip(read_parameters(loaded, 3), read_parameters(saved, 2))):
        close(f"checkpoint: parameter {i} after loading", got, want.astype(np.float64), rtol=0)
    # The moments and step count came along: one more step agrees too.
    for z, stage in ((saved, 2), (loaded, 3)):
        x, t = batch(STEPS, 0, comm.size)
        mine = slice(comm.rank * PER_RANK, (comm.rank + 1) * PER_RANK)
        micro_step(z, stage, x[mine], t[mine])
        z.wait()
        if z.step().step != STEPS + 1:
            raise CheckFailed(f"checkpoint: stage {stage} did not resume at step {STEPS + 1}")
    for i, (got, want) in enumerate(zip(read_parameters(loaded, 3), read_parameters(saved, 2))):
        close(f"checkpoint: parameter {i} a step after loading", got, want.astype(np.float64), rtol=1e-6)
    loaded.close()

    with dtrain.Zero(comm, [np.zeros(5, np.float32)], ADAMW) as other_model:
        try:
            other_model.load(directory)
        except dtrain.InvalidArgumentError:
            pass
        else:
            raise CheckFailed("a checkpoint of other parameters was loaded")


def check_refusals(comm):
    with dtrain.Zero(comm, initial(0), **zero_options(3)) as z:
        for call in (z.parameter, z.mark_ready, z.gather):
            try:
                call(99)
            except dtrain.InvalidArgumentError:
                pass
            else:
                raise CheckFailed(f"{call.__name__}(99) was accepted")
    # One rank's own bad option: refused there, and the others hear of it.
    stage = 7 if comm.rank == 0 else 1
    try:
        dtrain.Zero(comm, initial(0), stage=stage)
    except (dtrain.InvalidArgumentError, dtrain.MismatchError) as error:
        if comm.rank == 0 and not isinstance(error, dtrain.InvalidArgumentError):
            raise CheckFailed(f"stage 7 on rank 0 raised {error!r}")
    else:
        raise CheckFailed(f"stage {stage} on rank {comm.rank} was accepted")


def run(comm, directory):
    trained = {}
    for stage in (1, 2, 3):
        for optimizer in (SGD, ADAMW):
            z = train(comm, stage, optimizer)
            if optimizer is ADAMW:
                trained[stage] = z
            else:
                z.close()
    # Gradient accumulation: micro-steps add up, in the full buffer (stage 1)
    # or in the shards (stages 2-3).
    for stage in (1, 3):
        train(comm, stage, SGD, micro_steps=2).close()
    check_memory(comm, trained)
    check_checkpoint(comm, trained[2], directory)
    for z in trained.values():
        z.close()
    check_refusals(comm)


def shared_directory(comm):
    """A fresh folder made by rank 0, its name sent to every rank."""
    name = np.zeros(4096, np.uint8)
    if comm.rank == 0:
        made = np.frombuffer(tempfile.mkdtemp(prefix="dtrain-zero-").encode(), np.uint8)
        name[:made.size] = made
    comm.broadcast(name, root=0)
    return bytes(name).rstrip(b"\0").decode()


def main():
    with dtrain.Comm() as comm:
        if len(sys.argv) > 1 and comm.size != int(sys.argv[1]):
            print(f"FAIL: {comm.size} ranks, want {sys.argv[1]}", file=sys.stderr)
            return 1
        directory = shared_directory(comm)
        try:
            run(comm, directory)
        except CheckFailed as failure:
            print(f"FAIL rank {comm.rank} of {comm.size}: {failure}", file=sys.stderr, flush=True)
            return 1
        except Exception:  # noqa: BLE001 - any library error fails the run
            print(f"FAIL rank {comm.rank} of {comm.size}: unexpected error:", file=sys.stderr, flush=True)
            traceback.print_exc()
            return 1
        comm.barrier()
        if comm.rank == 0:
            shutil.rmtree(directory)
        print(f"rank {comm.rank} of {comm.size}: Zero stages 1-3 match the reference", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
