#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds the CI preset
# (warnings as errors) and runs every test, then builds the Debian packages
# and runs a job from them (packaging.debian, alone: it compiles the library
# again, which would slow the timed multi-rank tests beside it), then builds
# the asan preset and runs the unit tests under AddressSanitizer +
# UndefinedBehaviorSanitizer.
# Ends with one summary line and a non-zero exit on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/env.sh
bash tools/setup.sh || exit 1

results=build/test-results
rm -rf "$results" && mkdir -p "$results"
status=0
failed_steps=()  # steps that failed before writing a test report

run_preset() {  # run_preset <preset> [ctest args...]
  local preset=$1
  shift
  echo "=== $preset: configure and build"
  if ! cmake --preset "$preset" >"$results/$preset-configure.log" 2>&1; then
    cat "$results/$preset-configure.log"
    failed_steps+=("$preset configure")
    return 1
  fi
  if ! cmake --build --preset "$preset" >"$results/$preset-build.log" 2>&1; then
    tail -n 60 "$results/$preset-build.log"
    failed_steps+=("$preset build")
    return 1
  fi
  echo "=== $preset: test"
  ctest --preset "$preset" -j2 --output-junit "$PWD/$results/$preset.xml" "$@"
}

run_preset ci -E '^packaging\.debian$' || status=1
echo "=== ci: the Debian packages"
DTRAIN_TEST_DEBIAN=1 ctest --preset ci -R '^packaging\.debian$' --output-junit "$PWD/$results/ci-debian.xml" || status=1
run_preset asan || status=1

step_args=()
for step in "${failed_steps[@]}"; do step_args+=(--failed-step "$step"); done
python3 tools/summarize_junit.py "$results"/*.xml "${step_args[@]}" || status=1
exit $status
