#!/usr/bin/env python3
"""The share of ring attention's communication that compute hides, measured
where the ring waits.

    cp_hidden.py -b BUILD [-n RANKS] [--json OUT] [-- DTBENCH_CP_OPTIONS...]

Runs `dtbench cp` twice under dtrun with DTRAIN_TRACE_FILE set, forward
alone and then with --backward. With the trace on, each rank's ring
attention writes a span for each block's attention and each wait for the
next key/value block (WAIT_KV) or gradient accumulator (WAIT_ACCUMULATOR)
on its thread "cp ring ..." (docs/observability.md), and its communicator
a span for each shift of the ring (a send to the next rank and a receive
from the previous, started as one point-to-point group), from the moment it
was posted.

A wait is for the shifts that complete during it. Each of those could move
only once its neighbours had posted theirs: before that, the rank waits
for a peer to get there (the peer's compute took longer, which is load
imbalance, not communication); after it, for the transfer.
So per call and rank:

    imbalance = the part of the waits before the awaited messages' peers
                had posted them
    exposed   = the rest: transfers that compute did not hide
    hidden    = 1 - exposed / transfers alone

where `transfers alone` is dtbench cp's transfer_ms: the cp - 1 key/value
shifts of the forward by themselves, between the same ranks. Backward moves
the same cp - 1 blocks and, besides, an accumulator of the same size for
each of them, so its transfers alone are transfer_ms * 2. The slowest
rank's figures are the ones reported. dtbench cp's own `hidden` column
compares whole-call times instead, which on a machine whose transfers are a
few milliseconds of seconds of compute is below the runs' spread; the waits
are not.
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


def thread_names(events):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def messages_ready(events, threads, ranks):
    """Per rank: (end, ready) of each shift of the ring on its communicator,
    ready being when the shift had been posted on this rank and on both its
    neighbours (us)."""
    suffix = f" of {ranks})"
    shifts = defaultdict(list)  # rank -> [(posted, end)] in order
    for e in events:
        if e.get("ph") != "X" or e.get("name") != "p2p_group":
            continue
        thread = threads.get((e["pid"], e["tid"]), "")
        if thread.startswith("comm c0 ") and thread.endswith(suffix):
            shifts[e["pid"]].append((e["ts"], e["ts"] + e["dur"]))
    for rank in shifts:
        shifts[rank].sort()
    # Every rank starts the same shifts in the same order (one send to the
    # next rank and one receive from the previous, as a group): the k-th of
    # a rank moves with the k-th of its neighbours.
    ready = defaultdict(list)
    for rank, own in shifts.items():
        neighbours = [shifts[(rank + 1) % ranks], shifts[(rank - 1) % ranks]]
        for k, (posted, end) in enumerate(own):
            both = max([posted] + [n[k][0] for n in neighbours if k < len(n)])
            ready[rank].append((end, both))
    return ready


def ring_waits(events, ranks):
    """Per (pass, layout, rank): the number of ring calls and the summed
    imbalance and exposed communication of its waits (ms)."""
    threads = thread_names(events)
    ready = messages_ready(events, threads, ranks)
    calls, imbalance, exposed = defaultdict(int), defaultdict(float), defaultdict(float)
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
            start, end = e["ts"], e["ts"] + e["dur"]
            awaited = [both for done, both in ready[e["pid"]] if start <= done <= end]
            communication = end - max([start] + awaited)
            exposed[key] += max(0.0, communication) / 1000.0
            imbalance[key] += (e["dur"] - max(0.0, communication)) / 1000.0
    return calls, imbalance, exposed


def slowest_per_call(calls, figures, pass_name, layout, ranks):
    """The largest figure per call over the ranks, ms."""
    per_rank = []
    for rank in range(ranks):
        key = (pass_name, layout, rank)
        if calls[key] == 0:
            sys.exit(f"no {pass_name} ring calls of the {layout} layout on rank {rank} in the trace")
        per_rank.append(figures[key] / calls[key])
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
    for pass_name, events, scale in (("forward", forward_events, 1.0), ("backward", backward_events, 2.0)):
        calls, imbalance, exposed = ring_waits(events, cp)
        for layout in ("contiguous", "zigzag"):
            alone = transfer[layout] * scale
            shown = slowest_per_call(calls, exposed, pass_name, layout, cp)
            hidden = max(0.0, 1.0 - shown / alone) if alone > 0 else 0.0
            rows.append({"pass": pass_name, "layout": layout, "transfers_alone_ms": alone, "exposed_ms": shown,
                         "imbalance_ms": slowest_per_call(calls, imbalance, pass_name, layout, cp),
                         "hidden_share": hidden})
    print(f"# cp_hidden: dtbench cp {' '.join(args.options)} on {cp} ranks; per call, the slowest rank's waits "
          "for its peers (imbalance) and for transfers (exposed); hidden = 1 - exposed / transfers alone")
    print(f"{'pass':<9} {'layout':<11} {'alone_ms':>9} {'imbalance_ms':>13} {'exposed_ms':>11} {'hidden':>7}")
    for r in rows:
        print(f"{r['pass']:<9} {r['layout']:<11} {r['transfers_alone_ms']:9.3f} {r['imbalance_ms']:13.3f} "
              f"{r['exposed_ms']:11.3f} {100 * r['hidden_share']:6.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "cp_hidden", "ranks": cp, "options": args.options, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
