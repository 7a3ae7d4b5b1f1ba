"""The timeline and the flight recorder, as a user meets them under dtrun.

- A 4-rank DDP run with DTRAIN_TRACE_FILE: dtrun's merged file parses as
  Chrome-trace JSON and holds one complete event per operation of every
  rank (each rank prints how many operations dt_comm_stats counted).
- A 3-rank ZB-H1 pipeline with DTRAIN_TRACE_FILE: every compute action
  of every rank and step is a span on the rank's pipeline thread, in the
  order of the rank's schedule, one after another, with its waits for
  messages between them.
- A 3-rank ring attention with DTRAIN_TRACE_FILE: each call's attention
  on every block is a span on the rank's ring thread, in ring order, and
  each wait for the next block or accumulator lies between them.
- A rank stopped with SIGSTOP: the others time out, dtrun gathers the
  flight records, and the analysis names the stopped rank.
- A rank that calls allgather where the others call allreduce: the
  analysis names the collective where the ranks diverge and what each
  called.

Run by CTest with DTRUN and OBSERVE_PROBE set."""
import json
import os
import re
import subprocess

DTRUN = os.environ["DTRUN"]
PROBE = os.environ["OBSERVE_PROBE"]


def run(args, env, timeout):
    return subprocess.run([DTRUN, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env})


# What the UCX backend may run each collective of the DDP probe with.
ALGORITHMS = {
    "allreduce": ("shared_memory", "rd", "rhd", "ring"),
    "allgather": ("shared_memory", "bruck", "ring"),
    "broadcast": ("shared_memory", "tree", "pipeline"),
    "barrier": ("dissemination",),
}


