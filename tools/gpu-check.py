#!/usr/bin/env python3
"""Runs the GPU tests (and, with --benchmarks, the GPU benchmarks) that
tools/gpu-bundle.py packed, on a machine with a GPU and without the build.

    tools/gpu-check.py BUNDLE [--out DIR] [--filter TEXT] [--benchmarks]

Unpacks BUNDLE into a temporary directory and runs each test of its
manifest as CTest would (its command, environment and deadline, in its
working directory), with the bundle's libraries and UCX modules found
first. A test passes on exit 0 unless its output matches its skip
expression; it is skipped on that match or on its skip exit code. Prints
one line per test and a summary, and writes DIR/gpu-tests.txt (the
summary and the output of every failure) and DIR/gpu-tests.json. Exits 1
when a test failed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time

BENCHMARKS = [
    ["{root}/build/benchmarks/dtbench/dtbench", "kernels", "--json", "{out}/kernels.json"],
    ["{root}/build/tools/dtrun/dtrun", "-n", "2", "{root}/build/tests/cuda/dtrain_cuda_comm_bench", "--backend", "ucx"],
    ["{root}/build/tools/dtrun/dtrun", "-n", "2", "{root}/build/benchmarks/dtbench/dtbench", "cp", "--device", "cuda",
     "--seq", "8192", "--heads", "8", "--kv-heads", "8", "--backward", "--json", "{out}/cp-cuda.json"],
    ["{root}/build/tools/dtrun/dtrun", "-n", "2", "{root}/build/benchmarks/dtbench/dtbench", "moe", "--device", "cuda",
     "--json", "{out}/moe-cuda.json"],
]


def filled(value, root, out):
    return value.replace("{root}", root).replace("{out}", out)


def environment(root, assignments):
    env = dict(os.environ)
    lib = os.path.join(root, "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["UCX_MODULE_DIR"] = os.path.join(lib, "ucx")
    for assignment in assignments:
        name, _, value = filled(assignment, root, "").partition("=")
        env[name] = value
    return env


def run(command, cwd, env, timeout):
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout + done.stderr, time.monotonic() - started
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return None, output + f"\n[timed out after {timeout} s]", time.monotonic() - started


def verdict(test, code, output):
    if code is None:
        return "TIMEOUT"
    if test["skip_return_code"] is not None and code == test["skip_return_code"]:
        return "SKIPPED"
    if any(re.search(expression, output) for expression in test["skip_regular_expression"]):
        return "SKIPPED"
    return "PASSED" if code == 0 else "FAILED"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle")
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu-check"), help="where the results go ($OUT)")
    parser.add_argument("--filter", default="", help="run only the tests whose names contain this")
    parser.add_argument("--benchmarks", action="store_true", help="also run the GPU benchmarks")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out = os.path.realpath(args.out)

    with tempfile.TemporaryDirectory() as unpacked:
        with tarfile.open(args.bundle) as tar:
            tar.extractall(unpacked)
        root = os.path.join(unpacked, "dtrain-gpu")
        with open(os.path.join(root, "manifest.json")) as f:
            manifest = json.load(f)
        results, failures = [], []
        for test in manifest["tests"]:
            if args.filter not in test["name"]:
                continue
            command = [filled(part, root, out) for part in test["command"]]
            code, output, seconds = run(command, filled(test["working_directory"], root, out),
                                        environment(root, test["environment"]), test["timeout"])
            status = verdict(test, code, output)
            print(f"{status:8} {seconds:7.1f} s  {test['name']}", flush=True)
            results.append({"name": test["name"], "status": status, "seconds": round(seconds, 2)})
            if status in ("FAILED", "TIMEOUT"):
                failures.append(f"===== {test['name']} ({status})\n{output[-6000:]}")
        benchmarks = []
        if args.benchmarks:
            for command in BENCHMARKS:
                command = [filled(part, root, out) for part in command]
                code, output, seconds = run(command, out, environment(root, []), 600)
                print(f"===== {' '.join(command)} (exit {code}, {seconds:.1f} s)\n{output[-4000:]}", flush=True)
                benchmarks.append({"command": command, "exit": code, "output": output[-20000:]})

    counts = {s: sum(r["status"] == s for r in results) for s in ("PASSED", "SKIPPED", "FAILED", "TIMEOUT")}
    summary = ", ".join(f"{n} {s.lower()}" for s, n in counts.items())
    if manifest["left_out"]:
        summary += f"; not in the bundle: {', '.join(manifest['left_out'])}"
    print(f"gpu-check: {summary}")
    with open(os.path.join(out, "gpu-tests.txt"), "w") as f:
        f.write(f"gpu-check: {summary}\n\n")
        f.write("\n".join(f"{r['status']:8} {r['seconds']:7.1f} s  {r['name']}" for r in results) + "\n\n")
        f.write("\n\n".join(failures) + "\n")
    with open(os.path.join(out, "gpu-tests.json"), "w") as f:
        json.dump({"summary": counts, "tests": results, "benchmarks": benchmarks}, f, indent=1)
    return 1 if counts["FAILED"] or counts["TIMEOUT"] else 0


if __name__ == "__main__":
    sys.exit(main())
