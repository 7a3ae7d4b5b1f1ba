#!/bin/sh
# Regenerates src/bindings.rs from capi/include/dtrain.h with the bindgen CLI.
#
#   regenerate.sh          rewrite src/bindings.rs
#   regenerate.sh --check  regenerate into a temporary file and compare: exit 0
#                          when the committed file is current, 1 when it is
#                          stale, 77 when bindgen or rustfmt is missing
#
# The flags are pinned so that the output depends only on the headers: no
# version comment, a fixed Rust target, bindgen's own formatting turned off and
# rustfmt run explicitly with a fixed edition and configuration.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
header="$root/capi/include/dtrain.h"
committed="$here/src/bindings.rs"

mode=write
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

missing() {
  echo "$1 not found: $2" >&2
  if [ "$mode" = check ]; then exit 77; fi
  exit 1
}

BINDGEN=${BINDGEN:-bindgen}
command -v "$BINDGEN" >/dev/null 2>&1 || missing bindgen "install Debian's bindgen package"
RUSTFMT=${RUSTFMT:-$(command -v rustfmt || echo "$HOME/.cargo/bin/rustfmt")}
[ -x "$RUSTFMT" ] || missing rustfmt "install rustfmt (rustup component add rustfmt) or set RUSTFMT"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each option is on its own line of the rustfmt configuration.
printf 'edition = "2021"\nmax_width = 100\nnewline_style = "Unix"\n' >"$tmp/rustfmt.toml"

"$BINDGEN" "$header" \
  --output "$tmp/raw.rs" \
  --disable-header-comment \
  --no-rustfmt-bindings \
  --rust-target 1.47 \
  --default-enum-style consts \
  --no-prepend-enum-name \
  --default-macro-constant-type unsigned \
  --size_t-is-usize \
  --allowlist-function 'dt_.*' \
  --allowlist-type 'dt_.*' \
  --allowlist-var 'DT_.*' \
  --allowlist-type 'DLTensor|DLDevice|DLDataType|DLDeviceType|DLDataTypeCode' \
  --raw-line '// Generated from capi/include/dtrain.h by regenerate.sh; do not edit.' \
  -- -I"$root/capi/include" -std=c99

"$RUSTFMT" --config-path "$tmp/rustfmt.toml" --edition 2021 --emit files "$tmp/raw.rs"

if [ "$mode" = check ]; then
  if diff -u "$committed" "$tmp/raw.rs"; then
    echo "src/bindings.rs is up to date"
  else
    echo "src/bindings.rs is stale: run bindings/rust/dtrain-sys/regenerate.sh" >&2
    exit 1
  fi
else
  cp "$tmp/raw.rs" "$committed"
  echo "wrote $committed"
fi
