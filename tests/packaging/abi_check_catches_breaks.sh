#!/usr/bin/env bash
# Proves that abi_check.sh fails on an incompatible change, by comparing the
# library with doctored copies of the baseline: as if the library had
#   removed   dropped a function (dt_barrier renamed in the baseline),
#   reordered swapped the places of two fields of dt_comm_options (rank and
#             world_size).
# The undoctored baseline must pass, each doctored one must fail with 1.
#
#   abi_check_catches_breaks.sh BASELINE LIBRARY
set -euo pipefail
if (($# != 2)); then
  echo "usage: $0 BASELINE LIBRARY" >&2
  exit 2
fi
check=$(dirname "${BASH_SOURCE[0]}")/abi_check.sh
status=0
bash "$check" "$@" >/dev/null || status=$?
((status == 77)) && { echo "skipped: abidiff is not installed"; exit 77; }
((status == 0)) || { echo "FAILED: the undoctored baseline does not pass (status $status)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-abi.XXXXXX")
trap 'rm -rf "$work"' EXIT
sed "s/'dt_barrier'/'dt_barrier_removed'/g; s/'dt_barrier@@/'dt_barrier_removed@@/g" "$1" >"$work/removed.abi"
python3 - "$1" "$work/reordered.abi" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
start = text.index("<class-decl name='dt_comm_options'")
end = text.index("</class-decl>", start)
members = {m.group(2): m for m in re.finditer(r"layout-offset-in-bits='(\d+)'>\s*<var-decl name='(\w+)'", text[start:end])}
rank, size = members["rank"], members["world_size"]
# The baseline's rank sits where the library's world_size is, and the other way round.
block = list(text[start:end])
for member, offset in ((rank, size.group(1)), (size, rank.group(1))):
    block[member.start(1):member.end(1)] = offset  # equal lengths ("32", "64")
open(sys.argv[2], "w").write(text[:start] + "".join(block) + text[end:])
PY
failed=0
for doctored in removed reordered; do
  cmp -s "$1" "$work/$doctored.abi" && { echo "FAILED: could not doctor the baseline ($doctored)"; failed=1; continue; }
  status=0
  output=$(bash "$check" "$work/$doctored.abi" "$2") || status=$?
  if ((status == 1)); then
    echo "ok: $doctored: the check fails, as it must:"
    sed 's/^/    /' <<<"$output" | grep -E "\[D\]|\[C\]|offset changed" | head -4
  else
    echo "FAILED: $doctored: the check exited $status, not 1"
    echo "$output"
    failed=1
  fi
done
exit "$failed"
