#!/usr/bin/env bash
# Fails if libdtrain.so exports any dynamic symbol that is not dt_* (the
# version node DTRAIN_0 aside): nothing C++ may leak through the ABI.
set -euo pipefail
library=$1
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
echo "$count dt_* symbols exported, nothing else; SONAME $soname"
