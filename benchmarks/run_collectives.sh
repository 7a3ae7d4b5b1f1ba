#!/usr/bin/env bash
# libdtrain's collectives against OpenMPI's on N local ranks: dtbench under
# dtrun, then the MPI peer under mpirun (one job after the other, so neither
# measures the other), then both side by side with their ratios.
#
#   benchmarks/run_collectives.sh [-n N] [-b BUILD_DIR] [-o OUT_DIR] [-- OPTIONS...]
#
# OPTIONS are the sweep's (--ops, --min-bytes, --max-bytes, --iters, --warmup,
# --dtype) and go to both runs. Writes OUT_DIR/dtrain-nN.json, mpi-nN.json and
# the merged collectives-nN.json.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
ranks=2
parse_options "$@"
peer="$build/benchmarks/mpi_peer/mpi_peer"
mpirun=${MPIRUN:-mpirun}
require_tools "$dtbench" "$peer" "$dtrun"

# Open MPI refuses root unless told; a container is often root.
as_root=()
[[ $(id -u) -eq 0 ]] && as_root=(--allow-run-as-root)

mkdir -p "$out"
set -x
"$dtrun" -n "$ranks" --no-tag-output "$dtbench" collectives "${options[@]}" --json "$out/dtrain-n$ranks.json"
# pml ucx with any transport and device: MPI over the same UCX libdtrain uses.
"$mpirun" -np "$ranks" --oversubscribe "${as_root[@]}" \
  --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --bind-to none \
  "$peer" "${options[@]}" --json "$out/mpi-n$ranks.json"
"$dtbench" compare "$out/dtrain-n$ranks.json" "$out/mpi-n$ranks.json" --json "$out/collectives-n$ranks.json"
