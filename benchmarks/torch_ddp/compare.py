"""One PyTorch model trained twice in one run: with torch DDP over gloo, and with libdtrain's DDP.

    dtrun -n 4 python3 benchmarks/torch_ddp/compare.py [--steps N] [--rounds N] ...

Run it under dtrun (not torchrun): dtrun gives every rank its place in the
job, the ranks then agree on a port for torch's own rendezvous through a
libdtrain broadcast. The binding must be importable (PYTHONPATH=<build>/
bindings/python, LD_LIBRARY_PATH=<build>/capi).

Both sides train the same layers (examples/c/mlp: 64 -> 256 -> 256 -> 10), from
the same initial weights, on the same synthetic batches, with the same
torch.optim.AdamW, one BLAS/OpenMP thread per rank and the same bucket size;
only the data-parallel machinery differs:
  torch    torch.nn.parallel.DistributedDataParallel, gloo backend
  dtrain   dtrain.DDP over the parameters' .grad tensors, handed over by DLPack
           (no copy); each gradient is marked ready from its
           post-accumulate-grad hook, so buckets go out while backward runs
The two alternate in blocks of --steps steps, --rounds times, so that a
noisy machine treats them alike; every timed step starts with the ranks
together. Rank 0 prints median step times and the ratio dtrain / torch.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import synthetic  # noqa: E402

INPUTS, CLASSES = 64, 10


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=30, help="timed steps per block (default 30)")
    p.add_argument("--rounds", type=int, default=5, help="blocks per side (default 5)")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps per side first (default 10)")
    p.add_argument("--batch", type=int, default=256, help="global batch (default 256)")
    p.add_argument("--hidden", type=int, default=256, help="hidden width (default 256)")
    p.add_argument("--layers", type=int, default=2, help="hidden layers (default 2)")
    p.add_argument("--bucket-kib", type=int, default=8, help="bucket size of both DDPs in KiB (default 8)")
    p.add_argument("--torch-default-buckets", action="store_true",
                   help="leave torch DDP's bucket size at its default (25 MiB) instead")
    p.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (default 0.002)")
    p.add_argument("--seed", type=int, default=1, help="seed of data and weights (default 1)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_model(torch, dims, seed):
    """nn.Sequential of Linear and ReLU with examples/c/mlp's initial weights."""
    layers = []
    for l in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[l], dims[l + 1]))
        if l + 2 < len(dims):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    init = synthetic.init_params(dims, synthetic.key(seed, synthetic.INIT))
    with torch.no_grad():
        for p, value in zip(model.parameters(), init):
            p.copy_(torch.from_numpy(value))
    return model


class TorchSide:
    name = "torch"

    def __init__(self, torch, model, args, bucket_mib):
        from torch.nn.parallel import DistributedDataParallel
        self.torch = torch
        self.ddp = DistributedDataParallel(model, bucket_cap_mb=bucket_mib)
        self.opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = self.torch.nn.functional.cross_entropy(self.ddp(x), y)
        loss.backward()  # returns once DDP's allreduces are done
        self.opt.step()
        return loss.item(), 0.0


class DtrainSide:
    name = "dtrain"

    def __init__(self, torch, model, comm, args):
        self.torch, self.model = torch, model
        self.params = list(model.parameters())
        # The gradients live in place from the start: autograd accumulates
        # into an existing .grad, and zero_grad(set_to_none=False) keeps it,
        # so the DDP can hold the same memory for the whole run.
        for p in self.params:
            p.grad = torch.zeros_like(p)
        self.grad_ptrs = [p.grad.data_ptr() for p in self.params]
        self.ddp = dtrain.DDP(comm, [p.grad for p in self.params], bucket_bytes=args.bucket_kib * 1024)
        for i, p in enumerate(self.params):
            p.register_post_accumulate_grad_hook(lambda _p, i=i: self.ddp.mark_ready(i))
        self.opt = torch.optim.AdamW(self.params, lr=args.lr, weight_decay=0.0)

    def step(self, x, y):
        self.opt.zero_grad(set_to_none=False)
        loss = self.torch.nn.functional.cross_entropy(self.model(x), y)
        loss.backward()  # the hooks mark each gradient as autograd finishes it
        t0 = time.perf_counter()
        self.ddp.wait()
        waited = time.perf_counter() - t0
        self.opt.step()
        return loss.item(), waited

    def check_in_place(self):
        if [p.grad.data_ptr() for p in self.params] != self.grad_ptrs:
            raise RuntimeError("autograd replaced a .grad tensor that dtrain.DDP holds")

    def close(self):
        self.ddp.close()


