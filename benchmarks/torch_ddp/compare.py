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

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_common as common  # noqa: E402  (first: it sets the thread counts numpy and torch read)

import dtrain  # noqa: E402


def parse_args():
    def ddp_options(p):
        p.add_argument("--bucket-kib", type=int, default=8, help="bucket size of both DDPs in KiB (default 8)")
        p.add_argument("--torch-default-buckets", action="store_true",
                       help="leave torch DDP's bucket size at its default (25 MiB) instead")

    return common.parse_args(__doc__, ddp_options)


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
        waited = common.seconds(self.ddp.wait)
        self.opt.step()
        return loss.item(), waited

    def check_in_place(self):
        if [p.grad.data_ptr() for p in self.params] != self.grad_ptrs:
            raise RuntimeError("autograd replaced a .grad tensor that dtrain.DDP holds")

    def close(self):
        self.ddp.close()


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(common.even_batch(args, "torch DDP"))
    rank, world = comm.rank, comm.size

    dims = common.dims(args)
    bucket_mib = None if args.torch_default_buckets else args.bucket_kib / 1024.0
    sides = [TorchSide(torch, common.build_model(torch, dims, args.seed), args, bucket_mib),
             DtrainSide(torch, common.build_model(torch, dims, args.seed), comm, args)]

    # The same batches for both sides.
    batches = common.batches(torch, args, rank, world)

    say(f"compare.py: {world} ranks; torch {torch.__version__} (gloo) vs {dtrain.build_info()}")
    torch_buckets = "25 MiB (its default)" if args.torch_default_buckets else f"{args.bucket_kib} KiB"
    say(f"compare.py: MLP {' -> '.join(map(str, dims))}, global batch {args.batch}, AdamW lr {args.lr:g}; "
        f"buckets: torch {torch_buckets}, dtrain {args.bucket_kib} KiB ({sides[1].ddp.bucket_count} buckets); "
        f"{args.rounds} rounds x {args.steps} steps after {args.warmup} warmup steps")

    times, waits, losses = common.train(comm, sides, batches, args, check=sides[1].check_in_place)

    # Medians over steps, and the last step's loss over the whole batch
    # (equal shards: the mean of the ranks'), averaged over ranks.
    torch_ms, dtrain_ms, wait_ms, last = common.rank_means(comm, times, waits,
                                                           [losses["torch"][-1], losses["dtrain"][-1]])
    final_loss = {"torch": last[0], "dtrain": last[1]}
    say(f"{'':8} {'step ms':>10} {'final loss':>11}")
    say(f"{'torch':8} {torch_ms:10.3f} {final_loss['torch']:11.4f}")
    say(f"{'dtrain':8} {dtrain_ms:10.3f} {final_loss['dtrain']:11.4f}   (of which {wait_ms:.3f} ms in wait)")
    common.say_ratio(say, torch_ms, dtrain_ms)
    common.finish(args, comm, dist, say,
                  {"benchmark": "ddp_vs_torch", "world_size": world, "torch": torch.__version__,
                   "library": dtrain.build_info(), "dims": dims, "batch": args.batch,
                   "bucket_bytes": args.bucket_kib * 1024,
                   "torch_default_buckets": args.torch_default_buckets,
                   "steps": args.steps, "rounds": args.rounds,
                   "torch_step_ms": torch_ms, "dtrain_step_ms": dtrain_ms, "dtrain_wait_ms": wait_ms,
                   "ratio": dtrain_ms / torch_ms,
                   "final_loss": final_loss}, sides[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
