#!/usr/bin/env python3
"""The share of ring attention's communication that compute hides, measured
where the ring waits.

    cp_hidden.py -b BUILD [-n RANKS] [--json OUT] [-- DTBENCH_CP_OPTIONS...]

Runs `dtbench cp` twice under dtrun with DTRAIN_TRACE_FILE set, forward
alone and then with --backward. With the trace on, each rank's ring
attention writes a span for each block's attention and each wait for the
next key/value block (WAIT_KV) or gradient accumulator (WAIT_ACCUMULATOR)
on its thread "cp ring ..." (docs/observability.md). The waits are the
communication compute did not hide, so per call and rank:

    exposed = the sum of the call's waits
    hidden  = 1 - exposed / transfers alone

where `transfers alone` is dtbench cp's transfer_ms: the cp - 1 key/value
shifts of the forward by themselves, between the same ranks. Backward moves
the same cp - 1 blocks and, besides, an accumulator of the same size at each
of its cp steps, so its transfers alone are transfer_ms * (2 cp - 1) /
(cp - 1). The slowest rank's exposed time is the one reported. dtbench cp's
own `hidden` column compares whole-call times instead, which on a machine
whose transfers are a few milliseconds of seconds of compute is below the
runs' spread; the waits are not.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict


def run_traced(dtrun, dtbench, ranks, options, directory, name):
    trace = os.path.join(directory, name + "-trace.json")
    results = os.path.join(directory, name + ".json")
    env = dict(os.environ, DTRAIN_TRACE_FILE=trace, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               DTRAIN_BLAS_THREADS="1")
    done = subprocess.run([dtrun, "-n", str(ranks), dtbench, "cp", *options, "--json", results], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"dtbench cp failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    with open(results) as f:
        return events, json.load(f)


def ring_spans(events, ranks):
    """Per (pass, layout, rank): the number of ring calls and the summed waits (ms)."""
    threads = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    calls, waits = defaultdict(int), defaultdict(float)
    suffix = f" of {ranks})"
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("cp", "cp_wait"):
            continue
        thread = threads.get((e["pid"], e["tid"]), "")
        if not thread.startswith("cp ring") or not thread.endswith(suffix):
            continue  # the whole sequence's calls on a communicator of one rank
        key = (e["args"]["pass"], e["args"]["layout"], e["pid"])
        if e["cat"] == "cp" and e["args"]["step"] == 0:
            calls[key] += 1
        if e["cat"] == "cp_wait":
            waits[key] += e["dur"] / 1000.0
    return calls, waits


def exposed_per_call(calls, waits, pass_name, layout, ranks):
    """The slowest rank's waits per call, ms."""
    per_rank = []
    for rank in range(ranks):
        key = (pass_name, layout, rank)
        if calls[key] == 0:
            sys.exit(f"no {pass_name} ring calls of the {layout} layout on rank {rank} in the trace")
        per_rank.append(waits[key] / calls[key])
    return max(per_rank)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--build", required=True, help="the build directory (dtbench, dtrun)")
    parser.add_argument("-n", "--ranks", type=int, default=2)
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument("options", nargs="*", help="dtbench cp options (after --)")
    args = parser.parse_args()
    if args.ranks < 2:
        sys.exit("a ring needs at least 2 ranks")
    dtbench = os.path.join(args.build, "benchmarks", "dtbench", "dtbench")
    dtrun = os.path.join(args.build, "tools", "dtrun", "dtrun")
    cp = args.ranks
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        forward_events, forward = run_traced(dtrun, dtbench, cp, args.options, directory, "forward")
        backward_events, _ = run_traced(dtrun, dtbench, cp, args.options + ["--backward"], directory, "backward")
    transfer = {r["layout"]: r["transfer_ms"] for r in forward["results"]}
    for pass_name, events, scale in (("forward", forward_events, 1.0),
                                     ("backward", backward_events, (2 * cp - 1) / (cp - 1))):
        calls, waits = ring_spans(events, cp)
        for layout in ("contiguous", "zigzag"):
            alone = transfer[layout] * scale
            exposed = exposed_per_call(calls, waits, pass_name, layout, cp)
            hidden = max(0.0, 1.0 - exposed / alone) if alone > 0 else 0.0
            rows.append({"pass": pass_name, "layout": layout, "transfers_alone_ms": alone, "exposed_ms": exposed,
                         "hidden_share": hidden})
    print(f"# cp_hidden: dtbench cp {' '.join(args.options)} on {cp} ranks; exposed = the slowest rank's waits "
          "per call; hidden = 1 - exposed / transfers alone")
    print(f"{'pass':<9} {'layout':<11} {'alone_ms':>9} {'exposed_ms':>11} {'hidden':>7}")
    for r in rows:
        print(f"{r['pass']:<9} {r['layout']:<11} {r['transfers_alone_ms']:9.3f} {r['exposed_ms']:11.3f} "
              f"{100 * r['hidden_share']:6.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "cp_hidden", "ranks": cp, "options": args.options, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
