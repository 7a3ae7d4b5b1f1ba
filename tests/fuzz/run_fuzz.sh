#!/bin/sh
# Builds a libFuzzer target with clang++ (unless given one already built) and
# runs it for a bounded time over its regression corpus. CTest treats exit
# status 77 as a skip.
#
#   run_fuzz.sh --clang <clang++ or ""> <source root> <work dir> <seconds>
#   run_fuzz.sh --binary <fuzzer> <source root> <work dir> <seconds>
set -eu

mode=$1
tool=$2
src=$3
work=$4
seconds=$5
corpus="$src/tests/fuzz/corpus/store_frame"
mkdir -p "$work/new_inputs"

if [ "$mode" = "--clang" ]; then
  # The clang found at configure time may have gone since; look again.
  if [ -n "$tool" ] && [ ! -x "$tool" ]; then
    tool=""
  fi
  if [ -z "$tool" ]; then
    tool=$(command -v clang++ || command -v clang++-16 || command -v clang++-15 || command -v clang++-14 || true)
  fi
  if [ -z "$tool" ] || [ ! -x "$tool" ]; then
    echo "SKIP: no clang++ found; the store frame fuzzer needs clang with libFuzzer" \
         "(apt-get install clang libclang-rt-14-dev)"
    exit 77
  fi
  # A machine whose clang lacks the libFuzzer runtime cannot run any fuzzer;
  # that is a missing tool, not a failure of this code.
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
    > "$work/probe.cpp"
  if ! "$tool" -fsanitize=fuzzer,address "$work/probe.cpp" -o "$work/probe" > "$work/probe.log" 2>&1; then
    echo "SKIP: $tool cannot build libFuzzer targets (install libclang-rt-dev for this clang):"
    cat "$work/probe.log"
    exit 77
  fi
  echo "building the fuzzer with $tool"
  "$tool" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/core" -I"$src/capi/include" \
    "$src/tests/fuzz/store_frame_fuzz.cpp" \
    "$src/core/bootstrap/store/wire.cpp" \
    "$src/core/bootstrap/store/protocol.cpp" \
    "$src/core/base/error.cpp" \
    -o "$work/store_frame_fuzz"
  fuzzer="$work/store_frame_fuzz"
else
  fuzzer=$tool
fi

# New inputs go to the work directory; the committed corpus is only read.
# Every committed input runs first, so a regression there fails at once.
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -artifact_prefix="$work/" -print_final_stats=1 "$work/new_inputs" "$corpus"
