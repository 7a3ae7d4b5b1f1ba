"""dtrun's launcher features: torchrun's variables, per-rank logs, progress
bars, thread defaults, restarts, the failure table, multi-node options.

Run by CTest with DTRUN set to the built launcher and RANK_PROBE to a program
that joins the job through the store."""
import os
import re
import subprocess

import pytest

DTRUN = os.environ["DTRUN"]
RANK_PROBE = os.environ["RANK_PROBE"]


def dtrun(*args, env=None, timeout=60):
    return subprocess.run([DTRUN, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def sh(script):
    return ["sh", "-c", script]


def test_torchrun_variables_match_dtrains():
    result = dtrun("-n", "3", *sh('echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK '
                                  '$MASTER_ADDR:$MASTER_PORT $DTRAIN_STORE $DTRAIN_RESTART_COUNT"'))
    assert result.returncode == 0, result.stderr
    lines = sorted(result.stdout.splitlines())
    for rank, line in enumerate(lines):
        m = re.fullmatch(rf"\[{rank}\] {rank} {rank} 3 3 0 (127\.0\.0\.1:\d+) (\S+) 0", line)
        assert m, line
        assert m.group(1) == m.group(2), "MASTER_ADDR:MASTER_PORT is not the store"


def test_multi_node_numbering_and_the_store_at_the_master_address():
    # Node 1 of 2 with 2 ranks each: ranks 2 and 3, meeting at node 0's store.
    result = dtrun("--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2", "--master-addr", "10.9.8.7",
                   "--master-port", "29400", *sh('echo "$RANK $LOCAL_RANK $WORLD_SIZE $GROUP_RANK $DTRAIN_STORE"'),
                   env={"DTRAIN_AUTH_TOKEN": "t"})
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["[2] 2 0 4 1 10.9.8.7:29400", "[3] 3 1 4 1 10.9.8.7:29400"]


@pytest.mark.parametrize("args, message", [
    (["--nnodes", "2", "-n", "1", "true"], "--nnodes > 1 needs --master-addr and --master-port"),
    (["--nnodes", "2", "--node-rank", "2", "-n", "1", "true"], "--node-rank 2 is not below --nnodes 2"),
    (["--store", "a:1", "--master-port", "2", "-n", "1", "true"], "--store and --master-addr/--master-port"),
    (["--nnodes", "2", "--master-addr", "a", "--master-port", "1", "--max-restarts", "1", "-n", "1", "true"],
     "--max-restarts works with one node only"),
])
def test_bad_multi_node_options(args, message):
    result = dtrun(*args)
    assert result.returncode == 2
    assert message in result.stderr


def test_several_nodes_need_a_shared_token():
    env = {k: v for k, v in os.environ.items() if k != "DTRAIN_AUTH_TOKEN"}
    result = subprocess.run([DTRUN, "--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "29401",
                             "-n", "1", "true"], capture_output=True, text=True, timeout=30, env=env)
    assert result.returncode == 1
    assert "needs DTRAIN_AUTH_TOKEN" in result.stderr


def test_two_nodes_on_one_machine_form_one_job():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    common = ["--nnodes", "2", "-n", "2", "--master-addr", "127.0.0.1", "--master-port", port, "--timeout", "30"]
    env = {**os.environ, "DTRAIN_AUTH_TOKEN": "two-nodes"}
    nodes = [subprocess.Popen([DTRUN, *common, "--node-rank", str(k), RANK_PROBE], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for k in (1, 0)]
    outputs = [node.communicate(timeout=60) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], outputs
    lines = sorted(outputs[0][0].splitlines() + outputs[1][0].splitlines())
    assert lines == [f"[{r}] rank {r} of 4 agrees" for r in range(4)]


def test_log_dir_gets_a_file_per_rank(tmp_path):
    logs = tmp_path / "logs"
    result = dtrun("-n", "2", "--log-dir", str(logs), *sh('echo "out $RANK"; echo "err $RANK" >&2'))
    assert result.returncode == 0
    assert sorted(result.stdout.splitlines()) == ["[0] out 0", "[1] out 1"]
    for rank in range(2):
        assert sorted((logs / f"rank.{rank}.log").read_text().splitlines()) == [f"err {rank}", f"out {rank}"]


def test_carriage_return_pieces_pass_at_once():
    # The rank prints a progress piece and waits for dtrun to pass it on
    # before going on: with output held until a newline, it would wait forever.
    reader = subprocess.Popen([DTRUN, "-n", "1", *sh('printf "50%%\\r"; read go; printf "100%%\\r\\n"')],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = reader.stdout.read(len(b"[0] 50%\r"))
    assert first == b"[0] 50%\r"
    reader.stdin.write(b"go\n")
    reader.stdin.close()
    rest = reader.stdout.read()
    assert reader.wait(timeout=30) == 0
    assert rest == b"[0] 100%\r\n"


def test_thread_defaults_when_ranks_outnumber_cores():
    cores = len(os.sched_getaffinity(0))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    script = sh('echo "${OMP_NUM_THREADS:-unset} ${OPENBLAS_NUM_THREADS:-unset}"')
    many = subprocess.run([DTRUN, "-n", str(cores + 1), *script], capture_output=True, text=True, env=env, timeout=60)
    assert set(line.split("] ")[1] for line in many.stdout.splitlines()) == {"1 1"}
    assert f"warning: {cores + 1} ranks on {cores} cores" in many.stderr
    few = subprocess.run([DTRUN, "-n", "1", *script], capture_output=True, text=True, env=env, timeout=60)
    assert few.stdout == "[0] unset unset\n" and "warning" not in few.stderr
    chosen = subprocess.run([DTRUN, "-n", str(cores + 1), *script], capture_output=True, text=True, timeout=60,
                            env={**env, "OMP_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "2"})
    assert set(line.split("] ")[1] for line in chosen.stdout.splitlines()) == {"3 2"}


def test_max_restarts_restarts_every_rank_with_the_reason(tmp_path):
    # Rank 1 fails on the first two attempts and succeeds on the third.
    script = '[ "$RANK" = 1 ] && [ "$DTRAIN_RESTART_COUNT" -lt 2 ] && exit 7; echo "attempt $DTRAIN_RESTART_COUNT"'
    result = dtrun("-n", "2", "--max-restarts", "3", "--log-dir", str(tmp_path), *sh(script))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("dtrun: rank 1 exited with code 7") == 2
    assert "restarting every rank (restart 1 of 3) because rank 1 failed" in result.stderr
    assert "restarting every rank (restart 2 of 3) because rank 1 failed" in result.stderr
    assert "restart 3 of 3" not in result.stderr
    assert "attempt 2" in (tmp_path / "rank.1.log").read_text()


def test_restarts_run_out_and_the_last_failure_is_the_status():
    result = dtrun("-n", "2", "--max-restarts", "1", *sh('[ "$RANK" = 0 ] && exit 9; exec sleep 30'))
    assert result.returncode == 9
    assert result.stderr.count("dtrun: rank 0 exited with code 9") == 2


def test_failure_table_names_every_failed_rank():
    result = dtrun("-n", "3", "--grace", "5", *sh('[ "$RANK" = 2 ] && exit 3; exec sleep 30'))
    assert result.returncode == 3
    table = result.stderr[result.stderr.index("dtrun: the job failed"):].splitlines()
    assert re.fullmatch(r"\s+rank\s+exit code\s+what happened", table[1])
    rows = {int(row.split()[0]): row for row in table[2:]}
    assert sorted(rows) == [0, 1, 2]
    assert re.fullmatch(r"\s+2\s+3\s+exited with code 3 \(first failure\)", rows[2])
    for rank in (0, 1):
        assert re.fullmatch(rf"\s+{rank}\s+143\s+was killed by SIGTERM", rows[rank])


def test_no_table_on_success():
    result = dtrun("-n", "2", "true")
    assert result.returncode == 0 and result.stderr == ""
