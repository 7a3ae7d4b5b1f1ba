#!/usr/bin/env bash
# Tensor parallelism on a transformer MLP block (2048 tokens, 1024 -> 4096 ->
# 1024, f32): benchmarks/torch_tp/compare.py at 1 and 2 local ranks (or the
# -n list), libdtrain's tp layers against torch.distributed.tensor.parallel
# over gloo in one run each, one compute thread per rank, and dtbench tp (the
# same block through the C API: the step against one rank, each rank's
# compute and collectives alone, GFLOP/s), plain and sequence parallel.
# Then libdtrain's speed-up from tp = 1 to each larger tp. Needs PyTorch.
#
#   benchmarks/run_tp.sh [-n "1 2"] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS (--tokens, --hidden, --ffn, --steps, --rounds, --warmup) go to
# compare.py, and the first three to dtbench tp. Writes OUT_DIR/torch-tp-nN.json,
# tp-nN.json and tp-sp-nN.json.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks="1 2"
parse_options "$@"
require_tools "$dtbench" "$dtrun"
python=${PYTHON:-python3}
export PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$build/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "$script: PyTorch is not installed (pip install torch): nothing to compare against" >&2
  exit 2
fi
# The block's size, for dtbench tp.
sizes=()
for ((i = 0; i < ${#options[@]}; i++)); do
  case ${options[i]} in
    --tokens | --hidden | --ffn) sizes+=("${options[i]}" "${options[i + 1]}") ;;
  esac
done
mkdir -p "$out"
for n in $ranks; do
  echo "== tp = $n"
  (set -x; "$dtrun" -n "$n" "$dtbench" tp "${sizes[@]}" --json "$out/tp-n$n.json")
  (set -x; "$dtrun" -n "$n" "$dtbench" tp "${sizes[@]}" --sequence-parallel --json "$out/tp-sp-n$n.json")
  "$dtrun" -n "$n" --timeout 1800 "$python" "$here/torch_tp/compare.py" --json "$out/torch-tp-n$n.json" \
    "${options[@]}"
done
"$python" - "$out" $ranks <<'PY'
import json, sys
out, ranks = sys.argv[1], [int(n) for n in sys.argv[2:]]
runs = {n: json.load(open(f"{out}/torch-tp-n{n}.json")) for n in ranks}
base = runs.get(1)
for n, run in runs.items():
    line = f"tp = {n}: dtrain {run['dtrain_ms']:.1f} ms, torch {run['torch_ms']:.1f} ms, dtrain / torch {run['dtrain_ms'] / run['torch_ms']:.3f}"
    if base and n > 1:
        line += f", dtrain speed-up over tp = 1: {base['dtrain_ms'] / run['dtrain_ms']:.2f}x"
    print(line)
PY
