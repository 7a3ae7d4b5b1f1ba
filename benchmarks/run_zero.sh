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

here=$(cd "$(dirname "$0")" && pwd)
ranks="2 4"
build="$here/../build-bench"
out=.

usage() { sed -n '2,11s/^# \{0,1\}//p' "$0"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) ranks=$2; shift 2 ;;
    -b) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "run_zero.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

dtbench="$build/benchmarks/dtbench/dtbench"
dtrun="$build/tools/dtrun/dtrun"
[[ -x "$dtrun" ]] || dtrun=$(command -v dtrun || true)
for tool in "$dtbench" "$dtrun"; do
  if [[ -z "$tool" || ! -x "$tool" ]]; then
    echo "run_zero.sh: missing ${tool:-dtrun}; build with cmake --build $build" >&2
    exit 2
  fi
done
python=${PYTHON:-python3}
# The binding built in this tree.
export PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$build/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
have_torch=1
if ! "$python" -c "import torch" 2>/dev/null; then
  have_torch=0
  echo "run_zero.sh: PyTorch is not installed (pip install torch): the comparison with torch FSDP is skipped"
fi

mkdir -p "$out"
for n in $ranks; do
  (set -x; "$dtrun" -n "$n" "$dtbench" zero "$@" --json "$out/zero-n$n.json")
  if [[ $have_torch == 1 ]]; then
    (set -x; "$dtrun" -n "$n" --timeout 300 "$python" "$here/torch_zero/compare.py" "$@" --json "$out/torch-zero-n$n.json")
  fi
done
