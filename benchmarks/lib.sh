# Sourced by the run_*.sh scripts: their common options, the programs of a
# build tree, and the runs of a training benchmark beside its PyTorch
# comparison.

# The sourcing script's name, for its messages.
script=$(basename "$0")
here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build-bench"
out=.

# The script's help is its leading comment.
usage() { sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$0"; }

# Reads the script's arguments: -n into `ranks` (the script sets its
# default), -b, -o, and what follows -- into `options`, which go to the
# benchmark programs. Then finds dtbench and dtrun in the build tree.
parse_options() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      -n) ranks=$2; shift 2 ;;
      -b) build=$2; shift 2 ;;
      -o) out=$2; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      --) shift; break ;;
      *) echo "$script: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
  done
  options=("$@")
  dtbench="$build/benchmarks/dtbench/dtbench"
  # The build tree's dtrun when it has one, else the one on PATH.
  dtrun="$build/tools/dtrun/dtrun"
  [[ -x "$dtrun" ]] || dtrun=$(command -v dtrun || true)
}

# Exits unless every program given exists; an empty one is a dtrun not found.
require_tools() {
  local tool
  for tool in "$@"; do
    if [[ -z "$tool" || ! -x "$tool" ]]; then
      echo "$script: missing ${tool:-dtrun}; build with cmake --build $build" >&2
      exit 2
    fi
  done
}

# At each of `ranks`: dtbench SUBCOMMAND, then, when PyTorch is installed,
# benchmarks/torch_SUBCOMMAND/compare.py (against PEER, torch's own), one job
# after the other. Writes OUT/SUBCOMMAND-nN.json and torch-SUBCOMMAND-nN.json.
run_training() {
  local subcommand=$1 peer=$2
  require_tools "$dtbench" "$dtrun"
  local python=${PYTHON:-python3}
  # The binding built in this tree.
  export PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
  export LD_LIBRARY_PATH="$build/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local have_torch=1
  if ! "$python" -c "import torch" 2>/dev/null; then
    have_torch=0
    echo "$script: PyTorch is not installed (pip install torch): the comparison with $peer is skipped"
  fi

  mkdir -p "$out"
  local n
  for n in $ranks; do
    (set -x; "$dtrun" -n "$n" "$dtbench" "$subcommand" "${options[@]}" --json "$out/$subcommand-n$n.json")
    if [[ $have_torch == 1 ]]; then
      (set -x; "$dtrun" -n "$n" --timeout 300 "$python" "$here/torch_$subcommand/compare.py" "${options[@]}" \
        --json "$out/torch-$subcommand-n$n.json")
    fi
  done
}
