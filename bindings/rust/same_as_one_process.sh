#!/bin/sh
# Runs a training example as one process and under dtrun on RANKS ranks, and
# passes when both end with the same "final loss L, parameters P" line up to
# a relative TOLERANCE (the ranks' gradients are averaged in another order
# than one process sums them), and both runs succeeded.
#
#   same_as_one_process.sh DTRUN RANKS TOLERANCE PROGRAM [ARGS...]
set -eu
dtrun=$1 ranks=$2 tolerance=$3
shift 3
final_line() { sed -n 's/^\(\[0\] \)\{0,1\}final loss \([^,]*\), parameters \(.*\)$/\2 \3/p'; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A world of one, whatever launcher the test itself runs under.
env -u DTRAIN_RANK -u DTRAIN_WORLD_SIZE -u DTRAIN_STORE -u DTRAIN_LOCAL_RANK -u RANK -u WORLD_SIZE \
  "$@" >"$out/one" || { cat "$out/one"; echo "one process failed"; exit 1; }
"$dtrun" -n "$ranks" --timeout 120 "$@" >"$out/many" || { cat "$out/many"; echo "$ranks ranks failed"; exit 1; }
one=$(final_line <"$out/one")
many=$(final_line <"$out/many")
echo "one process:  $one"
echo "$ranks ranks:      $many"
[ -n "$one" ] && [ -n "$many" ] || { echo "a run printed no final line"; exit 1; }
echo "$one $many" | awk -v tol="$tolerance" '{
  for (i = 1; i <= 2; ++i) {
    a = $i; b = $(i + 2); d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a
    if (d > tol * m) { printf "differ beyond %g relative: %s against %s\n", tol, a, b; exit 1 }
  }
  print "equal within " tol " relative" }'