def main():
    args = parse_args()
    comm = dtrain.Comm()
    rank, world = comm.rank, comm.size
    say = print if rank == 0 else (lambda *a, **k: None)
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        say("compare.py: PyTorch is not installed (pip install torch); skipping the comparison")
        return 0
    if args.batch % world:
        sys.exit(f"compare.py: --batch {args.batch} must split evenly over {world} ranks "
                 "(torch DDP averages ranks uniformly)")
    torch.set_num_threads(1)

    port = np.array([free_port() if rank == 0 else 0], dtype=np.int64)
    comm.broadcast(port, root=0)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{int(port[0])}", rank=rank, world_size=world)

    dims = [INPUTS] + [args.hidden] * args.layers + [CLASSES]
    bucket_mib = None if args.torch_default_buckets else args.bucket_kib / 1024.0
    sides = [TorchSide(torch, build_model(torch, dims, args.seed), args, bucket_mib),
             DtrainSide(torch, build_model(torch, dims, args.seed), comm, args)]

    # The same batches for both sides, made before any timing.
    total = args.warmup + args.rounds * args.steps
    task = synthetic.Task(args.seed, INPUTS, CLASSES)
    begin, count = synthetic.shard(args.batch, rank, world)
    batches = []
    for s in range(total):
        x, y = task.samples(synthetic.TRAIN, s * args.batch + begin, count)
        batches.append((torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))))

    say(f"compare.py: {world} ranks; torch {torch.__version__} (gloo) vs {dtrain.build_info()}")
    torch_buckets = "25 MiB (its default)" if args.torch_default_buckets else f"{args.bucket_kib} KiB"
    say(f"compare.py: MLP {' -> '.join(map(str, dims))}, global batch {args.batch}, AdamW lr {args.lr:g}; "
        f"buckets: torch {torch_buckets}, dtrain {args.bucket_kib} KiB ({sides[1].ddp.bucket_count} buckets); "
        f"{args.rounds} rounds x {args.steps} steps after {args.warmup} warmup steps")

    times = {side.name: [] for side in sides}
    waits, losses = [], {side.name: [] for side in sides}
    for side in sides:
        for s in range(args.warmup):
            losses[side.name].append(side.step(*batches[s])[0])
    sides[1].check_in_place()
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
    sides[1].check_in_place()

    # Medians over steps, and the last step's loss over the whole batch
    # (equal shards: the mean of the ranks'), averaged over ranks.
    local = np.array([statistics.median(times["torch"]), statistics.median(times["dtrain"]),
                      statistics.median(waits), losses["torch"][-1], losses["dtrain"][-1]], dtype=np.float64)
    comm.allreduce(local, op="sum")
    local /= world
    torch_ms, dtrain_ms, wait_ms = (1e3 * local[:3]).tolist()
    final_loss = {"torch": float(local[3]), "dtrain": float(local[4])}
    say(f"{'':8} {'step ms':>10} {'final loss':>11}")
    say(f"{'torch':8} {torch_ms:10.3f} {final_loss['torch']:11.4f}")
    say(f"{'dtrain':8} {dtrain_ms:10.3f} {final_loss['dtrain']:11.4f}   (of which {wait_ms:.3f} ms in wait)")
    say(f"dtrain / torch step time: {dtrain_ms / torch_ms:.3f} "
        f"({'dtrain faster' if dtrain_ms < torch_ms else 'torch faster'})")
    if rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "ddp_vs_torch", "world_size": world, "torch": torch.__version__,
                       "library": dtrain.build_info(), "dims": dims, "batch": args.batch,
                       "bucket_bytes": args.bucket_kib * 1024,
                       "torch_default_buckets": args.torch_default_buckets,
                       "steps": args.steps, "rounds": args.rounds,
                       "torch_step_ms": torch_ms, "dtrain_step_ms": dtrain_ms, "dtrain_wait_ms": wait_ms,
                       "ratio": dtrain_ms / torch_ms,
                       "final_loss": final_loss}, f, indent=2)
        say(f"# results written to {args.json}")

    sides[1].close()
    dist.destroy_process_group()
    comm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
