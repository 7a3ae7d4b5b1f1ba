"""Deadlines, abort, and the GIL released while a call blocks."""

import builtins
import threading
import time

import numpy as np
import pytest

import dtrain


def test_blocking_recv_times_out_then_the_comm_is_broken():
    with dtrain.Comm(timeout_ms=200) as comm:
        start = time.monotonic()
        with pytest.raises(dtrain.TimeoutError, match="200 ms") as info:
            comm.recv(np.zeros(4), 0)
        assert 0.15 < time.monotonic() - start < 10
        assert isinstance(info.value, builtins.TimeoutError)
        assert info.value.status == dtrain.ERR_TIMEOUT
        with pytest.raises(dtrain.AbortedError, match="broken"):
            comm.allreduce(np.zeros(4))


def test_request_wait_with_a_timeout(comm):
    request = comm.recv(np.zeros(2), 0, async_op=True)
    with pytest.raises(dtrain.TimeoutError):
        request.wait(timeout_ms=50)
    with pytest.raises(dtrain.AbortedError):
        comm.barrier()
    request.free()


def test_calls_after_abort_raise_aborted(comm):
    pending = comm.recv(np.zeros(2), 0, async_op=True)
    comm.abort()
    with pytest.raises(dtrain.AbortedError):
        pending.wait()
    for call in (lambda: comm.allreduce(np.zeros(2)), comm.barrier,
                 lambda: comm.send(np.zeros(2), 0), lambda: comm.split(0)):
        with pytest.raises(dtrain.AbortedError, match="aborted"):
            call()


def run_in_thread(target):
    outcome = {}

    def body():
        try:
            target()
        except BaseException as exc:  # handed to the main thread
            outcome["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    return thread, outcome


def receive_in_this_thread(comm):
    """A receive that never comes, on a thread the communicator moves to."""
    comm.bind_thread()
    comm.recv(np.zeros(4), 0)


def test_another_thread_is_refused_until_the_comm_is_bound_to_it(comm):
    x = np.ones(3)
    thread, outcome = run_in_thread(lambda: comm.allreduce(x))
    thread.join()
    assert isinstance(outcome.get("error"), dtrain.InvalidUsageError)
    assert "thread other than the communicator's" in str(outcome["error"])
    np.testing.assert_array_equal(x, np.ones(3))

    thread, outcome = run_in_thread(lambda: (comm.bind_thread(), comm.allreduce(x)))
    thread.join()
    assert "error" not in outcome
    with pytest.raises(dtrain.InvalidUsageError):
        comm.barrier()
    comm.bind_thread(False)  # threads take turns
    comm.barrier()
    thread, outcome = run_in_thread(comm.barrier)
    thread.join()
    assert "error" not in outcome


def test_gil_is_released_during_a_blocking_recv():
    with dtrain.Comm(timeout_ms=1000) as comm:
        # The main thread keeps running Python code while the receive waits;
        # holding the GIL in the call would stall it for the whole second
        # (counted from before the start: the thread may enter the call first).
        last = time.monotonic()
        thread, outcome = run_in_thread(lambda: receive_in_this_thread(comm))
        longest_stall, iterations = 0.0, 0
        while thread.is_alive():
            now = time.monotonic()
            longest_stall = max(longest_stall, now - last)
            last = now
            iterations += 1
        thread.join()
        assert isinstance(outcome.get("error"), dtrain.TimeoutError)
        assert longest_stall < 0.5, f"main thread stalled {longest_stall:.2f} s"
        assert iterations > 1000


def test_abort_from_another_thread_ends_a_blocking_recv():
    with dtrain.Comm(timeout_ms=20000) as comm:
        thread, outcome = run_in_thread(lambda: receive_in_this_thread(comm))
        time.sleep(0.2)
        start = time.monotonic()
        comm.abort()
        thread.join(timeout=10)
        assert not thread.is_alive()
        assert time.monotonic() - start < 5
        assert isinstance(outcome.get("error"), dtrain.AbortedError)
