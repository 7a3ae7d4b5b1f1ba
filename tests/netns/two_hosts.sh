#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair, with
# ranks 0 and 2 in the first and ranks 1 and 3 in the second (a world of 4, so
# that every edge of the ring crosses between the "hosts"). The ranks find
# each other the torchrun way: rank 0 runs the rendezvous store on its veth
# address (DTRAIN_STORE_BIND) and the others connect to it (MASTER_ADDR); the
# collectives then run over UCX's TCP transport across the veth pair. The
# veth's byte counters, read before and after each job, show that the data
# really crossed.
#
#   two_hosts.sh RANK_PROBE COLLECTIVES_CHECK
#
# Runs the rank probe, then the collectives check with 1<<18 float32
# elements per rank (above the 64 KiB small-message threshold, so the ring and
# pipeline algorithms run). Exits 0 when every rank of both jobs exits 0 in
# time and the traffic crossed; 77 (skipped) where network namespaces cannot
# be created; 1 otherwise, with each rank's output prefixed by [rank R].
#
# Environment:
#   NETNS_ELEMENTS        elements per rank for the collectives check (262144)
#   NETNS_RANK_TIMEOUT_S  wall-clock limit of every rank process (75)
#   NETNS_VERBOSE         non-empty: print every rank's output, not only on failure
#   NETNS_BREAK           to check that the test can fail: "token" gives
#                         rank 3 a wrong DTRAIN_AUTH_TOKEN
#
# Only the namespaces and the veth pair made here carry traffic; their names
# carry this shell's pid, and a trap removes them however the script ends.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 RANK_PROBE COLLECTIVES_CHECK" >&2
  exit 2
fi
PROBE=$1
CHECK=$2
for program in "$PROBE" "$CHECK"; do
  if [[ ! -x $program ]]; then
    echo "error: $program is not an executable" >&2
    exit 2
  fi
done

ELEMENTS=${NETNS_ELEMENTS:-262144}
RANK_TIMEOUT_S=${NETNS_RANK_TIMEOUT_S:-75}
WORLD=4
PORT=29500                    # free by construction: the namespaces are new
# The namespaces, their cleanup and the job secret.
source "$(dirname "${BASH_SOURCE[0]}")/hosts.sh"
echo "hosts: $NS_A ($VETH_A $ADDR_A: ranks 0, 2) and $NS_B ($VETH_B $ADDR_B: ranks 1, 3)"

# Whatever launched this script must not decide the ranks' places in the job.
unset DTRAIN_RANK DTRAIN_WORLD_SIZE DTRAIN_LOCAL_RANK DTRAIN_STORE DTRAIN_STORE_BIND

