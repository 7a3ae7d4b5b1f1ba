#!/usr/bin/env python3
"""Writes a planner cluster file (dtrain/plan.h) fitted to dtbench measurements.

    calibrate.py --collectives dtbench-collectives.json [--gemm dtbench-gemm.json ...]
                 [--gpu-memory BYTES] [--preset NAME] -o cluster.txt
    calibrate.py --measure DTBENCH [--dtrun DTRUN] [--ranks N] [--keep DIR] ... -o cluster.txt

--measure runs the measurements on this machine first: `dtrun -n N dtbench
collectives --evict 64M` (unless --collectives gives one; each call timed
after the ranks wrote 64 MiB, as a training step issues it after its GEMMs) and N copies of `dtbench gemm
--clock wall` at once, one per rank, so that the GEMM rate is what each rank
of an N-rank job gets while the machine is loaded as it is now.

--collectives: `dtrun -n N dtbench collectives --json FILE` on one host. The
alpha-beta model of docs/planner.md is fitted to its allreduce, allgather and
reduce_scatter rows by least squares on relative error (the sizes span
decades): a ring allreduce takes 2(N-1) alpha + 2(N-1)/N bytes/beta, an
allgather or reduce-scatter (N-1) alpha + (N-1)/N bytes/beta. The fit sets
the intra-node link; one host has no other, so the inter-node link is the
same. gpus_per_node is N (the ranks), and memory_bandwidth the run's memcpy
bandwidth.

--gemm: `dtbench gemm --json FILE`, once or once per rank of a concurrent
run; the cluster file has one GEMM rate, that of the inputs' dtype of these
runs (`dtbench gemm --dtype`, --dtype with --measure): the dtype the
workload trains in. peak_flops is its cpu_peak_gflops (the device's peak where CUDA rows
are given and --peak-flops says it), and gemm_efficiency the median share of
peak of its three largest shapes, averaged over the files.

overlap, the share of data-parallel communication that compute hides, is
--overlap, else 0 when the GEMM rows are CPU ones (the ranks' progress
threads and shared-memory copies take the cores the compute needs), else
left out (1, as on GPUs).

gpu_memory is --gpu-memory, else the preset's, else (CPU ranks) the host's
memory shared by the ranks.

Without --gemm, --preset NAME keeps a preset's compute figures; the file
starts with "preset = NAME" and later keys override it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# Steps and the share of the buffer each moves, per collective, on N ranks.
RING = {
    "allreduce": lambda n: (2 * (n - 1), 2 * (n - 1) / n),
    "allgather": lambda n: (n - 1, (n - 1) / n),
    "reduce_scatter": lambda n: (n - 1, (n - 1) / n),
}


def fit_link(results, world):
    """(alpha seconds, beta bytes/s) minimising the relative error of the ring model."""
    # Each row: t = steps * alpha + share * bytes * g, with g = 1/beta. Divided by t,
    # rows weigh alike whatever their size: 1 = (steps/t) alpha + (share bytes/t) g.
    a11 = a12 = a22 = b1 = b2 = 0.0
    rows = 0
    for row in results:
        model = RING.get(row.get("op"))
        t = row.get("time_us")
        if model is None or t is None or t <= 0 or row.get("bytes", 0) <= 0:
            continue
        steps, share = model(world)
        x1 = steps / (t * 1e-6)
        x2 = share * row["bytes"] / (t * 1e-6)
        a11, a12, a22 = a11 + x1 * x1, a12 + x1 * x2, a22 + x2 * x2
        b1, b2 = b1 + x1, b2 + x2
        rows += 1
    det = a11 * a22 - a12 * a12
    if rows < 2 or det <= 0:
        raise SystemExit("calibrate: need allreduce, allgather or reduce_scatter rows of at least two sizes")
    alpha = (b1 * a22 - b2 * a12) / det
    g = (a11 * b2 - a12 * b1) / det
    if g <= 0:
        raise SystemExit("calibrate: the measurements give no positive bandwidth")
    return max(alpha, 0.0), 1.0 / g


def fit_gemm(gemm, peak_flops):
    """(peak FLOP/s, efficiency) from dtbench gemm's rows."""
    rows = gemm.get("results", [])
    cuda = [r for r in rows if r.get("cuda_gflops")]
    if cuda:
        if peak_flops is None:
            raise SystemExit("calibrate: CUDA GEMM rows need --peak-flops (the device's 16-bit peak)")
        rate = "cuda_gflops"
    else:
        peak_flops = gemm["cpu_peak_gflops"] * 1e9
        rate = "direct_gflops"
        cuda = rows
    largest = sorted(cuda, key=lambda r: r["m"] * r["n"] * r["k"])[-3:]
    if not largest:
        raise SystemExit("calibrate: the GEMM results have no rows")
    efficiency = statistics.median(r[rate] * 1e9 / peak_flops for r in largest)
    return peak_flops, min(efficiency, 1.0)


# What --measure runs. Collectives: sizes where both the latency and the
# bandwidth show. GEMM: shapes of the size the benchmarks' products have.
# Each call is timed after the rank wrote 64 MiB (--evict), as a step issues
# it after a layer's GEMMs: back to back, the buffers stay in the caches and
# the link looks up to twice as fast as a training step finds it.
COLLECTIVE_OPTIONS = ["--ops", "allreduce,allgather,reduce_scatter", "--min-bytes", "4K", "--max-bytes", "4M",
                      "--evict", "64M"]
