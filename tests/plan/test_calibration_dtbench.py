#!/usr/bin/env python3
"""The planner calibrated on this machine predicts dtbench's step times.

    test_calibration_dtbench.py DTBENCH DTRUN CALIBRATE_PY

For each of dtbench ddp, zero, tp and pipeline (2 ranks, small sizes): fit
a cluster file to this machine (tools/dtplan/calibrate.py --measure: the
link from one collectives sweep with --evict, the GEMM rate from one wall-clock GEMM run
per rank at once), run the benchmark right after, and check every step time
it reports against `dtbench predict` on that file: within 25 %. Each
benchmark is calibrated just before it runs because other work on a shared
machine changes the rate a rank computes at from one minute to the next,
and the calibration must see the load the benchmark sees. Step times are
medians over steps where the benchmark reports them (ddp, zero), and means
of a few steps otherwise (tp, pipeline). One BLAS and OpenMP thread per rank.

The check can fail: it is also run on the same measurements against a
cluster file whose GEMM rate is half the fitted one, where the benchmarks
bound by GEMMs must fall outside the tolerance.

Runs only with DTRAIN_TEST_CALIBRATION=1 in the environment, and exits 77
(skipped) otherwise: it compares timings on whatever else the machine is
running, where one repeat slowed by other work can move a median past the
tolerance (docs/planner.md, "The check"), so it is a measurement to run on
purpose, not part of the suite's verdict.

Exits 77 (skipped) too when dtbench was built without the example model that
ddp and zero train, and when other work holds the cores: if the GEMM
threads of the first calibration, or (after printing every figure) of the
calibrations' median, had less than MIN_CORE_SHARE of a core (their CPU
time over their wall time), the ranks ran at the mercy of other processes'
scheduling, which no model of this machine predicts (a collective then
waits for whichever rank was descheduled). The same when the machine is so
slow that the benchmarks would not end within BUDGET_S.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

TOLERANCE = 0.25
RANKS = "2"
REPEATS = 3
MIN_CORE_SHARE = 0.8
BUDGET_S = 150  # before the last benchmark starts; CTest's timeout is 300 s

# The benchmarks, each as dtbench runs it, and the shapes (M x N x K) of
# its largest products, on which the GEMM rate is calibrated: small GEMMs
# reach less of the peak than large ones (docs/planner.md, "What the model
# leaves out"). The MLP of ddp and zero is 64 -> 1024 -> 1024 -> 10 on 256
# samples per rank (forward, weight and input gradients of the 1024 x 1024
# layer); the tp block 4096 -> 1024 -> 4096 on 128 tokens, 512 columns of
# it per rank (forward, and the weight gradient); the pipeline 4
# micro-batches of stages that sleep 5 ms per unit (no GEMM). ddp's modes
# and zero's stages take turns over 3 rounds, so that a change of load
# falls on all of them.
MLP = ["--hidden", "1024", "--layers", "2", "--batch", "512", "--steps", "2", "--rounds", "3", "--warmup", "2"]
MLP_SHAPES = "256x1024x1024,1024x1024x256,256x1024x1024"
BENCHMARKS = {
    "ddp": (MLP + ["--bucket-kib", "1024"], MLP_SHAPES),
    "zero": (MLP, MLP_SHAPES),
    "tp": (["--tokens", "128", "--hidden", "4096", "--ffn", "1024", "--iters", "3"],
           "128x512x4096,128x4096x512,4096x512x128"),
    "pipeline": (["--work", "sleep", "--unit-us", "5000", "--microbatches", "4", "--steps", "3"], MLP_SHAPES),
}


def run(command, env):
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def predict(dtbench, cluster, results, out, env):
    run([dtbench, "predict", "--cluster-file", cluster, "--json", out, results], env)
    with open(out) as f:
        return json.load(f)["rows"]


def halve_gemm_rate(cluster, out):
    with open(cluster) as f:
        lines = f.read().splitlines()
    with open(out, "w") as f:
        for line in lines:
            if line.startswith("gemm_efficiency"):
                line = f"gemm_efficiency = {float(line.split('=')[1]) / 2:.6g}"
            f.write(line + "\n")


def median(values):
    return sorted(values)[len(values) // 2]


class Loaded(Exception):
    """Other work holds the cores: the comparison would say nothing."""


def calibrate_here(calibrate, dtbench, dtrun, tmp, cluster, shapes, env):
    """Fits `cluster` to this machine now, the GEMM rate on `shapes`;
    returns the share of a core each rank's GEMM thread had meanwhile."""
    collectives = os.path.join(tmp, "collectives.json")
    reuse = ["--collectives", collectives] if os.path.exists(collectives) else []
    run([sys.executable, calibrate, "--measure", dtbench, "--dtrun", dtrun, "--ranks", RANKS, "--keep", tmp,
         "--shapes", shapes, *reuse, "-o", cluster], env)
    shares = []
    for rank in range(int(RANKS)):
        with open(os.path.join(tmp, f"gemm-{rank}.json")) as f:
            shares.append(json.load(f)["core_share"])
    return shares


