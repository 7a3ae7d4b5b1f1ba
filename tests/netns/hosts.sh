# Sourced by the netns tests: two "hosts" on one machine, network namespaces
# NS_A (address ADDR_A) and NS_B (ADDR_B) joined by a veth pair (VETH_A,
# VETH_B), made now and removed by an EXIT trap however the test ends; exits
# 77 (skipped) where namespaces cannot be created. Also: WORK, a scratch
# folder removed likewise; RANK_OF, background pids (to their label) that the
# trap kills; counter tx_bytes|rx_bytes, bytes through NS_A's end; TOKEN, a
# fresh job secret; run_nodes and show (below). Needs `set -euo pipefail` in
# the sourcing script.
ADDR_A=10.213.0.1             # exists only inside NS_A
ADDR_B=10.213.0.2             # exists only inside NS_B
NS_A=dtA-$$
NS_B=dtB-$$
VETH_A=dtvA$$                 # at most 11 characters (IFNAMSIZ is 16)
VETH_B=dtvB$$

skip() {
  echo "skipped: cannot create network namespaces: $*"
  exit 77
}

# --- cleanup, armed before anything is created ---------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-netns.XXXXXX")
declare -A RANK_OF=()         # pid of a running rank's timeout(1) -> rank
made_a=0
made_b=0
# Ends what still runs in the namespace (it would keep the namespace alive,
# nameless), then removes it.
drop_namespace() {
  local -a pids=()
  mapfile -t pids < <(ip netns pids "$1" 2>/dev/null || true)
  if ((${#pids[@]})); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  ip netns del "$1" 2>/dev/null || echo "warning: could not delete namespace $1" >&2
}
cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  if ((${#RANK_OF[@]})); then
    kill -KILL "${!RANK_OF[@]}" 2>/dev/null || true
    wait "${!RANK_OF[@]}" 2>/dev/null || true
  fi
  if ((made_a)); then
    ip -n "$NS_A" link del "$VETH_A" 2>/dev/null || true
    drop_namespace "$NS_A"
  fi
  ((made_b)) && drop_namespace "$NS_B"
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- the two hosts -------------------------------------------------------------
command -v ip >/dev/null 2>&1 || skip "the ip command (iproute2) is not installed"
((EUID == 0)) || skip "not root (uid $EUID)"
# A run killed outright (SIGKILL: no trap runs) leaves its namespaces behind;
# remove those of runs whose shell is gone.
while read -r stale _; do
  if [[ $stale =~ ^dt[A-Z]-([0-9]+)$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null; then
    if ip netns del "$stale" 2>/dev/null; then echo "removed $stale, left behind by an earlier run"; fi
  fi
done < <(ip netns list 2>/dev/null || true)
if ! err=$(ip netns add "$NS_A" 2>&1); then
  skip "ip netns add $NS_A: ${err:-failed}"
fi
made_a=1
if ! err=$(ip netns add "$NS_B" 2>&1); then
  skip "ip netns add $NS_B: ${err:-failed}"
fi
made_b=1
# The pair is made inside NS_A with its peer placed straight into NS_B: it
# never appears in the namespace the script was started in.
if ! err=$(ip -n "$NS_A" link add "$VETH_A" type veth peer name "$VETH_B" netns "$NS_B" 2>&1); then
  skip "veth pair: ${err:-failed}"
fi
# No IPv6 on the veth: router solicitations and the like would blur the counters.
ip netns exec "$NS_A" sysctl -qw "net.ipv6.conf.$VETH_A.disable_ipv6=1" 2>/dev/null || true
ip netns exec "$NS_B" sysctl -qw "net.ipv6.conf.$VETH_B.disable_ipv6=1" 2>/dev/null || true
ip -n "$NS_A" addr add "$ADDR_A/30" dev "$VETH_A"
ip -n "$NS_B" addr add "$ADDR_B/30" dev "$VETH_B"
for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
ip -n "$NS_A" link set "$VETH_A" up
ip -n "$NS_B" link set "$VETH_B" up
# The link comes up asynchronously; wait (up to 5 s) until both ends are up.
for _ in $(seq 50); do
  state_a=$(ip netns exec "$NS_A" cat "/sys/class/net/$VETH_A/operstate" 2>/dev/null || true)
  state_b=$(ip netns exec "$NS_B" cat "/sys/class/net/$VETH_B/operstate" 2>/dev/null || true)
  [[ $state_a == up && $state_b == up ]] && break
  sleep 0.1
done

# Bytes through NS_A's end of the pair: tx is A -> B, rx is B -> A.
counter() { ip netns exec "$NS_A" cat "/sys/class/net/$VETH_A/statistics/$1"; }

# The job's secret, fresh for this run.
TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')

# --- a job across the two hosts -------------------------------------------------
# run_nodes NAME PROGRAM [ARGS...]: one dtrun per host (needs DTRUN and PORT),
# node 0 in NS_A hosting the store on ADDR_A, two ranks each, each dtrun
# limited to 60 s, output in $WORK/NAME.NODE; sets STATUS_0 and STATUS_1 and
# the seconds taken in ELAPSED. A function node_env NODE VETH, where the
# sourcing script defines one, prints extra VAR=value lines for that node.
run_nodes() {
  local name=$1 node ns dev started
  local -a extra
  shift
  started=$(date +%s)
  for node in 0 1; do
    if ((node == 0)); then ns=$NS_A dev=$VETH_A; else ns=$NS_B dev=$VETH_B; fi
    extra=()
    if declare -F node_env >/dev/null; then mapfile -t extra < <(node_env "$node" "$dev"); fi
    timeout -k 5 60 ip netns exec "$ns" env DTRAIN_AUTH_TOKEN="$TOKEN" "${extra[@]}" \
      "$DTRUN" --nnodes 2 --node-rank "$node" --nproc-per-node 2 --master-addr "$ADDR_A" --master-port "$PORT" \
      --timeout 50 --grace 2 "$@" >"$WORK/$name.$node" 2>&1 &
    RANK_OF[$!]=$node
  done
  local pid status
  for pid in "${!RANK_OF[@]}"; do
    status=0
    wait "$pid" || status=$?
    printf -v "STATUS_${RANK_OF[$pid]}" '%d' "$status"
    unset "RANK_OF[$pid]"
  done
  ELAPSED=$(($(date +%s) - started))
}

# show NAME: both nodes' output of run_nodes NAME, each line labelled.
show() {
  local node
  for node in 0 1; do sed "s/^/[node $node] /" "$WORK/$1.$node"; done
}
