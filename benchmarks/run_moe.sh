#!/usr/bin/env bash
# An MoE layer's token exchange at ep = 2 and 4 local ranks (or the -n list):
# dtbench moe (dispatch and combine against raw all-to-allv of the same
# bytes), then, when PyTorch is installed, benchmarks/torch_moe/compare.py
# (the same exchange written with torch's all_to_all_single over gloo). One
# job after the other, never at once. Then benchmarks/moe_balance.py: a
# skewed router's load before and after training with the auxiliary losses.
#
#   benchmarks/run_moe.sh [-n "2 4"] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS (--tokens, --hidden, --experts, --top-k, --warmup) go to both
# exchange programs. Writes OUT_DIR/moe-nN.json, torch-moe-nN.json and
# moe-balance.json.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks="2 4"
parse_options "$@"
run_training moe "torch all_to_all_single"
(set -x; "${PYTHON:-python3}" "$here/moe_balance.py" --json "$out/moe-balance.json")