# --- one job: WORLD ranks, alternating between the hosts -------------------------
# run_job NAME MIN_BYTES_EACH_WAY PROGRAM [ARGS...]: returns 0 when every rank
# exited 0 and at least MIN_BYTES_EACH_WAY crossed the veth in each direction.
run_job() {
  local name=$1 min_bytes=$2
  shift 2
  local -a rc=()
  local -a bind=()
  local r ns dev token first_failure=-1
  local tx0 rx0 tx1 rx1 started elapsed_ms elapsed
  tx0=$(counter tx_bytes)
  rx0=$(counter rx_bytes)
  started=$(date +%s%N)
  for ((r = 0; r < WORLD; ++r)); do
    if ((r % 2 == 0)); then ns=$NS_A dev=$VETH_A; else ns=$NS_B dev=$VETH_B; fi
    token=$TOKEN
    [[ ${NETNS_BREAK:-} == token && $r == 3 ]] && token=${TOKEN}x
    bind=()
    ((r == 0)) && bind=(DTRAIN_STORE_BIND="$ADDR_A")
    # UCX: TCP over the veth only (UCX_NET_DEVICES), plus self for a rank's
    # own messages. Shared memory is left out on purpose, UCX's and
    # libdtrain's mailboxes (DTRAIN_UCX_LOCAL_BYTES=0): the namespaces share
    # the kernel, /dev/shm, /proc and the boot id, so both would take the
    # ranks for neighbours on one host and bypass the veth.
    timeout -k 5 "$RANK_TIMEOUT_S" \
      ip netns exec "$ns" env \
      RANK=$r WORLD_SIZE=$WORLD LOCAL_RANK=$((r / 2)) \
      MASTER_ADDR=$ADDR_A MASTER_PORT=$PORT "${bind[@]}" \
      DTRAIN_AUTH_TOKEN="$token" DTRAIN_TIMEOUT_MS=60000 \
      UCX_TLS=tcp,self UCX_NET_DEVICES="$dev" DTRAIN_UCX_LOCAL_BYTES=0 \
      "$@" >"$WORK/$name.$r" 2>&1 &
    RANK_OF[$!]=$r
  done
  # As dtrun does: the first rank to fail stops the others. (Polled: bash's
  # `wait -n` loses children that end together.)
  local pid status
  while ((${#RANK_OF[@]})); do
    for pid in "${!RANK_OF[@]}"; do
      kill -0 "$pid" 2>/dev/null && continue # running, or not yet reaped
      status=0
      wait "$pid" || status=$?
      r=${RANK_OF[$pid]}
      unset "RANK_OF[$pid]"
      rc[r]=$status
      if ((status != 0 && first_failure < 0)); then
        first_failure=$r
        if ((${#RANK_OF[@]})); then kill -TERM "${!RANK_OF[@]}" 2>/dev/null || true; fi
      fi
    done
    ((${#RANK_OF[@]})) && sleep 0.05
  done
  elapsed_ms=$((($(date +%s%N) - started) / 1000000))
  tx1=$(counter tx_bytes)
  rx1=$(counter rx_bytes)
  local a_to_b=$((tx1 - tx0)) b_to_a=$((rx1 - rx0))

  local ok=1
  for ((r = 0; r < WORLD; ++r)); do
    if [[ ${rc[r]:-?} != 0 ]]; then
      ok=0
      case ${rc[r]:-?} in
        124 | 137) echo "$name: rank $r did not finish within ${RANK_TIMEOUT_S}s (status ${rc[r]})" ;;
        *)
          if ((first_failure == r)); then
            echo "$name: rank $r exited with status ${rc[r]:-?} (the first to fail; the others were stopped)"
          else
            echo "$name: rank $r exited with status ${rc[r]:-?}"
          fi
          ;;
      esac
    fi
  done
  printf -v elapsed '%d.%03d' $((elapsed_ms / 1000)) $((elapsed_ms % 1000))
  echo "$name: $elapsed s; veth $VETH_A<->$VETH_B: $a_to_b bytes A->B, $b_to_a bytes B->A (required: $min_bytes each way)"
  if ((ok)) && ((a_to_b < min_bytes || b_to_a < min_bytes)); then
    echo "$name: too little traffic crossed the veth pair: the ranks did not talk across the hosts"
    ok=0
  fi
  RESULT_OK=$ok
  if ((!ok)) || [[ -n ${NETNS_VERBOSE:-} ]]; then
    for ((r = 0; r < WORLD; ++r)); do
      sed "s/^/[rank $r] /" "$WORK/$name.$r"
    done
  fi
  return 0
}

failed=0

# The probe: an allgather of two int32 per rank. Little data, but the store's
# traffic and UCX's connection setup must cross.
run_job probe 1 "$PROBE"
if ((RESULT_OK)); then
  for ((r = 0; r < WORLD; ++r)); do
    if ! grep -qx "rank $r of $WORLD agrees" "$WORK/probe.$r"; then
      echo "probe: rank $r did not report agreement"
      sed "s/^/[rank $r] /" "$WORK/probe.$r"
      RESULT_OK=0
    fi
  done
fi
((RESULT_OK)) || failed=1

# The collectives check. What must cross between the hosts, whatever the
# algorithms, with N = ELEMENTS * 4 bytes: alltoall sends each rank's two
# blocks for the other host across (4N each way), allgather brings each
# host the other's 2 contributions (2N), reduce_scatter each host's two
# reduced blocks (2N), allreduce the other host's partial sum (N): 9N each
# way at least (the ring moves about 20N).
if ((!failed)); then
  min_bytes=$((9 * ELEMENTS * 4))
  run_job collectives "$min_bytes" "$CHECK" "$ELEMENTS"
  if ((RESULT_OK)); then
    for ((r = 0; r < WORLD; ++r)); do
      if ! grep -qx "rank $r: all collectives correct" "$WORK/collectives.$r"; then
        echo "collectives: rank $r did not report correct results"
        sed "s/^/[rank $r] /" "$WORK/collectives.$r"
        RESULT_OK=0
      fi
    done
  fi
  ((RESULT_OK)) || failed=1
  # Rank 0's table of timings (all of every rank's output when verbose).
  if ((RESULT_OK)) && [[ -z ${NETNS_VERBOSE:-} ]]; then sed 's/^/[rank 0] /' "$WORK/collectives.0"; fi
fi

if ((failed)); then
  echo "FAILED: two hosts over a veth pair"
  exit 1
fi
echo "ok: 4 ranks on two hosts agree and every collective is correct over TCP across the veth pair"
