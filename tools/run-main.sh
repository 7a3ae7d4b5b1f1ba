#!/usr/bin/env bash
# The main job: installs what is missing, builds libdtrain (release preset)
# and runs the collectives check, which verifies and times every collective.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/env.sh
bash tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target dt_collectives_check
exec ./build/release/examples/c/dt_collectives_check "$@"
