#!/usr/bin/env bash
# The example GPT at dp 2 x tp 2 x pp 2 (8 ranks, 1F1B, 4 micro-batches):
# examples/gpt/train_gpt, then benchmarks/torch_gpt/compare.py (the same model
# in PyTorch: DTensor tensor parallelism, torch.distributed.pipelining's
# Schedule1F1B, DDP over gloo), one job after the other, one compute thread
# per rank; then the tokens/s of each and libdtrain / PyTorch. -n gives the
# world size, which must be the mesh's (the --dp, --tp, --pp of OPTIONS).
#
#   benchmarks/run_gpt.sh [-n 8] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS go to both programs (any of --dp --tp --pp --microbatches --layers
# --hidden --heads --seq --batch --steps --warmup --log-every --seed --lr
# --data; default --dp 2 --tp 2 --pp 2 --steps 30). Writes
# OUT_DIR/gpt-dtrain.json and OUT_DIR/gpt-torch.json. Needs PyTorch.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks=8
parse_options "$@"
train_gpt="$build/examples/gpt/train_gpt"
require_tools "$dtrun" "$train_gpt"
python=${PYTHON:-python3}
export PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$build/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "$script: PyTorch is not installed (pip install torch): nothing to compare against" >&2
  exit 2
fi
mkdir -p "$out"
# Later options win in both programs: the defaults first, then the caller's.
mesh=(--dp 2 --tp 2 --pp 2 --microbatches 4 --steps 30 --log-every 10 "${options[@]}")
# train_gpt exits 1 when a run this short has not learnt enough to beat the
# unigram entropy: its figures still stand.
(set -x; "$dtrun" -n "$ranks" "$train_gpt" --schedule 1f1b --eval-every 100000 --sample 0 "${mesh[@]}" \
  --json "$out/gpt-dtrain.json") || [[ $? == 1 ]]
(set -x; "$dtrun" -n "$ranks" --timeout 1800 "$python" "$here/torch_gpt/compare.py" "${mesh[@]}" \
  --json "$out/gpt-torch.json")
"$python" - "$out" <<'PY'
import json, sys
out = sys.argv[1]
d, t = (json.load(open(f"{out}/gpt-{side}.json")) for side in ("dtrain", "torch"))
print(f"GPT {d['layers']} layers, hidden {d['hidden']}, {d['heads']} heads, context {d['seq']}, batch {d['batch']} "
      f"sequences, dp {d['dp']} x tp {d['tp']} x pp {d['pp']}, {d['microbatches']} micro-batches, {d['steps']} steps")
print(f"{'side':8} {'tokens/s':>10} {'final loss':>11}")
for name, run in (("dtrain", d), ("torch", t)):
    print(f"{name:8} {run['tokens_per_s']:10.0f} {run['final_loss']:11.4f}")
print(f"dtrain / torch tokens/s: {d['tokens_per_s'] / t['tokens_per_s']:.2f}x")
# Memory per rank against the formulas train_gpt prints beside it.
def off(measured, formula):
    return abs(measured - formula) / formula
state = max(off(r["parameters"] + r["gradients"] + r["adamw_state"], r["state_formula"]) for r in d["memory_bytes"])
acts = max(off(r["activations"], r["activations_formula"]) for r in d["memory_bytes"])
print(f"dtrain memory per rank against its formulas, worst rank: parameters + gradients + AdamW state "
      f"{100 * state:.2f}% off, activations {100 * acts:.2f}% off")
PY
