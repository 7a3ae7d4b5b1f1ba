#!/usr/bin/env bash
# Where a multi-host job listens: one dtrun per network namespace (see
# hosts.sh), two ranks each, with no UCX_* variables set. Each namespace also
# has loopback and, where the kernel offers dummy interfaces, a second
# interface with an address of its own, as a machine's other networks. While
# their communicator is up, every rank's listening TCP sockets must be on the
# job's interface (its veth address: the interface reaching the store) and
# nowhere else: not on loopback, not on the other interface.
#
#   two_hosts_listeners.sh DTRUN LISTENERS_CHECK
#
# Exits 0 when that holds, 77 (skipped) where namespaces cannot be created,
# 1 otherwise, with each node's output.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 DTRUN LISTENERS_CHECK" >&2
  exit 2
fi
DTRUN=$1
CHECK=$2
PORT=29500
source "$(dirname "${BASH_SOURCE[0]}")/hosts.sh"
# The job's places come from dtrun alone, its network from the library.
unset DTRAIN_RANK DTRAIN_WORLD_SIZE DTRAIN_LOCAL_RANK DTRAIN_STORE DTRAIN_STORE_BIND RANK WORLD_SIZE LOCAL_RANK \
  MASTER_ADDR MASTER_PORT DTRAIN_NET_IFNAME UCX_TLS UCX_NET_DEVICES

# The second interfaces go with their namespaces.
for side in A B; do
  ns=NS_$side
  ip -n "${!ns}" link add "dtx$side$$" type veth peer name "dty$side$$"
  ip -n "${!ns}" addr add "10.214.$([[ $side == A ]] && echo 1 || echo 2).1/24" dev "dtx$side$$"
  ip -n "${!ns}" link set "dtx$side$$" up
  ip -n "${!ns}" link set "dty$side$$" up
done
echo "hosts: $NS_A ($VETH_A $ADDR_A, dtxA$$ 10.214.1.1) and $NS_B ($VETH_B $ADDR_B, dtxB$$ 10.214.2.1)"

run_nodes listeners "$CHECK" --allow "$ADDR_A,$ADDR_B"
show listeners
listening=$(cat "$WORK/listeners.0" "$WORK/listeners.1" | grep -cE '^\[[0-3]\] rank [0-3] listens on ' || true)
if ((STATUS_0 != 0 || STATUS_1 != 0 || listening == 0)); then
  echo "FAILED: expected both dtruns to exit 0 with every rank listening on its veth address only" \
    "(statuses $STATUS_0 $STATUS_1, $listening listeners seen)"
  exit 1
fi
echo "ok: a two-host job's ranks listen only on the interface that reaches the store"
