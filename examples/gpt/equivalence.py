#!/usr/bin/env python3
"""Trains the GPT for a few steps on one process and on several meshes with
the same seed, and checks that every mesh gives the one process's losses.

    python3 examples/gpt/equivalence.py --build build/ci            the whole matrix
    python3 examples/gpt/equivalence.py --build build/ci --subset   what CTest runs
    python3 examples/gpt/equivalence.py --build build/ci --twin     also the Python twin (train_gpt.py)

The whole matrix is every (dp, tp, pp) in {1, 2}^3, each pipeline of two
stages under every schedule, context parallelism (cp = 2: zigzag shards,
ring attention) alone and with each of the others, and expert parallelism
(ep = 2, a model with 4 experts in every other block, compared with that
model on one process) alone and with each of the others, and ZeRO stages
0-3 in place of DDP and the example's AdamW (--zero), over dp alone and
with tp, pp and cp. With --twin, the
Python twin of the training loop (train_gpt.py, over the bindings) runs on
one process and on dp 2 x tp 2 x pp 2 too, against the same reference. A mesh passes when its loss at every step is
within --rtol (relative) of the one process's. Prints a table; exits 1 when
a mesh differs or fails to run.
"""
import argparse
import itertools
import os
import re
import subprocess
import sys
import time

# A model small enough for 8 ranks on two cores, with 4 layers so that an
# interleaved pipeline of 2 ranks x 2 chunks has a layer per stage.
TINY = ["--layers", "4", "--hidden", "32", "--heads", "4", "--seq", "16", "--batch", "8",
        "--microbatches", "2", "--warmup", "5", "--log-every", "1", "--eval-every", "1000",
        "--eval-seqs", "8", "--sample", "0"]
STEP = re.compile(r"step +(\d+)/\d+ +loss ([0-9.eE+-]+)")


MOE = ["--experts", "4", "--top-k", "2"]


def meshes(subset):
    """(dp, tp, pp, cp, ep, schedule, zero stage or None) tuples."""
    if subset:
        return [(2, 1, 1, 1, 1, "1f1b", None), (1, 2, 1, 1, 1, "1f1b", None), (1, 1, 2, 1, 1, "1f1b", None),
                (1, 1, 2, 1, 1, "interleaved", None), (1, 2, 2, 1, 1, "zb_h1", None), (1, 1, 1, 2, 1, "1f1b", None),
                (1, 1, 1, 1, 2, "1f1b", None), (2, 2, 2, 1, 1, "1f1b", 3), (2, 2, 2, 1, 1, "1f1b", None)]
    return [m + (None,) for m in full_matrix()] + [(1, 1, 1, 1, 1, "1f1b", 0), (2, 1, 1, 1, 1, "1f1b", 1),
                                                   (2, 1, 1, 1, 1, "1f1b", 2), (2, 1, 1, 1, 1, "1f1b", 3),
                                                   (2, 1, 1, 2, 1, "1f1b", 3), (1, 2, 1, 1, 1, "1f1b", 1),
                                                   (1, 1, 2, 1, 1, "1f1b", 2), (2, 2, 1, 2, 1, "1f1b", 2),
                                                   (2, 2, 2, 1, 1, "1f1b", 1), (2, 2, 2, 1, 1, "1f1b", 3)]


def full_matrix():
    """Every (dp, tp, pp) in {1, 2}^3 under each schedule, then cp = 2 and ep = 2 with the others."""
    out = []
    for dp, tp, pp in itertools.product((1, 2), repeat=3):
        for schedule in (("gpipe", "1f1b", "interleaved", "zb_h1") if pp > 1 else ("1f1b",)):
            out.append((dp, tp, pp, 1, 1, schedule))
    for dp, tp, pp in ((1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2), (1, 2, 2)):
        out.append((dp, tp, pp, 2, 1, "1f1b"))
    for dp, tp, pp in ((1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2), (2, 2, 1), (1, 2, 2)):
        out.append((dp, tp, pp, 1, 2, "1f1b"))
    return out


# What only train_gpt has, left out of the twin's command line.
TWIN_LACKS = ("--eval-every", "--eval-seqs", "--sample")


