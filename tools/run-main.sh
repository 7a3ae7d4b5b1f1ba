#!/usr/bin/env bash
# The main job: installs what is missing, builds libdtrain (release preset)
# and runs the collectives check on 4 ranks under dtrun, which verifies and
# times every collective. Extra arguments go to the check (elements per rank).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/env.sh
bash tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target dtrun dt_collectives_check
exec ./build/release/tools/dtrun/dtrun -n 4 --timeout 120 ./build/release/examples/c/dt_collectives_check "$@"
