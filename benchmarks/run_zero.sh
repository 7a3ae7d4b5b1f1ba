#!/usr/bin/env bash
# ZeRO on the example model at 2 and 4 local ranks (or the -n list): dtbench
# zero (step time and memory per rank of stages 0-3 against the ZeRO
# formulas), then, when PyTorch is installed, benchmarks/torch_zero/compare.py
# (one torch model under torch FSDP FULL_SHARD over gloo and under libdtrain's
# stage 3 through the Python binding). One job after the other, never at once.
#
#   benchmarks/run_zero.sh [-n "2 4"] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS (--steps, --rounds, --warmup, --batch, --hidden, --layers) go to
# both programs. Writes OUT_DIR/zero-nN.json and torch-zero-nN.json.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks="2 4"
parse_options "$@"
run_training zero "torch FSDP"
