"""The time of one latency-bound call from Python: an 8-byte blocking allreduce.

    dtrun -n 2 python3 benchmarks/python_call_latency.py [--calls 20000] [--json PATH]

The binding must be importable (PYTHONPATH=<build>/bindings/python,
LD_LIBRARY_PATH=<build>/capi). Each rank times every call of a loop of
--calls in-place allreduces of two float32 (Comm.allreduce, and the raw
dtrain._capi.dt_allreduce with the tensor converted once, which leaves only
the wrapper and the library), after --warmup untimed ones; rank 0 prints the
median, the 10th and 90th percentiles and the mean in microseconds. Run
without dtrun (a world of one) the allreduce is a local copy, so the
figures are the binding's and the library's own cost per call. What the binding
adds to a call (argument conversion, the GIL, the Ctrl-C guard) shows here,
since the data moved is negligible: to compare two builds, run this once
with each on the same machine and compare medians; the module's path is
printed and written to the JSON.
"""

import argparse
import json
import time

import numpy as np

import dtrain
from dtrain import _capi


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=20000, help="timed calls per loop (default 20000)")
    p.add_argument("--warmup", type=int, default=2000, help="untimed calls first (default 2000)")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def timed(call, calls, warmup):
    for _ in range(warmup):
        call()
    times = np.empty(calls)
    clock = time.perf_counter_ns
    for i in range(calls):
        start = clock()
        call()
        times[i] = clock() - start
    return times / 1000.0


def main():
    args = parse_args()
    with dtrain.Comm() as comm:
        data = np.ones(2, dtype=np.float32)
        tensor = _capi.Tensor(data, True, "send")
        handle = comm._live()
        loops = {
            "Comm.allreduce": lambda: comm.allreduce(data),
            "_capi.dt_allreduce": lambda: _capi.dt_allreduce(handle, tensor, tensor, _capi.DT_SUM, None, False),
        }
        rows = []
        for name, call in loops.items():
            comm.barrier()
            us = timed(call, args.calls, args.warmup)
            rows.append({"call": name, "calls": args.calls, "median_us": float(np.median(us)),
                         "p10_us": float(np.percentile(us, 10)), "p90_us": float(np.percentile(us, 90)), "mean_us": float(us.mean())})
        tensor.release()
        if comm.rank != 0:
            return
        print(f"# 8-byte allreduce, {comm.size} ranks, module {_capi.__file__}")
        print(f"{'call':<20} {'calls':>7} {'median us':>10} {'p10 us':>8} {'p90 us':>8} {'mean us':>8}")
        for row in rows:
            print(f"{row['call']:<20} {row['calls']:>7} {row['median_us']:>10.2f} {row['p10_us']:>8.2f} "
                  f"{row['p90_us']:>8.2f} {row['mean_us']:>8.2f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": comm.size, "module": _capi.__file__, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