def train(args, dp, tp, pp, cp, ep, schedule, moe, twin=False, zero=None):
    ranks = dp * tp * pp * cp * ep
    options = ["--data", args.data, "--steps", str(args.steps), "--seed", str(args.seed), "--dp", str(dp),
               "--tp", str(tp), "--pp", str(pp), "--schedule", schedule] + TINY
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if twin:
        program = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_gpt.py")]
        options = [o for i, o in enumerate(options) if o not in TWIN_LACKS and options[i - 1] not in TWIN_LACKS]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(os.path.abspath(args.build), "bindings/python"),
                                                          env.get("PYTHONPATH")]))
    else:
        program = [os.path.join(args.build, "examples/gpt/train_gpt")]
        options += ["--cp", str(cp), "--ep", str(ep)] + (MOE if moe else [])
        options += [] if zero is None else ["--zero", str(zero)]
    cmd = [os.path.join(args.build, "tools/dtrun/dtrun"), "-n", str(ranks), "--timeout", str(args.timeout)] + program + options
    t0 = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout + 30)
    seconds = time.monotonic() - t0
    losses = {int(m.group(1)): float(m.group(2)) for m in STEP.finditer(run.stdout)}
    if run.returncode not in (0, 1) or args.steps not in losses:  # 1: too few steps to learn, not a failure here
        sys.stderr.write(f"mesh dp{dp} tp{tp} pp{pp} cp{cp} ep{ep} {schedule} failed ({run.returncode}):\n{run.stdout}{run.stderr}\n")
        return None, seconds
    return losses, seconds


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True, help="the build directory (holds tools/dtrun and examples/gpt)")
    p.add_argument("--data", default=os.path.join(here, "..", "..", "README.md"), help="the text to train on")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--timeout", type=int, default=100, help="seconds per run")
    p.add_argument("--subset", action="store_true", help="a representative subset instead of the whole matrix")
    p.add_argument("--twin", action="store_true", help="also run the Python twin (needs the binding built)")
    args = p.parse_args()

    refs = {}
    for moe in (False, True):
        refs[moe], seconds = train(args, 1, 1, 1, 1, 1, "1f1b", moe)
        if refs[moe] is None:
            return 1
        print(f"reference ({'with experts' if moe else 'dense'}): one process, "
              f"loss at step {args.steps} = {refs[moe][args.steps]:.7f} ({seconds:.1f} s)")
    print(f"{'dp':>2} {'tp':>2} {'pp':>2} {'cp':>2} {'ep':>2} {'schedule':<21} {'ranks':>5} {'loss @' + str(args.steps):>12} "
          f"{'rel. diff':>10} {'max rel. diff':>14} {'seconds':>8}  result")
    failed = 0
    runs = [m + (False,) for m in meshes(args.subset)]
    if args.twin:
        runs += [(1, 1, 1, 1, 1, "1f1b", None, True), (2, 2, 2, 1, 1, "1f1b", None, True)]
    for dp, tp, pp, cp, ep, schedule, zero, twin in runs:
        moe = ep > 1
        ref = refs[moe]
        losses, seconds = train(args, dp, tp, pp, cp, ep, schedule, moe, twin, zero)
        label = schedule + (" (python)" if twin else "") + ("" if zero is None else f" zero {zero}")
        mesh = f"{dp:>2} {tp:>2} {pp:>2} {cp:>2} {ep:>2} {label:<21} {dp * tp * pp * cp * ep:>5}"
        if losses is None:
            failed += 1
            print(f"{mesh} {'-':>12} {'-':>10} {'-':>14} "
                  f"{seconds:>8.1f}  FAILED TO RUN")
            continue
        rel = abs(losses[args.steps] - ref[args.steps]) / abs(ref[args.steps])
        worst = max(abs(losses[s] - ref[s]) / abs(ref[s]) for s in ref)
        # Every step, not only the last: a wrong gradient norm clips a few
        # steps differently, and the losses may drift back together.
        ok = worst <= args.rtol
        failed += not ok
        print(f"{mesh} {losses[args.steps]:>12.7f} {rel:>10.2e} "
              f"{worst:>14.2e} {seconds:>8.1f}  {'ok' if ok else 'DIFFERS'}", flush=True)
    print(f"{failed} mesh(es) differ or failed" if failed else "every mesh gives the one process's losses")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
