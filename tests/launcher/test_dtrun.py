"""dtrun as a user meets it: environment, output, exit statuses, fail-fast and signals.

Run by CTest with DTRUN set to the built launcher."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

DTRUN = os.environ["DTRUN"]
RANK_PROBE = os.environ["RANK_PROBE"]
LAUNCHER_VARIABLES = ("DTRAIN_", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_", "OMPI_", "PMI_", "SLURM_")


def clean_environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARIABLES)}
    env.update(extra)
    return env


def dtrun(*args, timeout=60, **kwargs):
    return subprocess.run([DTRUN, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def sh(script):
    return ["sh", "-c", script]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_every_rank_gets_its_environment(n):
    result = dtrun("-n", str(n), *sh('echo "rank=$DTRAIN_RANK size=$DTRAIN_WORLD_SIZE local=$DTRAIN_LOCAL_RANK '
                                     'store=$DTRAIN_STORE token=${#DTRAIN_AUTH_TOKEN}"'))
    assert result.returncode == 0, result.stderr
    lines = sorted(result.stdout.splitlines())
    assert len(lines) == n
    for rank, line in enumerate(lines):
        assert re.fullmatch(rf"\[{rank}\] rank={rank} size={n} local={rank} store=127\.0\.0\.1:\d+ token=64", line), line


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_ranks_agree_through_the_store(n):
    result = dtrun("-n", str(n), "--timeout", "30", RANK_PROBE, env=clean_environment())
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(result.stdout.splitlines()) == [f"[{r}] rank {r} of {n} agrees" for r in range(n)]


def test_wrong_token_is_refused_with_dt_err_auth():
    # Rank 1 presents a different secret from the one dtrun's store expects.
    script = f'[ "$DTRAIN_RANK" = 1 ] && export DTRAIN_AUTH_TOKEN=wrong; exec {RANK_PROBE}'
    result = dtrun("-n", "2", "--timeout", "10", *sh(script), env=clean_environment())
    assert result.returncode != 0
    assert re.search(r"\[1\] dt_comm_create: authentication failed: .*", result.stdout), result.stdout


def test_missing_token_is_refused_with_dt_err_auth():
    script = f'[ "$DTRAIN_RANK" = 0 ] && unset DTRAIN_AUTH_TOKEN; exec {RANK_PROBE}'
    result = dtrun("-n", "2", "--timeout", "10", *sh(script), env=clean_environment())
    assert "[0] dt_comm_create: authentication failed" in result.stdout, result.stdout


def test_torchrun_style_variables_rank0_hosts_the_store():
    import socket
    with socket.socket() as s:  # a free port for rank 0 to listen on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([RANK_PROBE], stdout=subprocess.PIPE, text=True,
                              env=clean_environment(RANK=str(r), WORLD_SIZE="3", LOCAL_RANK=str(r),
                                                    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                                    DTRAIN_AUTH_TOKEN="torchrun-job", DTRAIN_TIMEOUT_MS="30000"))
             for r in (2, 1, 0)]  # rank 0 last: the others wait for its store
    outputs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    assert sorted(outputs) == [f"rank {r} of 3 agrees\n" for r in range(3)]


def test_torchrun_style_without_a_token_is_refused():
    result = subprocess.run([RANK_PROBE], capture_output=True, text=True, timeout=30,
                            env=clean_environment(RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                                                  MASTER_PORT="29999"))
    assert result.returncode == 3
    assert "invalid argument" in result.stdout and "DTRAIN_AUTH_TOKEN" in result.stdout


def test_world_without_a_store_says_how_to_get_one():
    result = subprocess.run([RANK_PROBE], capture_output=True, text=True, timeout=30,
                            env=clean_environment(DTRAIN_RANK="0", DTRAIN_WORLD_SIZE="2"))
    assert result.returncode == 3
    assert "needs a rendezvous: launch with dtrun" in result.stdout


def test_auth_token_from_the_environment_is_passed_on():
    result = dtrun("-n", "2", *sh('echo "$DTRAIN_AUTH_TOKEN"'), env={**os.environ, "DTRAIN_AUTH_TOKEN": "s3cret"})
    assert sorted(result.stdout.splitlines()) == ["[0] s3cret", "[1] s3cret"]


def test_fresh_token_per_job():
    tokens = [dtrun("-n", "1", *sh('echo "$DTRAIN_AUTH_TOKEN"'), env={k: v for k, v in os.environ.items()
                                                                         if k != "DTRAIN_AUTH_TOKEN"}).stdout
              for _ in range(2)]
    assert tokens[0] != tokens[1]


def test_external_store_and_timeout_are_passed_on():
    result = dtrun("-n", "1", "--store", "10.1.2.3:4567", "--timeout", "7",
                   *sh('echo "$DTRAIN_STORE $DTRAIN_TIMEOUT_MS"'))
    assert result.stdout == "[0] 10.1.2.3:4567 7000\n"


def test_lines_are_tagged_whole_and_stderr_stays_stderr():
    script = 'i=0; while [ $i -lt 200 ]; do echo "line $i of rank $DTRAIN_RANK"; i=$((i+1)); done; ' \
             'printf "no newline at end"; echo "to stderr" >&2'
    # Thread counts set: 3 ranks on a 2-core machine would add dtrun's warning.
    result = dtrun("-n", "3", *sh(script), env={**os.environ, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"})
    assert result.returncode == 0
    for line in result.stdout.splitlines():
        m = re.fullmatch(r"\[(\d)\] (line \d+ of rank (\d)|no newline at end)", line)
        assert m, f"mixed or untagged line: {line!r}"
        if m.group(3):
            assert m.group(1) == m.group(3)
    assert sorted(result.stderr.splitlines()) == ["[0] to stderr", "[1] to stderr", "[2] to stderr"]


def test_no_tag_output():
    result = dtrun("-n", "2", "--no-tag-output", *sh("echo plain"))
    assert result.stdout == "plain\nplain\n"


def test_failing_rank_stops_the_others_and_sets_the_exit_status():
    start = time.monotonic()
    result = dtrun("-n", "4", "--grace", "2", *sh('[ "$DTRAIN_RANK" = 2 ] && exit 3; exec sleep 60'))
    elapsed = time.monotonic() - start
    assert result.returncode == 3
    assert "dtrun: rank 2 exited with code 3; stopping the other ranks" in result.stderr
    assert elapsed < 10, f"the other ranks were not stopped promptly ({elapsed:.1f} s)"


def test_rank_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    # Rank 0 fails only once rank 1 ignores SIGTERM, so SIGKILL is needed.
    ready = tmp_path / "ready"
    script = f'if [ "$DTRAIN_RANK" = 0 ]; then while [ ! -e {ready} ]; do sleep 0.01; done; exit 5; fi; ' \
             f'trap "" TERM; touch {ready}; while :; do sleep 0.1; done'
    start = time.monotonic()
    result = dtrun("-n", "2", "--grace", "1", *sh(script))
    elapsed = time.monotonic() - start
    assert result.returncode == 5
    assert 1 <= elapsed < 8, elapsed


def test_rank_killed_by_a_signal_is_named():
    result = dtrun("-n", "3", *sh('[ "$DTRAIN_RANK" = 1 ] && kill -KILL $$; exec sleep 60'))
    assert result.returncode == 128 + signal.SIGKILL
    assert "dtrun: rank 1 was killed by SIGKILL" in result.stderr


def test_report_lists_every_ranks_end(tmp_path):
    ready = tmp_path / "ready"
    script = f'if [ "$DTRAIN_RANK" = 0 ]; then while [ ! -e {ready} ]; do sleep 0.01; done; exit 5; fi; ' \
             f'if [ "$DTRAIN_RANK" = 1 ]; then trap "" TERM; touch {ready}; while :; do sleep 0.1; done; fi; ' \
             'exec sleep 60'
    result = dtrun("-n", "3", "--grace", "1", *sh(script))
    assert result.returncode == 5
    report = result.stderr[result.stderr.index("dtrun: how each rank ended:"):]
    assert "dtrun:   rank 0 exited with code 5\n" in report, report
    assert "dtrun:   rank 1 was killed by SIGKILL: it did not end within the 1 s grace period\n" in report, report
    assert "dtrun:   rank 2 was killed by SIGTERM\n" in report, report


def _pid_gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


def test_ranks_end_when_dtrun_is_killed(tmp_path):
    # The ranks ignore SIGTERM and SIGHUP: only the parent-death signal ends them.
    script = f'trap "" TERM HUP; echo $$ > {tmp_path}/pid.$DTRAIN_RANK; exec sleep 60'
    proc = subprocess.Popen([DTRUN, "-n", "3", *sh(script)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while len(list(tmp_path.glob("pid.*"))) < 3 or any(p.stat().st_size == 0 for p in tmp_path.glob("pid.*")):
        assert time.monotonic() < deadline, "ranks did not start"
        time.sleep(0.02)
    pids = [int(p.read_text()) for p in tmp_path.glob("pid.*")]
    proc.kill()
    proc.wait(timeout=10)
    killed = time.monotonic()
    while not all(_pid_gone(pid) for pid in pids):
        assert time.monotonic() - killed < 1.0, f"ranks {pids} still running 1 s after dtrun died"
        time.sleep(0.01)


def test_stopped_rank_is_named(tmp_path):
    # Rank 1 stops itself; rank 0 then fails as a peer of a stopped rank would.
    script = f'if [ "$DTRAIN_RANK" = 1 ]; then touch {tmp_path}/stopping; kill -STOP $$; exit 0; fi; ' \
             f'while [ ! -e {tmp_path}/stopping ]; do sleep 0.01; done; sleep 0.3; ' \
             'echo "no word from rank 1" >&2; exit 6'
    result = dtrun("-n", "2", "--grace", "1", *sh(script), timeout=30)
    assert result.returncode == 6
    assert "dtrun: rank 1 is stopped (SIGSTOP or a debugger) and answers no one" in result.stderr, result.stderr
    assert "dtrun:   rank 1 was killed by SIGKILL: it was stopped, and killed after the 1 s grace period" \
        in result.stderr, result.stderr


def test_success_only_when_every_rank_exits_zero():
    assert dtrun("-n", "3", "true").returncode == 0
    late_failure = dtrun("-n", "2", *sh('[ "$DTRAIN_RANK" = 1 ] && { sleep 0.3; exit 4; }; exit 0'))
    assert late_failure.returncode == 4


def test_sigterm_to_dtrun_reaches_every_rank(tmp_path):
    script = f'trap "echo $DTRAIN_RANK > {tmp_path}/term.$DTRAIN_RANK; exit 0" TERM; ' \
             f'touch {tmp_path}/ready.$DTRAIN_RANK; while :; do sleep 0.05; done'
    proc = subprocess.Popen([DTRUN, "-n", "3", *sh(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while len(list(tmp_path.glob("ready.*"))) < 3:
        assert time.monotonic() < deadline, "ranks did not start"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert sorted(p.name for p in tmp_path.glob("term.*")) == ["term.0", "term.1", "term.2"]
    assert "received SIGTERM" in err
    assert proc.returncode == 0, "every rank handled SIGTERM and exited 0"


def test_missing_program_is_reported():
    result = dtrun("-n", "2", "/nonexistent/program")
    assert result.returncode == 127
    assert "cannot execute /nonexistent/program" in result.stderr


@pytest.mark.parametrize("args", [[], ["-n", "2"], ["-n", "0", "true"], ["-n", "x", "true"], ["--bogus", "-n", "1", "true"],
                                  ["-n", "1", "--store", "nohostport", "true"], ["-n", "1", "--timeout"]])
def test_bad_arguments_print_usage_and_exit_2(args):
    result = dtrun(*args)
    assert result.returncode == 2
    assert "usage: dtrun" in result.stderr


@pytest.mark.parametrize("args, named", [(["--bogus", "-n", "1", "true"], "--bogus"),
                                         (["-n", "1", "--grace", "nan", "true"], "--grace"),
                                         (["-n", "5000", "true"], "--nproc")])
def test_a_bad_argument_is_named(args, named):
    result = dtrun(*args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"dtrun: {named}") or f"unknown option {named}" in result.stderr, result.stderr


def test_options_after_the_program_are_the_programs():
    # dtrun's own options end at PROGRAM; -n and unknown options after it go to the program.
    result = dtrun("-n", "1", "--no-tag-output", *sh('printf "%s\\n" "$*"'), "sh", "-n", "3", "--bogus")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "-n 3 --bogus\n"


def test_double_dash_ends_dtruns_options():
    result = dtrun("--nproc_per_node=2", "--", *sh("echo $WORLD_SIZE"))
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["[0] 2", "[1] 2"]


def test_an_option_given_twice_takes_its_last_value():
    result = dtrun("-n", "3", "--nproc-per-node", "1", *sh("echo $WORLD_SIZE"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[0] 1\n"


def test_help():
    result = dtrun("--help")
    assert result.returncode == 0
    for word in ("--store", "--timeout", "--no-tag-output", "--grace", "SIGTERM"):
        assert word in result.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
