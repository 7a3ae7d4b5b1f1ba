"""The peer of `dtrain_cuda_comm_bench --backend ucx` on ranks that share a GPU:
torch.distributed over gloo with CUDA tensors, which gloo stages through host
memory as libdtrain's staged path does.

    python3 benchmarks/torch_staged/gloo_cuda.py [--ranks 2] [--port 29533]

Starts --ranks processes on CUDA device 0 (torch.multiprocessing), one
compute thread each, and prints rank 0's median time in microseconds of
allreduce and broadcast at the sizes dtrain_cuda_comm_bench prints, each
timed from a barrier to the device synchronised, 7 runs, the first 2 dropped.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = (1024, 65536, 4 << 20, 16 << 20, 64 << 20)


def run(rank, ranks, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    torch.cuda.set_device(0)
    cells = []
    for name in ("allreduce", "broadcast"):
        for size in SIZES:
            tensor = torch.zeros(size // 4, device="cuda")
            times = []
            for _ in range(7):
                torch.cuda.synchronize()
                dist.barrier()
                start = time.perf_counter()
                if name == "allreduce":
                    dist.all_reduce(tensor)
                else:
                    dist.broadcast(tensor, 0)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - start)
            cells.append(f"{name}:{size}={sorted(times[2:])[2] * 1e6:.1f}")
    if rank == 0:
        print("torch gloo cuda (us):", " ".join(cells), flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--port", type=int, default=29533)
    args = parser.parse_args()
    mp.spawn(run, args=(args.ranks, args.port), nprocs=args.ranks)


if __name__ == "__main__":
    main()
