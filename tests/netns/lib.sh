# lib.sh: helpers for tests that build real networks out of Linux network namespaces
# joined by veth pairs, run `fabtop serve` and `fabtop run` inside them, and clean up.
# Sourced by the netns_*.sh tests. Without root (or without netns support) they skip (77).

set -u
FABTOP=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
NSP="ft$$"                      # namespace name prefix, unique per test process
TMP=$(mktemp -d /tmp/fabtop-netns.XXXXXX)
PIDS=""
NSS=""

cleanup() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    for n in $NSS; do ip netns del "$n" 2>/dev/null; done
    [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "PASS: $*"; }

need_netns() {
    [ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
    command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
    command -v python3 >/dev/null || skip "python3 is not installed (JSON checks)"
    ip netns add "${NSP}-probe" 2>/dev/null || skip "cannot create a network namespace here"
    ip netns del "${NSP}-probe"
}

# mkns NAME: a namespace with loopback up.
mkns() {
    ip netns add "$NSP-$1" || fail "ip netns add $NSP-$1"
    NSS="$NSS $NSP-$1"
    ip -n "$NSP-$1" link set lo up
}

# nsx NAME CMD...: run a command inside namespace NAME.
nsx() { n=$1; shift; ip netns exec "$NSP-$n" "$@"; }

# link A IFA B IFB: a veth pair, IFA in A and IFB in B, both up.
link() {
    ip link add "$2" netns "$NSP-$1" type veth peer name "$4" netns "$NSP-$3" ||
        fail "veth $1/$2 - $3/$4"
    ip -n "$NSP-$1" link set "$2" up
    ip -n "$NSP-$3" link set "$4" up
}

addr() { ip -n "$NSP-$1" addr add "$3" dev "$2"; }

# A pre-shared key both sides use.
mkkey() {
    "$FABTOP" serve --gen-key "$TMP/key" >/dev/null || fail "fabtop serve --gen-key"
    echo "$TMP/key"
}

# serve NS ADDR LOG [ARGS...]: start `fabtop serve` in a namespace; waits until it listens.
serve() {
    ns=$1 a=$2 log=$3
    shift 3
    ip netns exec "$NSP-$ns" "$FABTOP" serve --listen "$a:7470" --key-file "$TMP/key" "$@" \
        >"$log" 2>&1 &
    SERVE_PID=$!
    PIDS="$PIDS $SERVE_PID"
    wait_for "agent in $ns listening on $a" "nsx $ns sh -c 'ss -ltn | grep -qF \"$a:7470\"'"
}

# wait_for WHAT CMD [SECONDS]: poll CMD every 50 ms until it succeeds.
wait_for() {
    what=$1 cmd=$2 limit=${3:-10}
    end=$(($(date +%s) + limit))
    while ! eval "$cmd" >/dev/null 2>&1; do
        [ "$(date +%s)" -ge "$end" ] && fail "timed out waiting for $what"
        sleep 0.05
    done
}

now() { date +%s.%N; }

# json FILE PYTHON-EXPR: evaluate a Python expression over the results document `r`.
json() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
PY
}

# incast_topology NET: four senders s1..s4 (NET.11-14) and a receiver r (NET.1, eth0) on
# one bridge in a "switch" namespace sw, whose port towards the receiver (pr) is the
# bottleneck: htb at RATE_MBIT (default 100) with a small byte-limited bfifo leaf (veth
# itself never pushes back, so the queue must live in a qdisc); a `fabtop serve` agent in
# each sender, logging to $TMP/serveI.log. NET is the first three octets ("10.78.0").
incast_topology() {
    inet=$1
    mkns r
    mkns sw
    nsx sw ip link add br0 type bridge
    nsx sw ip link set br0 up
    link r eth0 sw pr
    addr r eth0 "$inet.1/24"
    nsx sw ip link set pr master br0
    for i in 1 2 3 4; do
        mkns "s$i"
        link "s$i" eth0 sw "p$i"
        addr "s$i" eth0 "$inet.1$i/24"
        nsx sw ip link set "p$i" master br0
    done
    nsx sw tc qdisc add dev pr root handle 1: htb default 10 r2q 100
    nsx sw tc class add dev pr parent 1: classid 1:10 htb rate "${RATE_MBIT:-100}mbit" \
        ceil "${RATE_MBIT:-100}mbit"
    nsx sw tc qdisc add dev pr parent 1:10 handle 10: bfifo limit 96000
    mkkey >/dev/null
    for i in 1 2 3 4; do serve "s$i" "$inet.1$i" "$TMP/serve$i.log"; done
}
