#!/usr/bin/env bash
# The pipeline executor: dtbench pipeline at 2 and 4 local ranks (or the -n
# list), every schedule's measured bubble against its closed form, with
# stage functions that sleep for 10 ms units (a host thread waiting for a
# GPU stage; busy-waiting ranks would need a core each), m = 8 and 16,
# the median of 7 steps. Then, when PyTorch is installed, at 2 ranks
# benchmarks/torch_pipe/compare.py: an MLP under 1F1B through
# torch.distributed.pipelining over gloo and through dtrain.Pipeline in one
# run, at the small size (8 layers of 256, batch 128) and the default one
# (8 of 1024, batch 512).
#
#   benchmarks/run_pipeline.sh [-n "2 4"] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS go to dtbench pipeline, after this script's own (--work sleep
# --unit-us 10000 --steps 7 --microbatches 8,16), so they override them.
# Writes OUT_DIR/pipeline-nN.json, torch-pipe-small.json and torch-pipe.json.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks="2 4"
parse_options "$@"
require_tools "$dtbench" "$dtrun"
mkdir -p "$out"
for n in $ranks; do
  (set -x; "$dtrun" -n "$n" "$dtbench" pipeline --work sleep --unit-us 10000 --steps 7 --microbatches 8,16 \
    "${options[@]}" --json "$out/pipeline-n$n.json")
done

python=${PYTHON:-python3}
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "$script: PyTorch is not installed (pip install torch): the comparison with torch.distributed.pipelining is skipped"
  exit 0
fi
export PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$build/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
(set -x; "$dtrun" -n 2 --timeout 300 "$python" "$here/torch_pipe/compare.py" --width 256 --batch 128 --rounds 5 \
  --json "$out/torch-pipe-small.json")
(set -x; "$dtrun" -n 2 --timeout 600 "$python" "$here/torch_pipe/compare.py" --rounds 5 --json "$out/torch-pipe.json")
