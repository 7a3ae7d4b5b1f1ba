"""Ctrl-C during a blocking call, across two real ranks; run under dtrun:

    dtrun -n 2 python3 interrupt.py allreduce|wait|ddp

Rank 0 blocks in the named call (a blocking allreduce, a request's wait, a
DDP's wait), which rank 1 never joins: rank 1 waits for a message from rank 0
instead. A timer thread of rank 0 sends its process SIGINT; the call must
raise KeyboardInterrupt within LIMIT_S of the signal, chained from the
AbortedError of its communicator, which reports itself aborted afterwards.
Rank 0 then exits, as an interrupted program does, and rank 1 must be told
(RemoteError naming rank 0) long before the communicators' deadline, which
dtrun sets to a minute. A failed check prints what and exits 1. Not a pytest
module (tests/conftest.py keeps pytest out of this folder); CTest runs it
as python_interrupt_<call>_2.
"""

import os
import signal
import sys
import threading
import time

import numpy as np

import dtrain

# The binding's share of the reaction is well under a millisecond (measured:
# 0.5 ms); the limit is the 100 ms, with no margin added: the two
# ranks sleep or wait, so even on a loaded two-core machine the interrupted
# thread has the CPU soon after the abort.
LIMIT_S = 0.1
# What rank 1 may wait for rank 0's exit to reach it: a failed peer is seen
# within 0.02-0.26 s; far below the deadline, which is what it must beat.
TOLD_WITHIN_S = 10.0
SIGNAL_AFTER_S = 0.3


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def start_call(comm, call):
    """Starts `call` on rank 0 and returns what blocks until rank 1 joins."""
    data = np.ones(2, dtype=np.float32)
    if call == "allreduce":
        return lambda: comm.allreduce(data)
    if call == "wait":
        request = comm.allreduce(data, async_op=True)
        return request.wait
    if call == "ddp":
        ddp = dtrain.DDP(comm, [data])
        ddp.mark_ready(0)
        return ddp.wait
    raise CheckFailed(f"unknown call {call!r}")


def interrupted_rank(comm, call):
    blocking = start_call(comm, call)
    sent = {}

    def send_sigint():
        time.sleep(SIGNAL_AFTER_S)
        sent["at"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=send_sigint)
    timer.start()
    try:
        blocking()
    except KeyboardInterrupt as raised:
        took = time.monotonic() - sent["at"]
        interrupt = raised
    else:
        raise CheckFailed(f"{call} returned although rank 1 never joined it")
    finally:
        timer.join()
    print(f"{call}: KeyboardInterrupt {took * 1000:.2f} ms after SIGINT: {interrupt}", flush=True)
    check(took < LIMIT_S, f"{call}: KeyboardInterrupt {took * 1000:.1f} ms after SIGINT, not within "
                          f"{LIMIT_S * 1000:.0f} ms")
    cause = interrupt.__cause__
    check(isinstance(cause, dtrain.AbortedError) and "SIGINT" in str(cause),
          f"{call}: KeyboardInterrupt's cause is {cause!r}, not the AbortedError of the abort")
    check("aborted" in str(interrupt), f"{call}: KeyboardInterrupt says {interrupt}, not that it aborted")
    try:
        comm.barrier()
    except dtrain.AbortedError as error:
        check("aborted" in str(error), f"{call}: a later barrier says {error}")
    else:
        raise CheckFailed(f"{call}: the communicator still works after the interrupt")


def told_rank(comm, call):
    # A DDP's creation is collective; rank 1 makes its own and never uses it.
    ddp = dtrain.DDP(comm, [np.ones(2, dtype=np.float32)]) if call == "ddp" else None
    start = time.monotonic()
    try:
        comm.recv(np.zeros(2, dtype=np.float32), 0)
    except dtrain.RemoteError as error:
        waited = time.monotonic() - start
        print(f"told {waited:.2f} s after blocking: {error}", flush=True)
        check("rank 0" in str(error), f"the error does not name rank 0: {error}")
        check(waited < SIGNAL_AFTER_S + TOLD_WITHIN_S, f"told only after {waited:.1f} s")
    else:
        raise CheckFailed("the receive from the interrupted rank returned")
    finally:
        if ddp is not None:
            ddp.close()


def main():
    call = sys.argv[1]
    comm = dtrain.Comm()
    if comm.size != 2:
        raise CheckFailed(f"run with 2 ranks, not {comm.size}")
    comm.barrier()
    try:
        if comm.rank == 0:
            interrupted_rank(comm, call)
        else:
            told_rank(comm, call)
    except (CheckFailed, dtrain.Error) as failure:
        print(f"rank {comm.rank}: FAILED: {failure}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
