#!/usr/bin/env bash
# Installs the built tree into a scratch prefix, then builds and runs a small
# C program against it twice: through pkg-config (linked with the rpath the
# install's loader hint gives) and through find_package; neither run gets
# LD_LIBRARY_PATH. Also checks the CMake package's version compatibility
# (docs/abi.md).
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"
libdir=$(dirname "$(find "$work/prefix" -name 'libdtrain.so.0' | head -n 1)")
# The scratch prefix is nowhere the loader searches: the install says what to do.
for hint in "libdtrain.so.0 is installed in $libdir" ldconfig "-Wl,-rpath,$libdir" "LD_LIBRARY_PATH=$libdir"; do
  grep -qF -- "$hint" "$work/install.log" || { echo "cmake --install did not say: $hint"; cat "$work/install.log"; exit 1; }
done
[ -n "$libdir" ] || { echo "libdtrain.so.0 was not installed"; exit 1; }
for f in "$libdir/libdtrain.so" "$work/prefix/include/dtrain.h" "$work/prefix/include/dtrain/comm.h" \
         "$libdir/pkgconfig/dtrain.pc" "$libdir/cmake/dtrain/dtrainConfig.cmake" \
         "$libdir/cmake/dtrain/dtrainConfigVersion.cmake"; do
  [ -e "$f" ] || { echo "missing from the install: ${f#$work/prefix/}"; exit 1; }
done
real=$(readlink -f "$libdir/libdtrain.so")
[[ $(basename "$real") =~ ^libdtrain\.so\.0\.[0-9]+\.[0-9]+$ ]] || { echo "unexpected real file $real"; exit 1; }

unset LD_LIBRARY_PATH
cflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags dtrain)
libs=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --libs dtrain)
cc -std=c99 -Wall -Wextra -Werror $cflags "$2/tests/packaging/consumer/main.c" $libs \
   -Wl,-rpath,"$libdir" -o "$work/consumer_pc"
"$work/consumer_pc"
echo "pkg-config consumer passed"

version=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion dtrain)
IFS=. read -r major minor _ <<<"$version"
cmake -S "$source_dir/tests/packaging/consumer" -B "$work/consumer_build" \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DDTRAIN_WANTED="$major.$minor" >/dev/null
cmake --build "$work/consumer_build" >/dev/null
"$work/consumer_build/consumer"
echo "find_package consumer passed"

# Before 1.0, find_package(dtrain X.Y) accepts X.Y.z only.
cat >"$work/compatible.cmake" <<EOF
string(REPLACE "." ";" _parts "\${PACKAGE_FIND_VERSION}")
list(GET _parts 0 PACKAGE_FIND_VERSION_MAJOR)
list(GET _parts 1 PACKAGE_FIND_VERSION_MINOR)
set(PACKAGE_FIND_VERSION_PATCH 0)
include("$libdir/cmake/dtrain/dtrainConfigVersion.cmake")
message("\${PACKAGE_VERSION_COMPATIBLE}")
EOF
cases=("$major.$minor:TRUE" "$major.$((minor + 1)):FALSE" "$((major + 1)).0:FALSE")
# An older minor is what SameMajorVersion would wrongly accept.
((major == 0 && minor > 0)) && cases+=("0.$((minor - 1)):FALSE")
for wanted in "${cases[@]}"; do
  got=$(cmake -DPACKAGE_FIND_VERSION="${wanted%%:*}" -P "$work/compatible.cmake" 2>&1)
  [[ $got == "${wanted##*:}" ]] || { echo "find_package(dtrain ${wanted%%:*}) with $version installed: compatible=$got"; exit 1; }
done
echo "version compatibility with $version installed: ${cases[*]}"
