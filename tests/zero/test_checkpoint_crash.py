"""A rank killed at a random point of a ZeRO checkpoint save leaves a
checkpoint that loads: the last one whose save returned, or the one being
saved when the rank died; never a mix, never nothing.

Each of 20 runs starts two ranks (without dtrun, so that the survivor lives
on and meets the failure itself) saving versions of the model in a loop,
kills one of them at a random moment with SIGKILL, then loads the directory
on three ranks under dtrun. Run by CTest with DTRUN and CHECKPOINT_CRASH set."""
import os
import random
import signal
import socket
import subprocess
import time

DTRUN = os.environ["DTRUN"]
PROGRAM = os.environ["CHECKPOINT_CRASH"]
LAUNCHER_VARIABLES = ("DTRAIN_", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_", "OMPI_", "PMI_", "SLURM_")
RUNS = 20


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARIABLES)}
    env.update(extra)
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_saving(directory, first, count=500):
    port = free_port()
    ranks = []
    for rank in (1, 0):  # rank 0 last: rank 1 waits for its store
        env = environment(DTRAIN_RANK=str(rank), DTRAIN_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(port), DTRAIN_AUTH_TOKEN="checkpoint-crash", DTRAIN_TIMEOUT_MS="5000")
        ranks.append(subprocess.Popen([PROGRAM, "save", directory, str(first), str(count)], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, env=env))
    return ranks[1], ranks[0]


def committed_versions(output):
    return [int(line.split()[1]) for line in output.splitlines() if line.startswith("committed ")]


def load(directory):
    result = subprocess.run([DTRUN, "-n", "3", "--timeout", "30", PROGRAM, "load", directory],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "loaded " in line]
    assert len(lines) == 1, result.stdout
    return int(lines[0].split()[-1])


def test_a_rank_killed_during_saves_leaves_a_loadable_checkpoint(tmp_path):
    directory = str(tmp_path / "checkpoint")
    rng = random.Random(int(os.environ.get("CHECKPOINT_CRASH_SEED", time.time_ns())))
    last = None  # the version the directory holds
    for run in range(RUNS):
        first = 1000 * (run + 1)
        rank0, rank1 = start_saving(directory, first)
        # Once rank 0 has reported one save, the loop is in its stride: a
        # kill at a random moment of the next 0.25 s lands anywhere in a save.
        line = rank0.stdout.readline()
        assert line.startswith("committed "), line + rank0.stdout.read()
        time.sleep(rng.uniform(0.0, 0.25))
        victim = rng.choice([rank0, rank1])
        victim.send_signal(signal.SIGKILL)
        outputs = [line + rank0.stdout.read(), rank1.stdout.read()]
        for rank in (rank0, rank1):
            rank.wait(timeout=20)  # the survivor fails within its 5 s deadline
        assert victim.returncode == -signal.SIGKILL, outputs
        survivor = rank1 if victim is rank0 else rank0
        assert survivor.returncode != 0, outputs

        committed = committed_versions(outputs[0])
        loaded = load(directory)
        # The save in flight when the rank died may have committed too.
        candidates = {committed[-1], committed[-1] + 1} if committed else {last, first}
        assert loaded in candidates, f"run {run}: loaded {loaded}, committed {committed[-3:]}\n{outputs}"
        last = loaded

    # A save that completes removes what the interrupted ones left.
    rank0, rank1 = start_saving(directory, 100000, count=1)
    outputs = [rank.communicate(timeout=30)[0] for rank in (rank0, rank1)]
    assert committed_versions(outputs[0]) == [100000], outputs
    shards = sorted(name for name in os.listdir(directory) if name != "metadata")
    generation = open(os.path.join(directory, "metadata")).read().splitlines()[1].split()[1]
    assert shards == [f"shard-{r}-{generation}.bin" for r in range(2)], shards
    assert load(directory) == 100000