def test_ddp_trace_has_every_operation_of_every_rank(tmp_path):
    trace = tmp_path / "trace.json"
    result = run(["-n", "4", "--timeout", "60", PROBE, "ddp", "5"], {"DTRAIN_TRACE_FILE": str(trace)}, 120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dtrun: merged the traces of 4 of 4 ranks" in result.stderr, result.stderr
    ops = {int(r): int(n) for r, n in re.findall(r"rank (\d+) ops (\d+)", result.stdout)}
    assert sorted(ops) == [0, 1, 2, 3], result.stdout
    document = json.loads(trace.read_text())
    events = document["traceEvents"]
    for rank in range(4):
        mine = [e for e in events if e["pid"] == rank and e["ph"] == "X"]
        assert len(mine) == ops[rank], f"rank {rank}: {len(mine)} events, {ops[rank]} operations"
        # 5 steps, each at least one bucket allreduce, after the parameters' broadcasts.
        assert sum(e["name"] == "allreduce" for e in mine) >= 5, mine
        assert any(e["name"] == "broadcast" for e in mine), mine
        for e in mine:
            assert e["dur"] >= 0 and e["ts"] > 0, e
            assert e["args"]["status"] == "DT_OK", e
            assert e["args"]["comm_size"] == 4 and e["args"]["comm_rank"] == rank, e
            # Four ranks of one host: the UCX backend names what ran each operation.
            assert e["args"]["backend"] == "ucx", e
            assert e["args"]["algorithm"] in ALGORITHMS.get(e["name"], ()), e
        seqs = sorted(e["args"]["seq"] for e in mine)
        assert seqs == list(range(1, len(mine) + 1)), seqs
        names = [e for e in events if e["pid"] == rank and e["ph"] == "M" and e["name"] == "process_name"]
        assert names and names[0]["args"]["name"] == f"rank {rank}"
    # Each rank's own file is valid JSON on its own, too.
    assert json.loads((tmp_path / "trace.json.rank2").read_text())


def flight_job(tmp_path, mode, at, ranks):
    logs = tmp_path / "logs"
    env = {"DTRAIN_TIMEOUT_MS": "4000", "DTRAIN_WAIT_WARN_S": "1"}
    result = run(["-n", str(ranks), "--grace", "2", "--log-dir", str(logs), PROBE, mode, str(at)], env, 90)
    assert result.returncode != 0, result.stdout + result.stderr
    analysis = subprocess.run([DTRUN, "--analyze", str(logs / "flight")], capture_output=True, text=True, timeout=30)
    assert analysis.returncode == 0, analysis.stdout + analysis.stderr
    return result, analysis.stdout


def test_pipeline_trace_shows_every_action_of_every_rank(tmp_path):
    trace = tmp_path / "trace.json"
    steps = 2
    result = run(["-n", "3", "--timeout", "60", PROBE, "pipeline", str(steps)], {"DTRAIN_TRACE_FILE": str(trace)}, 120)
    assert result.returncode == 0, result.stdout + result.stderr
    orders = {int(r): order.split(",") for r, order in re.findall(r"rank (\d+) order (\S+)", result.stdout)}
    assert sorted(orders) == [0, 1, 2], result.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    for rank, order in orders.items():
        threads = {e["tid"]: e["args"]["name"] for e in events
                   if e["pid"] == rank and e["ph"] == "M" and e["name"] == "thread_name"}
        stage = [tid for tid, name in threads.items() if name == f"pipeline c0 (stage {rank} of 3)"]
        assert len(stage) == 1, threads
        spans = sorted((e for e in events if e["pid"] == rank and e.get("tid") == stage[0] and e["ph"] == "X"),
                       key=lambda e: e["ts"])
        compute = [e for e in spans if e["cat"] == "pipeline"]
        assert len(compute) == steps * len(order), compute
        for step in range(steps):
            ran = [f'{e["name"]}:{e["args"]["chunk"]}:{e["args"]["microbatch"]}'
                   for e in compute if e["args"]["step"] == step]
            assert ran == order, (rank, step, ran)
        assert all(e["args"]["stage"] == rank for e in compute), compute
        for earlier, later in zip(spans, spans[1:]):
            assert earlier["ts"] + earlier["dur"] <= later["ts"] + 1, (earlier, later)
        waits = [e for e in spans if e["cat"] == "pipeline_wait"]
        # Each forward of a later stage waits for its activation, each backward
        # of an earlier stage for its gradient: 4 micro-batches a step.
        expected = {"WAIT_ACTIVATION": 4 * steps if rank > 0 else 0, "WAIT_GRAD": 4 * steps if rank < 2 else 0}
        assert {name: sum(e["name"] == name for e in waits) for name in expected} == expected, waits
        assert all(e["args"]["peer"] == (rank - 1 if e["name"] == "WAIT_ACTIVATION" else rank + 1) for e in waits)


def test_ring_attention_trace_shows_every_block_and_wait(tmp_path):
    trace = tmp_path / "trace.json"
    calls, ranks = 2, 3
    result = run(["-n", str(ranks), "--timeout", "60", PROBE, "cp", str(calls)], {"DTRAIN_TRACE_FILE": str(trace)}, 120)
    assert result.returncode == 0, result.stdout + result.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    for rank in range(ranks):
        threads = [e["tid"] for e in events if e["pid"] == rank and e["ph"] == "M" and e["name"] == "thread_name"
                   and e["args"]["name"] == f"cp ring c0 (rank {rank} of {ranks})"]
        assert len(threads) == 1, events
        spans = sorted((e for e in events if e["pid"] == rank and e.get("tid") == threads[0] and e["ph"] == "X"),
                       key=lambda e: e["ts"])
        for earlier, later in zip(spans, spans[1:]):
            assert earlier["ts"] + earlier["dur"] <= later["ts"] + 1, (earlier, later)
        assert all(e["args"]["layout"] == "zigzag" for e in spans), spans
        for pass_name in ("forward", "backward"):
            mine = [e for e in spans if e["args"]["pass"] == pass_name]
            blocks = [e for e in mine if e["cat"] == "cp"]
            # Each call attends to every rank's block, its own first, then
            # those of the ranks before it around the ring; backward attends
            # to its own block in two halves, first and last.
            ring_order = [(rank - step) % ranks for step in range(ranks)]
            if pass_name == "backward":
                ring_order.append(rank)
            assert [e["args"]["owner"] for e in blocks] == ring_order * calls, blocks
            assert [e["args"]["step"] for e in blocks] == list(range(len(ring_order))) * calls, blocks
            assert all(e["name"] == "ATTENTION" for e in blocks), blocks
            waits = [e for e in mine if e["cat"] == "cp_wait"]
            kv = [e["args"]["step"] for e in waits if e["name"] == "WAIT_KV"]
            assert kv == list(range(ranks - 1)) * calls, waits
            accumulators = [e["args"]["step"] for e in waits if e["name"] == "WAIT_ACCUMULATOR"]
            if pass_name == "forward":
                assert accumulators == [], waits
            else:
                # Step 1 starts an accumulator; at each later step one arrives
                # while the one before leaves; the last brings the rank's own home.
                per_call = list(range(2, ranks)) + [ranks]
                assert accumulators == per_call * calls, waits


def test_flight_recorder_names_the_stopped_rank(tmp_path):
    result, analysis = flight_job(tmp_path, "stop", 4, 3)
    # dtrun printed the analysis in its report, and --analyze says the same.
    assert "verdict:" in result.stderr, result.stderr
    assert "rank 2: no record" in analysis, analysis
    assert "verdict: rank 2 wrote no record" in analysis, analysis
    for rank in (0, 1):
        assert re.search(f"rank {rank}: last collective barrier #4, (started|failed)", analysis), analysis
    assert "no word from rank 2" in analysis, analysis
    # While blocked, the waiting ranks said whom they waited for.
    assert re.search(r"barrier #\d+ waiting \d+ s for rank 2", result.stderr), result.stderr


def test_flight_recorder_names_the_diverging_operation(tmp_path):
    _, analysis = flight_job(tmp_path, "mismatch", 3, 3)
    assert "verdict: the ranks diverge at collective #3:" in analysis, analysis
    assert "ranks 0, 2 called allreduce (2 float32, sum)" in analysis, analysis
    assert "rank 1 called allgather (2 float32)" in analysis, analysis
