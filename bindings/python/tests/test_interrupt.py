"""SIGINT during a blocking call, in a world of one.

A receive from oneself that nothing sends blocks until the deadline, as a
collective waiting for a rank that never comes does. Each case runs in a
child interpreter, so that the KeyboardInterrupt it provokes cannot end the
pytest run; the child prints what it saw as JSON. The two-rank cases
(another rank never joining, and being told) are multirank/interrupt.py.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

# The reaction itself takes about half a millisecond; the limit is the
# required 100 ms, unchanged, since the child does nothing else meanwhile.
LIMIT_S = 0.1

PRELUDE = """
import json, os, signal, threading, time
import numpy as np
import dtrain

def sigint_after(seconds):
    sent = {}
    def send():
        time.sleep(seconds)
        sent["at"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)
    thread = threading.Thread(target=send)
    thread.start()
    return thread, sent

def outcome(call, delay=0.2):
    thread, sent = sigint_after(delay)
    try:
        call()
        result = {"raised": None}
    except BaseException as exc:
        result = {"raised": type(exc).__name__, "message": str(exc),
                  "cause": type(exc.__cause__).__name__ if exc.__cause__ else None,
                  "cause_message": str(exc.__cause__) if exc.__cause__ else None,
                  "dtrain_error": isinstance(exc, dtrain.Error)}
    result["after_s"] = time.monotonic() - sent["at"] if "at" in sent else None
    thread.join()
    return result

def blocked_recv(comm):
    return lambda: comm.recv(np.zeros(2), 0)
"""


def run_child(body):
    """Runs PRELUDE + body in a new interpreter; returns the JSON it prints last."""
    script = PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env=os.environ.copy())
    assert done.returncode == 0, f"child failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_ctrl_c_raises_keyboard_interrupt_chained_from_the_abort():
    seen = run_child("""
        with dtrain.Comm(timeout_ms=5000) as comm:
            result = outcome(blocked_recv(comm))
            try:
                comm.barrier()
            except dtrain.AbortedError as error:
                result["afterwards"] = str(error)
        print(json.dumps(result))
    """)
    assert seen["raised"] == "KeyboardInterrupt"
    assert seen["after_s"] < LIMIT_S
    assert "dt_recv was interrupted; its communicator was aborted" in seen["message"]
    assert seen["cause"] == "AbortedError" and "SIGINT" in seen["cause_message"]
    assert "aborted" in seen["afterwards"]


def test_every_blocking_call_in_flight_is_aborted_and_other_threads_get_the_aborted_error():
    # Python raises KeyboardInterrupt in the main thread only; a call blocked
    # in another thread still ends, or the interpreter would wait for it at
    # exit until the deadline.
    seen = run_child("""
        comm = dtrain.Comm(timeout_ms=5000)
        other = dtrain.Comm(timeout_ms=5000)
        in_thread = {}
        def worker():
            try:
                other.bind_thread()
                other.recv(np.zeros(2), 0)
            except dtrain.Error as error:
                in_thread["raised"] = type(error).__name__
                in_thread["message"] = str(error)
        thread = threading.Thread(target=worker)
        thread.start()
        result = outcome(blocked_recv(comm), delay=0.4)
        thread.join(10)
        result["thread"] = in_thread
        print(json.dumps(result))
    """)
    assert seen["raised"] == "KeyboardInterrupt" and seen["after_s"] < LIMIT_S
    assert seen["thread"]["raised"] == "AbortedError"
    assert "interrupted by SIGINT" in seen["thread"]["message"]


def test_a_handler_of_ones_own_runs_and_the_call_raises_the_aborted_error():
    seen = run_child("""
        handled = []
        signal.signal(signal.SIGINT, lambda number, frame: handled.append(number))
        with dtrain.Comm(timeout_ms=5000) as comm:
            result = outcome(blocked_recv(comm))
        result["handled"] = handled
        print(json.dumps(result))
    """)
    assert seen["raised"] == "AbortedError" and seen["dtrain_error"]
    assert seen["after_s"] < LIMIT_S
    assert "interrupted by SIGINT" in seen["message"]
    assert seen["handled"] == [2]


def test_an_ignored_sigint_leaves_the_call_alone():
    seen = run_child("""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with dtrain.Comm(timeout_ms=600) as comm:
            result = outcome(blocked_recv(comm))
        print(json.dumps(result))
    """)
    # The call waits out its deadline: the signal was not for it.
    assert seen["raised"] == "TimeoutError"
    assert seen["after_s"] > 0.2


def test_a_handler_replaced_and_restored_between_calls_is_watched_again():
    # signal.signal() puts Python's own C handler back in front; the next
    # blocking call must notice and put the binding's in front again.
    seen = run_child("""
        comm = dtrain.Comm(timeout_ms=5000)
        comm.barrier()
        previous = signal.signal(signal.SIGINT, lambda number, frame: None)
        signal.signal(signal.SIGINT, previous)
        result = outcome(blocked_recv(comm))
        print(json.dumps(result))
    """)
    assert seen["raised"] == "KeyboardInterrupt" and seen["after_s"] < LIMIT_S


def test_request_wait_is_interrupted():
    seen = run_child("""
        with dtrain.Comm(timeout_ms=5000) as comm:
            request = comm.recv(np.zeros(2), 0, async_op=True)
            result = outcome(request.wait)
            request.free()
        print(json.dumps(result))
    """)
    assert seen["raised"] == "KeyboardInterrupt" and seen["after_s"] < LIMIT_S
    assert "dt_request_wait" in seen["message"] and seen["cause"] == "AbortedError"


def test_a_forked_child_is_interrupted_too():
    # fork() leaves the child without the parent's watcher thread.
    seen = run_child("""
        with dtrain.Comm(timeout_ms=5000) as comm:
            comm.barrier()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            with dtrain.Comm(timeout_ms=5000) as comm:
                os.write(write, json.dumps(outcome(blocked_recv(comm))).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            text = pipe.read()
        os.waitpid(pid, 0)
        print(text)
    """)
    assert seen["raised"] == "KeyboardInterrupt" and seen["after_s"] < LIMIT_S


def test_ctrl_c_outside_a_call_leaves_the_communicator_alone():
    # The binding's handler stays in front between calls: with no call in
    # flight it only passes the signal on.
    seen = run_child("""
        with dtrain.Comm(timeout_ms=5000) as comm:
            comm.barrier()
            result = outcome(lambda: time.sleep(5))
            comm.allreduce(np.ones(2))
            result["usable"] = True
        print(json.dumps(result))
    """)
    assert seen["raised"] == "KeyboardInterrupt" and seen["message"] == ""
    assert seen["usable"]
