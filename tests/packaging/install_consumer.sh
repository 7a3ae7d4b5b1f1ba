#!/usr/bin/env bash
# Installs the built tree into a scratch prefix, then builds and runs a small
# C program against it twice: through pkg-config and through find_package.
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
libdir=$(dirname "$(find "$work/prefix" -name 'libdtrain.so.0' | head -n 1)")
[ -n "$libdir" ] || { echo "libdtrain.so.0 was not installed"; exit 1; }
for f in "$libdir/libdtrain.so" "$work/prefix/include/dtrain.h" "$work/prefix/include/dtrain/comm.h" \
         "$libdir/pkgconfig/dtrain.pc" "$libdir/cmake/dtrain/dtrainConfig.cmake" \
         "$libdir/cmake/dtrain/dtrainConfigVersion.cmake"; do
  [ -e "$f" ] || { echo "missing from the install: ${f#$work/prefix/}"; exit 1; }
done
real=$(readlink -f "$libdir/libdtrain.so")
[[ $(basename "$real") =~ ^libdtrain\.so\.0\.[0-9]+\.[0-9]+$ ]] || { echo "unexpected real file $real"; exit 1; }

export LD_LIBRARY_PATH="$libdir"
cflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags dtrain)
libs=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --libs dtrain)
cc -std=c99 -Wall -Wextra -Werror $cflags "$2/tests/packaging/consumer/main.c" $libs -o "$work/consumer_pc"
"$work/consumer_pc"
echo "pkg-config consumer passed"

cmake -S "$source_dir/tests/packaging/consumer" -B "$work/consumer_build" \
      -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer_build" >/dev/null
"$work/consumer_build/consumer"
echo "find_package consumer passed"
