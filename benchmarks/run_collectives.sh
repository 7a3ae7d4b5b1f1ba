#!/usr/bin/env bash
# libdtrain's collectives against OpenMPI's on N local ranks: dtbench under
# dtrun and the MPI peer under mpirun take turns for ROUNDS rounds (default 3:
# dtrain, mpi, dtrain, mpi, ...; one job after the other, so neither measures
# the other), then both are printed side by side: each side's best round, and
# the median, min and max over the rounds of mpi time / dtrain time within
# one round. A shared machine's speed changes in phases, so only a ratio of
# two runs that ran back to back says which side is faster.
#
#   [ROUNDS=R] benchmarks/run_collectives.sh [-n N] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS are the sweep's (--ops, --min-bytes, --max-bytes, --iters, --warmup,
# --dtype) and go to both runs. Writes OUT_DIR/collectives-nN.json (the
# comparison) and each run's own results: OUT_DIR/dtrain-nN-rK.json and
# mpi-nN-rK.json for round K (dtrain-nN.json and mpi-nN.json when ROUNDS=1).
# mpirun is $MPIRUN, else the one the build found, else PATH's.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks=2
parse_options "$@"
require_tools "$dtbench" "$build/benchmarks/mpi_peer/mpi_peer" "$dtrun"

set -x
"$dtbench" collectives --vs-mpi -n "$ranks" --rounds "${ROUNDS:-3}" --results-dir "$out" "${options[@]}" \
  --json "$out/collectives-n$ranks.json"
