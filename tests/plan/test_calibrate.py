#!/usr/bin/env python3
"""calibrate.py on synthetic dtbench results: it recovers the alpha and beta
the results were made from, reads the GEMM rate, and writes a cluster file
the library loads (checked by running dtplan on it)."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "dtplan" / "calibrate.py"
DTPLAN = sys.argv.pop(1) if len(sys.argv) > 1 else None

ALPHA, BETA, WORLD = 7e-6, 3.5e9, 4


def ring_time(op, size):
    steps, share = {"allreduce": (2 * (WORLD - 1), 2 * (WORLD - 1) / WORLD),
                    "allgather": (WORLD - 1, (WORLD - 1) / WORLD)}[op]
    return steps * ALPHA + share * size / BETA


def collectives(noise=0.0):
    rows = []
    for i, size in enumerate(2 ** k for k in range(10, 27)):
        for op in ("allreduce", "allgather"):
            wobble = 1 + noise * (1 if (i % 2) else -1)
            rows.append({"op": op, "bytes": size, "time_us": ring_time(op, size) * 1e6 * wobble})
    rows.append({"op": "alltoall", "bytes": 4096, "time_us": 1e9})  # not a ring: ignored
    return {"benchmark": "collectives", "world_size": WORLD, "memcpy_GBps": 12.5, "results": rows}


GEMM = {"benchmark": "gemm", "cpu_peak_gflops": 100.0, "results": [
    {"m": 64, "n": 64, "k": 64, "direct_gflops": 10.0},
    {"m": 512, "n": 512, "k": 512, "direct_gflops": 60.0},
    {"m": 1024, "n": 1024, "k": 1024, "direct_gflops": 70.0},
    {"m": 2048, "n": 2048, "k": 2048, "direct_gflops": 80.0}]}


class Calibrate(unittest.TestCase):
    def run_script(self, data, *extra):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "c.json").write_text(json.dumps(data))
            (tmp / "g.json").write_text(json.dumps(GEMM))
            out = tmp / "cluster.txt"
            subprocess.run([sys.executable, str(SCRIPT), "--collectives", str(tmp / "c.json"), "--gemm",
                            str(tmp / "g.json"), "-o", str(out), *extra], check=True, capture_output=True)
            text = out.read_text()
            values = dict(line.split(" = ") for line in text.splitlines() if " = " in line and line[0] != "#")
            values[None] = text
            if DTPLAN:
                plan = subprocess.run([DTPLAN, "--cluster-file", str(out), "--layers", "4", "--hidden", "256",
                                       "--heads", "4", "--vocab", "1000", "--seq", "128", "--batch", "8", "--top",
                                       "1"], capture_output=True, text=True)
                self.assertEqual(plan.returncode, 0, plan.stderr)
                self.assertIn("4 GPUs (1 x 4)", plan.stdout)
            return values

    def test_recovers_alpha_and_beta(self):
        values = self.run_script(collectives(), "--gpu-memory", "16e9")
        self.assertAlmostEqual(float(values["intra_latency"]) / ALPHA, 1, places=3)
        self.assertAlmostEqual(float(values["intra_bandwidth"]) / BETA, 1, places=3)
        self.assertEqual(values["inter_bandwidth"], values["intra_bandwidth"])
        self.assertEqual(values["gpus_per_node"], "4")
        self.assertEqual(float(values["memory_bandwidth"]), 12.5e9)
        self.assertEqual(float(values["peak_flops"]), 100e9)
        self.assertAlmostEqual(float(values["gemm_efficiency"]), 0.7)  # median of 0.6, 0.7, 0.8

    def test_overlap_is_zero_for_cpu_ranks_unless_given(self):
        self.assertEqual(float(self.run_script(collectives(), "--gpu-memory", "16e9")["overlap"]), 0)
        values = self.run_script(collectives(), "--gpu-memory", "16e9", "--overlap", "0.5")
        self.assertEqual(float(values["overlap"]), 0.5)
        with self.assertRaises(subprocess.CalledProcessError):
            self.run_script(collectives(), "--gpu-memory", "16e9", "--overlap", "2")

    def test_the_file_says_which_sweep_the_link_comes_from(self):
        data = collectives()
        data["evict_bytes"] = 64 << 20
        self.assertIn("after each rank wrote 67108864 bytes", self.run_script(data, "--gpu-memory", "16e9")[None])
        self.assertIn("back to back", self.run_script(collectives(), "--gpu-memory", "16e9")[None])

    def test_noisy_results_stay_close(self):
        values = self.run_script(collectives(noise=0.05), "--gpu-memory", "16e9")
        self.assertAlmostEqual(float(values["intra_bandwidth"]) / BETA, 1, delta=0.1)

    def test_one_rank_is_refused(self):
        data = collectives()
        data["world_size"] = 1
        with self.assertRaises(subprocess.CalledProcessError):
            self.run_script(data)


if __name__ == "__main__":
    unittest.main()
