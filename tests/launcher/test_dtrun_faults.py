"""dtrun's fault matrix, each case run many times: a rank exits 3, a rank is
killed, the program is missing, SIGINT reaches dtrun. Every run must give the
right exit status and message, and no message about a signal that no one
sent (a child running dtrun's handler between fork and exec once made that
happen in about half the runs).

Run by CTest with DTRUN set to the built launcher; DTRUN_FAULT_RUNS (20)
is the number of runs of each case."""
import os
import signal
import subprocess
import time

import pytest

DTRUN = os.environ["DTRUN"]
RUNS = int(os.environ.get("DTRUN_FAULT_RUNS", "20"))
# Rank 0 fails at once, while the others may still be starting.
CASES = {
    "exit 3": (['sh', '-c', '[ "$RANK" = 0 ] && exit 3; exec sleep 30'], 3, "dtrun: rank 0 exited with code 3"),
    "killed": (['sh', '-c', '[ "$RANK" = 0 ] && kill -KILL $$; exec sleep 30'], 128 + signal.SIGKILL,
               "dtrun: rank 0 was killed by SIGKILL"),
    "missing": (["/nonexistent/program"], 127, "dtrun: rank 0 cannot execute /nonexistent/program"),
}


def no_phantom_signals(stderr, sent=None):
    for name in ("SIGINT", "SIGTERM"):
        if name != sent:
            assert f"received {name}" not in stderr, stderr
    assert "again; killing" not in stderr, stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_fault(case):
    command, code, message = CASES[case]
    for run in range(RUNS):
        result = subprocess.run([DTRUN, "-n", "4", "--grace", "5", *command], capture_output=True, text=True,
                                timeout=30)
        assert result.returncode == code, f"run {run}: {result.stderr}"
        assert message in result.stderr, f"run {run}: {result.stderr}"
        assert "dtrun: the job failed" in result.stderr, f"run {run}: {result.stderr}"
        no_phantom_signals(result.stderr)


def test_sigint_to_dtrun(tmp_path):
    for run in range(RUNS):
        ready = tmp_path / str(run)
        ready.mkdir()
        script = f'touch {ready}/$RANK; exec sleep 30'
        proc = subprocess.Popen([DTRUN, "-n", "2", "--grace", "5", "sh", "-c", script], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while len(list(ready.iterdir())) < 2:
            assert time.monotonic() < deadline, "ranks did not start"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGINT, f"run {run}: {stderr}"
        assert stderr.count("dtrun: received SIGINT; forwarding it to every rank") == 1, f"run {run}: {stderr}"
        assert "was killed by SIGINT" in stderr, f"run {run}: {stderr}"
        no_phantom_signals(stderr, sent="SIGINT")
