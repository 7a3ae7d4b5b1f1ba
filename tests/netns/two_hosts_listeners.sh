#!/usr/bin/env bash
# Where a multi-host job listens: one dtrun per network namespace (see
# hosts.sh), two ranks each, with no UCX_* variables set. Each namespace also
# has loopback and, where the kernel offers dummy interfaces, a second
# interface with an address of its own, as a machine's other networks. While
# their communicator is up, every rank's listening TCP sockets must be on the
# job's interface (its veth address: the interface reaching the store) and
# nowhere else: not on loopback, not on the other interface. A third
# namespace, NS_C, at the far end of NS_A's second interface, is a machine
# outside the job that can route to NS_A's veth address: while the ranks
# hold their communicators, a connection from NS_B (a host of the job) to
# each of node 0's listeners must succeed, and one from NS_C must not.
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

NS_C=dtC-$$
OUTSIDER=10.214.1.2
# cleanup (hosts.sh) takes the script's status from $?, and errexit must not
# stop the handler first.
trap 'status=$?; ip netns del "$NS_C" 2>/dev/null || true; set +e; (exit $status); cleanup' EXIT
ip netns add "$NS_C" || skip "ip netns add $NS_C failed"
ip -n "$NS_C" link set lo up
# NS_A's second interface leads to the outsider; NS_B's to nowhere. The
# other namespaces go with their interfaces.
ip -n "$NS_A" link add "dtxA$$" type veth peer name "dtyA$$" netns "$NS_C"
ip -n "$NS_A" addr add 10.214.1.1/24 dev "dtxA$$"
ip -n "$NS_C" addr add "$OUTSIDER/24" dev "dtyA$$"
ip -n "$NS_B" link add "dtxB$$" type veth peer name "dtyB$$"
ip -n "$NS_B" addr add 10.214.2.1/24 dev "dtxB$$"
for link in "$NS_A dtxA$$" "$NS_C dtyA$$" "$NS_B dtxB$$" "$NS_B dtyB$$"; do
  read -r ns dev <<<"$link"
  ip -n "$ns" link set "$dev" up
done
ip -n "$NS_C" route add "$ADDR_A/32" via 10.214.1.1
echo "hosts: $NS_A ($VETH_A $ADDR_A, dtxA$$ 10.214.1.1) and $NS_B ($VETH_B $ADDR_B, dtxB$$ 10.214.2.1);" \
  "outsider $NS_C ($OUTSIDER, routed to $ADDR_A)"

# reaches NS PORT: whether a TCP connection from NS to ADDR_A:PORT is made within 2 s.
reaches() { timeout 2 ip netns exec "$1" bash -c "exec 3<>/dev/tcp/$ADDR_A/$2" 2>/dev/null; }

# Once node 0's ranks have listed their listeners, tries each from NS_B and
# NS_C, writes the outcomes to $WORK/probes, then lets the ranks finish.
probe() {
  local ports=() port
  for _ in $(seq 300); do
    mapfile -t ports < <(grep -oE "^\[[01]\] rank [01] listens on $ADDR_A port [0-9]+" "$WORK/listeners.0" 2>/dev/null |
      awk '{print $NF}')
    ((${#ports[@]} >= 2)) && grep -qE '^\[1\] rank 1: ' "$WORK/listeners.0" && grep -qE '^\[0\] rank 0: ' "$WORK/listeners.0" &&
      break
    sleep 0.1
  done
  for port in "${ports[@]}"; do
    if reaches "$NS_B" "$port"; then echo "job host $ADDR_B -> port $port: connected"; else echo "job host $ADDR_B -> port $port: no answer"; fi
    if reaches "$NS_C" "$port"; then echo "outsider $OUTSIDER -> port $port: connected"; else echo "outsider $OUTSIDER -> port $port: no answer"; fi
  done >"$WORK/probes"
  touch "$WORK/release"
}

probe &
prober=$!
run_nodes listeners "$CHECK" --allow "$ADDR_A,$ADDR_B" --hold "$WORK/release"
wait "$prober" || true
show listeners
cat "$WORK/probes" 2>/dev/null || true
failed=0
listening=$(cat "$WORK/listeners.0" "$WORK/listeners.1" | grep -cE '^\[[0-3]\] rank [0-3] listens on ' || true)
if ((STATUS_0 != 0 || STATUS_1 != 0 || listening == 0)); then
  echo "FAILED: expected both dtruns to exit 0 with every rank listening on its veth address only" \
    "(statuses $STATUS_0 $STATUS_1, $listening listeners seen)"
  failed=1
fi
inside=$(grep -c "^job host .*: connected$" "$WORK/probes" || true)
outside=$(grep -c "^outsider .*: connected$" "$WORK/probes" || true)
if ((inside < 2 || outside != 0)); then
  echo "FAILED: expected node 0's listeners (2 or more) to take connections from the job's hosts alone" \
    "($inside from $ADDR_B, $outside from $OUTSIDER)"
  failed=1
fi
((failed == 0)) || exit 1
echo "ok: a two-host job's ranks listen only on the interface that reaches the store, for the job's hosts only"
