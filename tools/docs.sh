#!/usr/bin/env bash
# Builds the C API reference (Doxygen over capi/include) into OUT_DIR/html,
# default build/docs, and fails when Doxygen warns (an undocumented public
# symbol, a broken reference):
#
#   bash tools/docs.sh [OUT_DIR]
#
# Exits 77 when doxygen is not installed (tools/setup.sh installs it).
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$source_dir/build/docs}
if ! command -v doxygen >/dev/null 2>&1; then
  echo "skipped: doxygen is not installed"
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^#define DT_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$source_dir/capi/include/dtrain/version.h" | paste -sd.)
DTRAIN_DOCS_OUT=$out DTRAIN_SOURCE_DIR=$source_dir DTRAIN_VERSION=$version doxygen "$source_dir/docs/Doxyfile"
if [[ -s $out/warnings.log ]]; then
  cat "$out/warnings.log"
  echo "FAILED: doxygen warned $(wc -l <"$out/warnings.log") times (above)"
  exit 1
fi
echo "ok: the C API reference (libdtrain $version) is in $out/html/index.html"