def measure(name, first, tmp, dtbench, dtrun, calibrate, env):
    """REPEATS times: calibrate, run the benchmark, predict it. Returns, per
    row, the measured / predicted ratios against the fitted cluster file and
    against one with half its GEMM rate, and the calibrations' core shares.
    Raises Loaded when this is the `first` benchmark and its first
    calibration found the cores held by other work."""
    options, shapes = BENCHMARKS[name]
    ratios, wrong_ratios, shares = {}, {}, []
    for repeat in range(REPEATS):
        cluster = os.path.join(tmp, f"{name}-{repeat}.txt")
        shares += calibrate_here(calibrate, dtbench, dtrun, tmp, cluster, shapes, env)
        if first and repeat == 0 and median(shares) < MIN_CORE_SHARE:
            raise Loaded(f"the first calibration's GEMM threads had {median(shares):.0%} of a core")
        results = os.path.join(tmp, f"{name}-{repeat}.json")
        run([dtrun, "-n", RANKS, dtbench, name, *options, "--json", results], env)
        wrong = os.path.join(tmp, f"{name}-{repeat}-wrong.txt")
        halve_gemm_rate(cluster, wrong)
        for path, into in ((cluster, ratios), (wrong, wrong_ratios)):
            for row in predict(dtbench, path, results, path + ".json", env):
                into.setdefault(f"{row['benchmark']} {row['case']}", []).append(
                    (row["measured_ms"], row["predicted_ms"]))
    return ratios, wrong_ratios, shares


def main(dtbench, dtrun, calibrate):
    if os.environ.get("DTRAIN_TEST_CALIBRATION") != "1":
        print("skipped: a timing comparison on a shared machine, which other work there can fail "
              "(docs/planner.md, \"The check\"); run it with DTRAIN_TEST_CALIBRATION=1 "
              "ctest --test-dir build/ci -R plan.calibration_dtbench --output-on-failure")
        return 77
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", DTRAIN_BLAS_THREADS="1")
    probe = subprocess.run([dtbench, "ddp", "--help"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skipped: dtbench ddp is not available: {probe.stderr.strip()}")
        return 77
    failures, shares = [], []
    start = time.monotonic()
    print(f"{'case':<32} {'measured / predicted ms, each repeat':<64} {'median ratio':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in BENCHMARKS:
            if time.monotonic() - start > BUDGET_S:
                print(f"skipped: the machine is too slow now ({time.monotonic() - start:.0f} s before {name}); "
                      "other work holds the cores")
                return 77
            try:
                ratios, wrong_ratios, benchmark_shares = measure(name, not shares, tmp, dtbench, dtrun, calibrate,
                                                                 env)
            except Loaded as e:
                print(f"skipped: other work holds the cores: {e}, less than {MIN_CORE_SHARE:.0%}")
                return 77
            shares += benchmark_shares
            for case, pairs in ratios.items():
                ratio = median([m / p for m, p in pairs])
                shown = "  ".join(f"{m:.1f}/{p:.1f}" for m, p in pairs)
                print(f"{case:<32} {shown:<64} {ratio:12.3f}", flush=True)
                if abs(ratio - 1) > TOLERANCE:
                    failures.append(f"{case}: measured / predicted {ratio:.3f}")
                # A GEMM rate off by 2x must show wherever GEMMs set the pace.
                wrong = median([m / p for m, p in wrong_ratios[case]])
                if name != "pipeline" and abs(wrong - 1) <= TOLERANCE:
                    failures.append(f"{case}: within {TOLERANCE:.0%} even at half the GEMM rate ({wrong:.3f})")
    share = median(shares)
    print(f"the calibrations' GEMM threads had {share:.0%} of a core (median; from {min(shares):.0%} to "
          f"{max(shares):.0%})")
    if failures and share < MIN_CORE_SHARE:
        print("not checked:\n  " + "\n  ".join(failures))
        print(f"skipped: other work held the cores (the ranks had {share:.0%} of a core, less than "
              f"{MIN_CORE_SHARE:.0%}): a timed comparison says nothing about the model then")
        return 77
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"every step time within {TOLERANCE:.0%} of the prediction")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
