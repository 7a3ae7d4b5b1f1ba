#!/usr/bin/env python3
"""Checkpoints across meshes: saves after step 10 of 20 on one mesh, resumes
on another, and checks that steps 11-20 give the losses of one process
trained for 20 steps without stopping. Then damages a checkpoint and checks
that each kind of damage is refused with a message saying what is wrong.

    python3 examples/gpt/resume.py --build build/ci

Prints a table; exits 1 when a resumed run differs, fails, or a damaged
checkpoint is not refused.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from equivalence import MOE, STEP, TINY  # noqa: E402

# (saving mesh, resuming mesh), each as extra flags and its number of ranks.
PAIRS = [
    (("--dp 2 --tp 2 --pp 2", 8), ("--tp 2 --pp 2", 4)),
    (("--dp 2 --tp 2 --pp 2", 8), ("--dp 4 --pp 2", 8)),
    (("--dp 2 --tp 2 --pp 2", 8), ("", 1)),
    (("", 1), ("--tp 2 --pp 2 --schedule interleaved", 4)),
    (("--cp 2 --pp 2", 4), ("--dp 2", 2)),
    (("--ep 2 --tp 2", 4), ("", 1)),
]


def run(args, ranks, flags, extra):
    cmd = [os.path.join(args.build, "tools/dtrun/dtrun"), "-n", str(ranks), "--timeout", "100",
           os.path.join(args.build, "examples/gpt/train_gpt"), "--data", args.data, "--steps", "20",
           "--seed", "1"] + TINY + flags.split() + extra
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=160)
    return p.returncode, p.stdout + p.stderr, {int(m.group(1)): float(m.group(2)) for m in STEP.finditer(p.stdout)}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "README.md"))
    ap.add_argument("--rtol", type=float, default=1e-4)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gpt-resume-")
    failed = 0
    try:
        refs = {}
        for moe in (False, True):
            code, out, refs[moe] = run(args, 1, "", MOE if moe else [])
            if 20 not in refs[moe]:
                sys.stderr.write(out)
                return 1
        print(f"{'saved on':<24} {'resumed on':<40} {'loss @20':>10} {'max rel. diff 11-20':>20}  result")
        for (save, save_n), (load, load_n) in PAIRS:
            moe = "--ep" in save
            extra = MOE if moe else []
            ck = os.path.join(work, "ck")
            shutil.rmtree(ck, ignore_errors=True)
            code, out, _ = run(args, save_n, save, extra + ["--checkpoint", ck, "--save-at", "10"])
            saved = "saved " in out
            code, out2, losses = run(args, load_n, load, extra + ["--resume", ck])
            ref = refs[moe]
            ok = saved and "resumed from" in out2 and all(s in losses for s in range(11, 21))
            worst = max(abs(losses[s] - ref[s]) / abs(ref[s]) for s in range(11, 21)) if ok else float("nan")
            ok = ok and worst <= args.rtol and min(losses) == 11
            failed += not ok
            if not ok:
                sys.stderr.write(out + out2)
            print(f"{save or 'one process':<24} {load or 'one process':<40} {losses.get(20, float('nan')):>10.7f} "
                  f"{worst:>20.2e}  {'ok' if ok else 'DIFFERS'}", flush=True)

        # Damage: each copy of a good checkpoint must be refused, saying why.
        good = os.path.join(work, "good")
        run(args, 1, "", ["--checkpoint", good, "--save-at", "10", "--steps", "10"])
        unit = os.path.join("layer1-10.bin")

        def truncate(d):
            p = os.path.join(d, unit)
            with open(p, "r+b") as f:
                f.truncate(os.path.getsize(p) - 100)

        def flip(d):
            with open(os.path.join(d, unit), "r+b") as f:
                f.seek(1000)
                b = f.read(1)
                f.seek(1000)
                f.write(bytes([b[0] ^ 0x40]))

        def swap(d):  # a unit of another checkpoint under the expected name
            shutil.copy(os.path.join(d, "layer2-10.bin"), os.path.join(d, unit))

        def foreign(d):
            with open(os.path.join(d, "manifest"), "r+b") as f:
                f.write(b"tensorflow-ckpt")

        cases = [("truncated unit file", truncate, [], "truncated"),
                 ("flipped byte", flip, [], "corrupt"),
                 ("unit of another checkpoint", swap, [], "not the file the manifest names"),
                 ("foreign manifest", foreign, [], "not a GPT checkpoint"),
                 ("another model", lambda d: None, ["--hidden", "64"], "another model"),
                 ("no checkpoint", lambda d: shutil.rmtree(d), [], "no checkpoint")]
        print(f"\n{'damage':<28} {'refused with':<40} result")
        for name, damage, flags, expect in cases:
            d = os.path.join(work, "bad")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(good, d)
            damage(d)
            code, out, losses = run(args, 2, "--tp 2", flags + ["--resume", d])
            ok = code != 0 and "checkpoint refused" in out and expect in out and not losses
            failed += not ok
            if not ok:
                sys.stderr.write(out)
            print(f"{name:<28} {expect:<40} {'ok' if ok else 'NOT REFUSED'}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{failed} check(s) failed" if failed else "every resumed run continues with the same losses; "
          "every damaged checkpoint is refused")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
