#!/usr/bin/env bash
# Writes the ABI baseline of libdtrain.so.0 (abidw: every exported function
# and the public types it reaches, as XML) from a build tree:
#
#   bash packaging/abi/update.sh build/release
#
# Run it when a change extends the ABI on purpose (a new function, a field
# added at the end of an options struct) and commit the result with the
# change; docs/abi.md says what may change. packaging.abi compares each
# build with this file.
set -euo pipefail
if (($# != 1)); then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
abidw --exported-interfaces-only --headers-dir "$source_dir/capi/include" --drop-private-types \
  --drop-undefined-syms --no-show-locs --no-corpus-path \
  --out-file "$here/libdtrain.so.0.abi" "$1/capi/libdtrain.so.0"
echo "wrote $here/libdtrain.so.0.abi"
