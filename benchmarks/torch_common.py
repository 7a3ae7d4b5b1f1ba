"""What the PyTorch comparisons (benchmarks/torch_*/compare.py) share.

Each runs one job twice in one run, under torch over gloo and under
libdtrain, with the same inputs: joining both (start), and writing the
results (write_json, finish). torch_ddp and torch_zero also share the example
model (examples/c/mlp) and its training loop. Import this before numpy and
torch: it limits BLAS and OpenMP to one thread per rank, which they read when
they load.
"""

import argparse
import json
import os
import socket
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Gloo over loopback: every rank is on this machine.
os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")

import numpy as np  # noqa: E402

import dtrain  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "python"))
import synthetic  # noqa: E402

INPUTS, CLASSES = 64, 10


def parse_args(doc, add_options=lambda p: None):
    """The options both scripts take, with `add_options`'s own after --layers."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--steps", type=int, default=30, help="timed steps per block (default 30)")
    p.add_argument("--rounds", type=int, default=5, help="blocks per side (default 5)")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps per side first (default 10)")
    p.add_argument("--batch", type=int, default=256, help="global batch (default 256)")
    p.add_argument("--hidden", type=int, default=256, help="hidden width (default 256)")
    p.add_argument("--layers", type=int, default=2, help="hidden layers (default 2)")
    add_options(p)
    p.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (default 0.002)")
    p.add_argument("--seed", type=int, default=1, help="seed of data and weights (default 1)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def dims(args):
    return [INPUTS] + [args.hidden] * args.layers + [CLASSES]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(refuse=lambda world: None):
    """This rank's dtrain.Comm, rank 0's print, torch and torch.distributed joined over gloo.

    Exits (0) where PyTorch is not installed. `refuse(world)` says what about
    the options does not fit `world` ranks (None when they fit); the script
    then exits with that message.
    """
    comm = dtrain.Comm()
    rank, world = comm.rank, comm.size
    say = print if rank == 0 else (lambda *a, **k: None)
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        say("compare.py: PyTorch is not installed (pip install torch); skipping the comparison")
        sys.exit(0)
    problem = refuse(world)
    if problem:
        sys.exit(f"compare.py: {problem}")
    torch.set_num_threads(1)

    # torch's own rendezvous, on a port rank 0 picks and broadcasts through libdtrain.
    port = np.array([free_port() if rank == 0 else 0], dtype=np.int64)
    comm.broadcast(port, root=0)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{int(port[0])}", rank=rank, world_size=world)
    return comm, say, torch, dist


def even_batch(args, wrapper):
    """start()'s `refuse` for torch's data-parallel `wrapper`, which averages ranks uniformly."""
    return lambda world: (f"--batch {args.batch} must split evenly over {world} ranks "
                          f"({wrapper} averages ranks uniformly)" if args.batch % world else None)


def initial_params(dims, seed):
    """[W0, b0, W1, b1, ...] as examples/c/mlp initialises them."""
    return synthetic.init_params(dims, synthetic.key(seed, synthetic.INIT))


def build_model(torch, dims, seed):
    """nn.Sequential of Linear and ReLU with examples/c/mlp's initial weights."""
    layers = []
    for l in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[l], dims[l + 1]))
        if l + 2 < len(dims):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    with torch.no_grad():
        for p, value in zip(model.parameters(), initial_params(dims, seed)):
            p.copy_(torch.from_numpy(value))
    return model


def batches(torch, args, rank, world):
    """This rank's shard of every step's batch, warmup included, made before any timing."""
    task = synthetic.Task(args.seed, INPUTS, CLASSES)
    begin, count = synthetic.shard(args.batch, rank, world)
    made = []
    for s in range(args.warmup + args.rounds * args.steps):
        x, y = task.samples(synthetic.TRAIN, s * args.batch + begin, count)
        made.append((torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))))
    return made


def seconds(call):
    """How long `call()` takes."""
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def train(comm, sides, batches, args, check=lambda: None):
    """Warmup steps on each side, then blocks of timed steps taking turns.

    `sides` are "torch" and "dtrain", whose step(x, y) returns the loss and
    the seconds dtrain waited; `check` runs after the warmup and at the end.
    Returns the step times per side, dtrain's waits and the losses per side.
    """
    times = {side.name: [] for side in sides}
    waits, losses = [], {side.name: [] for side in sides}
    for side in sides:
        for s in range(args.warmup):
            losses[side.name].append(side.step(*batches[s])[0])
    check()
    for r in range(args.rounds):
        for side in sides:
            for i in range(args.steps):
                s = args.warmup + r * args.steps + i
                comm.barrier()
                t0 = time.perf_counter()
                loss, waited = side.step(*batches[s])
                times[side.name].append(time.perf_counter() - t0)
                losses[side.name].append(loss)
                if side.name == "dtrain":
                    waits.append(waited)
    check()
    return times, waits, losses


def rank_means(comm, times, waits, losses):
    """Each rank's median step times of torch and dtrain and median dtrain wait (ms),
    then `losses`, averaged over ranks."""
    local = np.array([statistics.median(times["torch"]), statistics.median(times["dtrain"]),
                      statistics.median(waits)] + losses, dtype=np.float64)
    comm.allreduce(local, op="sum")
    local /= comm.size
    torch_ms, dtrain_ms, wait_ms = (1e3 * local[:3]).tolist()
    return torch_ms, dtrain_ms, wait_ms, local[3:].tolist()


def say_ratio(say, torch_ms, dtrain_ms):
    say(f"dtrain / torch step time: {dtrain_ms / torch_ms:.3f} "
        f"({'dtrain faster' if dtrain_ms < torch_ms else 'torch faster'})")


def write_json(args, comm, say, results):
    """Writes `results` to --json (rank 0)."""
    if comm.rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        say(f"# results written to {args.json}")


def finish(args, comm, dist, say, results, *closing):
    """write_json(), then closes `closing` (dtrain's sides), torch's process group and `comm`."""
    write_json(args, comm, say, results)
    for side in closing:
        side.close()
    dist.destroy_process_group()
    comm.close()