GEMM_SHAPES = "256x1024x1024,512x1024x1024,1024x1024x1024"


def run(command):
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"calibrate: {' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")


def measure(args, folder):
    """Runs dtbench here; returns the paths of its collectives and GEMM results."""
    collectives = args.collectives
    if collectives is None:
        collectives = os.path.join(folder, "collectives.json")
        run([args.dtrun, "-n", str(args.ranks), args.measure, "collectives", *COLLECTIVE_OPTIONS,
             "--json", collectives])
    gemm = [os.path.join(folder, f"gemm-{rank}.json") for rank in range(args.ranks)]
    copies = [subprocess.Popen([args.measure, "gemm", "--clock", "wall", "--shapes", args.shapes, "--iters", "3",
                                "--dtype", args.dtype, "--json", path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for path in gemm]
    for copy in copies:
        _, err = copy.communicate(timeout=600)
        if copy.returncode != 0:
            raise SystemExit(f"calibrate: dtbench gemm failed ({copy.returncode}): {err.strip()}")
    return collectives, gemm


def cuda_rows(path):
    with open(path) as f:
        return any(row.get("cuda_gflops") for row in json.load(f).get("results", []))


def gemm_dtype(path):
    with open(path) as f:
        return json.load(f).get("dtype", "float32")


def host_memory_per_rank(ranks):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024 / ranks
    raise SystemExit("calibrate: /proc/meminfo gives no MemTotal; pass --gpu-memory")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collectives")
    parser.add_argument("--gemm", action="append", default=[], help="once per rank of a concurrent run")
    parser.add_argument("--measure", metavar="DTBENCH", help="run dtbench here first")
    parser.add_argument("--dtrun", default="dtrun", help="for --measure (default: dtrun on PATH)")
    parser.add_argument("--ranks", type=int, default=2, help="for --measure (default 2)")
    parser.add_argument("--shapes", default=GEMM_SHAPES, help="for --measure: dtbench gemm --shapes")
    parser.add_argument("--keep", metavar="DIR", help="for --measure: keep its results in DIR")
    parser.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                        help="for --measure: the GEMM inputs' dtype, the one the workload trains in (default f32)")
    parser.add_argument("--peak-flops", type=float)
    parser.add_argument("--gpu-memory", type=float,
                        help="bytes each rank may use (default: the preset's, else the host's memory per rank)")
    parser.add_argument("--preset", help="a100, h100 or h200: the figures no measurement gives")
    parser.add_argument("--overlap", type=float,
                        help="share of data-parallel communication compute hides, [0, 1] (default: 1 with CUDA "
                             "GEMM rows or a preset, 0 for CPU ranks)")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    if args.measure:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            args.collectives, args.gemm = measure(args, args.keep)
            return write(args)
        with tempfile.TemporaryDirectory() as folder:
            args.collectives, args.gemm = measure(args, folder)
            return write(args)
    if args.collectives is None:
        parser.error("--collectives or --measure is required")
    return write(args)


def write(args):
    with open(args.collectives) as f:
        collectives = json.load(f)
    world = int(collectives["world_size"])
    if world < 2:
        raise SystemExit("calibrate: a collectives run of one rank measures no link")
    alpha, beta = fit_link(collectives["results"], world)
    lines = [f"# fitted by calibrate.py to {' and '.join([args.collectives, *args.gemm])}"]
    evicted = collectives.get("evict_bytes", 0)
    lines.append(f"# the link: calls timed after each rank wrote {evicted} bytes (dtbench collectives --evict)"
                 if evicted else "# the link: calls timed back to back (buffers in the caches)")
    if args.preset:
        lines.append(f"preset = {args.preset}")
    lines += ["nodes = 1", f"gpus_per_node = {world}",
              f"intra_bandwidth = {beta:.6g}", f"intra_latency = {alpha:.6g}",
              f"inter_bandwidth = {beta:.6g}", f"inter_latency = {alpha:.6g}"]
    if collectives.get("memcpy_GBps"):
        lines.append(f"memory_bandwidth = {collectives['memcpy_GBps'] * 1e9:.6g}")
    if args.gemm:
        fits = []
        for path in args.gemm:
            with open(path) as f:
                fits.append(fit_gemm(json.load(f), args.peak_flops))
        peak = fits[0][0]
        efficiency = statistics.mean(fit[0] * fit[1] for fit in fits) / peak
        dtypes = sorted({gemm_dtype(path) for path in args.gemm})
        lines += [f"# GEMM rate of {', '.join(dtypes)} inputs",
                  f"peak_flops = {peak:.6g}", f"gemm_efficiency = {min(efficiency, 1.0):.4g}"]
    overlap = args.overlap
    if overlap is None and args.gemm and not any(cuda_rows(path) for path in args.gemm):
        overlap = 0.0
    if overlap is not None:
        if not 0 <= overlap <= 1:
            raise SystemExit("calibrate: --overlap must be in [0, 1]")
        lines += ["# the share of data-parallel communication compute hides (CPU ranks: 0)",
                  f"overlap = {overlap:.6g}"]
    if args.gpu_memory or not args.preset:
        lines.append(f"gpu_memory = {args.gpu_memory or host_memory_per_rank(world):.6g}")
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"alpha {alpha * 1e6:.2f} us, beta {beta / 1e9:.3f} GB/s on {world} ranks; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
