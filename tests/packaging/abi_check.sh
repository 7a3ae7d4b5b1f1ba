#!/usr/bin/env bash
# Compares a built libdtrain.so.0 with the committed ABI baseline:
#
#   abi_check.sh BASELINE LIBRARY
#
# Fails (1) on any change abidiff sees to what the baseline holds: a removed
# function, or a changed type of an existing function or of a public struct
# (reordered, resized, retyped fields). Functions the baseline lacks are
# additions, which docs/abi.md allows, and are not reported. Exits 2 when
# abidiff itself fails, 77 (skipped) when it is not installed.
set -uo pipefail
if (($# != 2)); then
  echo "usage: $0 BASELINE LIBRARY" >&2
  exit 2
fi
if ! command -v abidiff >/dev/null 2>&1; then
  echo "skipped: abidiff is not installed (abigail-tools; tools/setup.sh installs it)"
  exit 77
fi
# The baseline holds only the public types (update.sh filters them); the
# library's exported functions reach no others.
abidiff --exported-interfaces-only --no-added-syms "$1" "$2"
status=$?
# abidiff's status is a bit mask: 1 error, 2 usage error, 4 ABI change,
# 8 incompatible ABI change.
if ((status & 3)); then
  echo "abidiff failed (status $status)"
  exit 2
fi
if ((status & 12)); then
  echo "FAILED: the ABI of $2 differs from $1 (above). An intended extension:"
  echo "  bash packaging/abi/update.sh BUILD_DIR, and commit the baseline (see docs/abi.md)"
  exit 1
fi
echo "ok: the ABI of $2 matches $1"
