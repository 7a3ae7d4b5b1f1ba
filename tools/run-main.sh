#!/usr/bin/env bash
# The main job: installs what is missing (the text comes from the `fortunes`
# package), builds libdtrain (release preset) and trains the example GPT
# (examples/gpt) on 8 ranks under dtrun as dp 2 x tp 2 x pp 2 with the 1F1B
# pipeline schedule, DDP and AdamW, for a few minutes. It prints progress
# lines with the validation loss, memory per rank, the validation loss
# against the unigram entropy of the text, and a generated sample; it fails
# unless the validation loss ends below that entropy.
# Extra arguments go to the program (--steps, --lr, --schedule, ...; --help
# lists them all). The smallest example, an MLP under DDP, is
# build/release/examples/c/train_mlp.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/env.sh
bash tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target dtrun train_gpt
exec ./build/release/tools/dtrun/dtrun -n 8 --timeout 120 ./build/release/examples/gpt/train_gpt \
  --dp 2 --tp 2 --pp 2 --schedule 1f1b --microbatches 4 --steps 600 --warmup 30 --log-every 25 --eval-every 100 "$@"
