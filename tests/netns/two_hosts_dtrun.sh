#!/usr/bin/env bash
# dtrun across two hosts: one dtrun per network namespace (see hosts.sh),
# node 0 in NS_A hosting the store on its veth address, node 1 in NS_B, two
# ranks each, UCX over TCP across the veth pair.
#
#   two_hosts_dtrun.sh DTRUN RANK_PROBE
#
# 1. The rank probe as a 4-rank job: both dtruns exit 0, every rank reports
#    agreement, and traffic crossed the veth pair.
# 2. A fault: rank 3 (on node 1) is killed while the others wait. Both
#    dtruns must end within seconds (not at the ranks' deadline), with
#    status 137, node 1 naming the rank and node 0 naming node 1's failure.
# Exits 0 when both hold, 77 (skipped) where namespaces cannot be created,
# 1 otherwise, with each node's output.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 DTRUN RANK_PROBE" >&2
  exit 2
fi
DTRUN=$1
PROBE=$2
PORT=29500
source "$(dirname "${BASH_SOURCE[0]}")/hosts.sh"
echo "hosts: $NS_A ($VETH_A $ADDR_A: node 0, ranks 0, 1) and $NS_B ($VETH_B $ADDR_B: node 1, ranks 2, 3)"
# The job's places come from dtrun alone.
unset DTRAIN_RANK DTRAIN_WORLD_SIZE DTRAIN_LOCAL_RANK DTRAIN_STORE DTRAIN_STORE_BIND RANK WORLD_SIZE LOCAL_RANK \
  MASTER_ADDR MASTER_PORT

# Each node's ranks talk TCP, over the veth pair alone.
node_env() { printf '%s\n' UCX_TLS=tcp,self "UCX_NET_DEVICES=$2" DTRAIN_UCX_LOCAL_BYTES=0; }

failed=0

tx0=$(counter tx_bytes)
run_nodes probe "$PROBE"
crossed=$(($(counter tx_bytes) - tx0))
echo "probe: node statuses $STATUS_0 $STATUS_1 in ${ELAPSED} s; $crossed bytes A->B"
agreed=$(cat "$WORK/probe.0" "$WORK/probe.1" | grep -cE '^\[[0-3]\] rank [0-3] of 4 agrees$' || true)
if ((STATUS_0 != 0 || STATUS_1 != 0 || agreed != 4 || crossed == 0)); then
  echo "probe: FAILED (expected both dtruns to exit 0 and 4 ranks to agree across the veth pair)"
  show probe
  failed=1
fi

# Rank 3 dies once every rank has started; the others would wait 30 s.
run_nodes fault sh -c '[ "$RANK" = 3 ] && { sleep 1; kill -KILL $$; }; exec sleep 30'
echo "fault: node statuses $STATUS_0 $STATUS_1 in ${ELAPSED} s"
if ((STATUS_0 != 137 || STATUS_1 != 137 || ELAPSED > 15)) ||
   ! grep -q "^dtrun: rank 3 was killed by SIGKILL; stopping the other ranks" "$WORK/fault.1" ||
   ! grep -q "^dtrun: node 1: rank 3 was killed by SIGKILL; stopping the ranks on this node" "$WORK/fault.0"; then
  echo "fault: FAILED (expected both dtruns to end promptly with 137, naming rank 3)"
  show fault
  failed=1
fi

if ((failed)); then
  echo "FAILED: dtrun across two hosts"
  exit 1
fi
show fault
echo "ok: one dtrun per host forms a 4-rank job, and a rank killed on one host ends the job on both"
