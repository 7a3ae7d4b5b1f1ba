#!/usr/bin/env bash
# DDP on the example model at 2 and 4 local ranks (or the -n list): dtbench
# ddp (step times and the share of the allreduce hidden behind backward),
# then, when PyTorch is installed, benchmarks/torch_ddp/compare.py (one torch
# model under torch DDP over gloo and under libdtrain's DDP). One job after
# the other, never at once.
#
#   benchmarks/run_ddp.sh [-n "2 4"] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS (--steps, --rounds, --warmup, --batch, --hidden, --layers,
# --bucket-kib) go to both programs. Writes OUT_DIR/ddp-nN.json and
# torch-ddp-nN.json.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks="2 4"
parse_options "$@"
run_training ddp "torch DDP"
