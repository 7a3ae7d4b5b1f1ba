#!/usr/bin/env bash
# Builds the Debian packages (libdtrain0, libdtrain-dev, dtrain-tools,
# python3-dtrain) from a clean copy of this tree, and checks them with
# lintian:
#
#   bash tools/build-deb.sh [OUT_DIR]      # default build/deb
#
# The .debs, .changes and lintian.log end up in OUT_DIR. Fails when
# dpkg-buildpackage fails or lintian reports an error (E:). Needs
# debhelper, dh-python, lintian and the build dependencies in
# debian/control (tools/setup.sh installs them).
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$source_dir/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# dpkg-buildpackage writes the packages beside the source folder. The same
# folder every time, so that ccache (when installed) finds the compilations
# of the last build.
work=$out/work
rm -rf "$work"
mkdir -p "$work/libdtrain"
# What a clone holds (tracked files and new ones git does not ignore; a
# tracked file deleted in the checkout is left out).
(cd "$source_dir" && git ls-files -z --cached --others --exclude-standard) |
  (cd "$source_dir" && while IFS= read -r -d '' f; do [[ -f $f ]] && printf '%s\0' "$f"; done) |
  (cd "$source_dir" && xargs -0 cp --parents -t "$work/libdtrain")
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
(cd "$work/libdtrain" && dpkg-buildpackage -b -uc -us -j"${DEB_JOBS:-2}") >"$out/build.log" 2>&1 || {
  tail -40 "$out/build.log"
  echo "FAILED: dpkg-buildpackage (the whole log: $out/build.log)"
  exit 1
}
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
rm -rf "$work"
lintian --fail-on error "$out"/*.changes >"$out/lintian.log" 2>&1 || {
  cat "$out/lintian.log"
  echo "FAILED: lintian reports errors"
  exit 1
}
echo "lintian: $(grep -c '^E:' "$out/lintian.log" || true) errors, $(grep -c '^W:' "$out/lintian.log" || true) warnings (see $out/lintian.log)"
ls "$out"/*.deb
