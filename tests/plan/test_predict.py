#!/usr/bin/env python3
"""dtbench predict on a cluster file and results files written here: each
prediction is the formula docs/planner.md ("Predicting dtbench's steps")
states, evaluated below by hand; a bad file is refused.

    test_predict.py DTBENCH
"""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

DTBENCH = sys.argv.pop(1) if len(sys.argv) > 1 else None

PEAK, EFFICIENCY, MEMORY, BETA, ALPHA = 1e11, 0.5, 1e10, 1e9, 1e-5
RATE = PEAK * EFFICIENCY
CLUSTER = f"""nodes = 1
gpus_per_node = 2
gpu_memory = 1e9
peak_flops = {PEAK}
gemm_efficiency = {EFFICIENCY}
memory_bandwidth = {MEMORY}
intra_bandwidth = {BETA}
intra_latency = {ALPHA}
inter_bandwidth = {BETA}
inter_latency = {ALPHA}
"""


def ring_allreduce(n, size):
    # 2 ranks: the ring (2 steps of half the buffer) beats the tree here.
    return min(2 * (n - 1) * (ALPHA + size / n / BETA), 2 * ALPHA + 2 * size / BETA)


def ring_allgather(n, size):
    return (n - 1) * (ALPHA + size / n / BETA)


def mlp_passes(dims, rows):
    forward = backward = activations = 0.0
    for layer, (a, b) in enumerate(zip(dims, dims[1:])):
        product = 2 * rows * a * b
        forward += product
        backward += product if layer == 0 else 2 * product
        activations += rows * b * 4
    return forward / RATE + 2 * activations / MEMORY, backward / RATE + 4 * activations / MEMORY


DIMS = [64, 256, 10]
PARAMS = 64 * 256 + 256 + 256 * 10 + 10


class Predict(unittest.TestCase):
    def predict(self, *results):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "cluster.txt").write_text(CLUSTER)
            paths = []
            for i, doc in enumerate(results):
                paths.append(tmp / f"r{i}.json")
                paths[-1].write_text(json.dumps(doc))
            done = subprocess.run([DTBENCH, "predict", "--cluster-file", str(tmp / "cluster.txt"), "--json",
                                   str(tmp / "out.json"), *map(str, paths)], capture_output=True, text=True)
            if done.returncode != 0:
                return done.returncode, done.stderr
            return 0, {f"{r['benchmark']} {r['case']}": r for r in json.loads((tmp / "out.json").read_text())["rows"]}

    def assert_ms(self, row, seconds):
        self.assertAlmostEqual(row["predicted_ms"] / (seconds * 1e3), 1, places=4)
        self.assertAlmostEqual(row["ratio"], row["measured_ms"] / row["predicted_ms"], places=3)

    def test_ddp_and_zero(self):
        ddp = {"benchmark": "ddp", "world_size": 2, "batch": 255, "model": {"dims": DIMS},
               "modes": {m: {"step_ms": 1.0} for m in ("compute", "serial", "overlap")}}
        zero = {"benchmark": "zero", "world_size": 2, "batch": 255, "model": {"dims": DIMS},
                "stages": [{"stage": s, "step_ms": 1.0} for s in range(4)]}
        status, rows = self.predict(ddp, zero)
        self.assertEqual(status, 0, rows)
        forward, backward = mlp_passes(DIMS, 128)  # the busier rank's 128 of 255 samples
        adamw = PARAMS * 28 / MEMORY
        compute = forward + backward
        grads = PARAMS * 4
        self.assert_ms(rows["ddp compute"], compute + adamw)
        self.assert_ms(rows["ddp serial"], compute + ring_allreduce(2, grads) + adamw)
        self.assert_ms(rows["ddp overlap"], compute + max(0, ring_allreduce(2, grads) - backward) + adamw)
        self.assert_ms(rows["zero stage 1"],
                       compute + max(0, ring_allreduce(2, grads) - backward) + ring_allgather(2, grads) + adamw / 2)
        gather = ring_allgather(2, grads)
        self.assert_ms(rows["zero stage 3"],
                       compute + max(0, gather - forward) + max(0, 2 * gather - backward) + adamw / 2)

    def test_tp(self):
        tp = {"benchmark": "tp", "ranks": 2, "tokens": 128, "hidden": 256, "ffn": 512, "sequence_parallel": False,
              "step_ms": 3.0}
        status, rows = self.predict(tp)
        self.assertEqual(status, 0, rows)
        compute = 12 * 128 * 256 * 256 / RATE + 5 * 4 * 128 * 256 / MEMORY
        self.assert_ms(rows["tp block"], compute + 2 * ring_allreduce(2, 128 * 256 * 4))
        self.assertAlmostEqual(rows["tp block"]["measured_ms"], 3.0)

    def test_pipeline(self):
        cases = [{"kind": k, "microbatches": 4, "step_ms": 20.0} for k in ("gpipe", "interleaved_1f1b", "zb_h1")]
        pipeline = {"benchmark": "pipeline", "stages": 2, "unit_us": 1000, "elements": 4096, "cases": cases}
        status, rows = self.predict(pipeline)
        self.assertEqual(status, 0, rows)
        message = ALPHA + 4096 * 4 / BETA
        # 3 units per micro-batch and chunk, the bubble (p - 1)/(v m) of it, 2 (m v + p - 1) messages.
        self.assert_ms(rows["pipeline gpipe m=4"], 3e-3 * 4 * (1 + 1 / 4) + 2 * (4 + 1) * message)
        self.assert_ms(rows["pipeline interleaved_1f1b m=4"], 3e-3 * 8 * (1 + 1 / 8) + 2 * (8 + 1) * message)
        # ZB-H1: F, B and W one unit each; the bubble (p - 1) units of 3 m.
        self.assert_ms(rows["pipeline zb_h1 m=4"], 3e-3 * 4 * (1 + 1 / 12) + 2 * (4 + 1) * message)

    def test_bad_files_are_refused(self):
        status, err = self.predict({"benchmark": "moe"})
        self.assertEqual(status, 1)
        self.assertIn("is not ddp, zero, tp or pipeline", err)
        status, err = self.predict({"benchmark": "tp", "ranks": 2, "sequence_parallel": False, "step_ms": 1.0,
                                    "hidden": 256, "ffn": 512})
        self.assertEqual(status, 1)
        self.assertIn("no \"tokens\"", err)


if __name__ == "__main__":
    unittest.main()
