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

here=$(cd "$(dirname "$0")" && pwd)
nproc=2
build="$here/../build-bench"
out=.

usage() { sed -n '2,11s/^# \{0,1\}//p' "$0"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) nproc=$2; shift 2 ;;
    -b) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "run_collectives.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

dtbench="$build/benchmarks/dtbench/dtbench"
peer="$build/benchmarks/mpi_peer/mpi_peer"
# The build tree's dtrun when it has one, else the one on PATH.
dtrun="$build/tools/dtrun/dtrun"
[[ -x "$dtrun" ]] || dtrun=$(command -v dtrun || true)
mpirun=${MPIRUN:-mpirun}

for tool in "$dtbench" "$peer" "$dtrun"; do
  if [[ -z "$tool" || ! -x "$tool" ]]; then
    echo "run_collectives.sh: missing ${tool:-dtrun}; build with cmake --build $build" >&2
    exit 2
  fi
done

# Open MPI refuses root unless told; a container is often root.
as_root=()
[[ $(id -u) -eq 0 ]] && as_root=(--allow-run-as-root)

mkdir -p "$out"
set -x
"$dtrun" -n "$nproc" --no-tag-output "$dtbench" collectives "$@" --json "$out/dtrain-n$nproc.json"
# pml ucx with any transport and device: MPI over the same UCX libdtrain uses.
"$mpirun" -np "$nproc" --oversubscribe "${as_root[@]}" \
  --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --bind-to none \
  "$peer" "$@" --json "$out/mpi-n$nproc.json"
"$dtbench" compare "$out/dtrain-n$nproc.json" "$out/mpi-n$nproc.json" --json "$out/collectives-n$nproc.json"
