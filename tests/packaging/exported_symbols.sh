#!/usr/bin/env bash
# Fails if libdtrain.so exports any dynamic symbol that is not dt_* (the
# version node DTRAIN_0 aside): nothing C++ may leak through the ABI. With a
# Debian symbols file, also fails unless it lists exactly the dt_* functions
# exported, so that a new function cannot ship without its package entry.
#
#   exported_symbols.sh LIBRARY [SYMBOLS_FILE]
set -euo pipefail
library=$1
symbols_file=${2:-}
symbols=$(nm -D --defined-only "$library" | awk '{print $3}' | sed 's/@.*//')
count=$(printf '%s\n' "$symbols" | grep -c '^dt_' || true)
stray=$(printf '%s\n' "$symbols" | grep -v -e '^dt_' -e '^DTRAIN_[0-9]*$' || true)
if [ -n "$stray" ]; then
  echo "exported symbols outside dt_*:"
  printf '%s\n' "$stray"
  exit 1
fi
[ "$count" -gt 0 ] || { echo "no dt_* symbols exported"; exit 1; }
soname=$(readelf -d "$library" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libdtrain.so.0" ] || { echo "SONAME is '$soname', expected libdtrain.so.0"; exit 1; }
if [ -n "$symbols_file" ]; then
  listed=$(sed -n 's/^ \(dt_[A-Za-z0-9_]*\)@.*/\1/p' "$symbols_file" | sort)
  exported=$(printf '%s\n' "$symbols" | grep '^dt_' | sort)
  unlisted=$(comm -23 <(printf '%s\n' "$exported") <(printf '%s\n' "$listed"))
  gone=$(comm -13 <(printf '%s\n' "$exported") <(printf '%s\n' "$listed"))
  if [ -n "$unlisted" ] || [ -n "$gone" ]; then
    [ -z "$unlisted" ] || { echo "exported but missing from $symbols_file:"; printf '  %s\n' $unlisted; }
    [ -z "$gone" ] || { echo "listed in $symbols_file but not exported:"; printf '  %s\n' $gone; }
    exit 1
  fi
fi
echo "$count dt_* symbols exported, nothing else; SONAME $soname${symbols_file:+; all listed in the symbols file}"
