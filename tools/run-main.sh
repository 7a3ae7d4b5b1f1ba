#!/usr/bin/env bash
# The main job: installs what is missing, builds libdtrain (release preset)
# and trains the example MLP on 4 ranks under dtrun with DDP and AdamW
# (examples/c/train_mlp.c). It prints a progress line every 20 steps and a
# summary, and fails unless the loss fell below half of the first step's.
# Extra arguments go to the program (--steps, --batch, --hidden, --lr, --seed;
# --help lists them all).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/env.sh
bash tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target dtrun train_mlp
exec ./build/release/tools/dtrun/dtrun -n 4 --timeout 120 ./build/release/examples/c/train_mlp "$@"
