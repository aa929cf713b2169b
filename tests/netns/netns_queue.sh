#!/bin/sh
# netns_queue: "where is the queue?" on a client c and a peer p (`fabtop serve`) joined by a
# bridge in a switch namespace sw, with an htb bottleneck (RATE_MBIT, a small bfifo leaf)
# in one of three places, and TCP streams filling it while a ping-pong probe measures:
#   between: on the bridge's port towards c, the peer streaming to c -> "between" (neither
#            end's qdisc held more than a few packets while the probe's srtt rose);
#   local:   on c's own eth0, c streaming to p -> "local" (this host's qdisc);
#   peer:    on p's own eth0, p streaming to c -> "peer" (the agent's own counters).
# Each run is also a rack path: classed "leaf" from its quiet minimum RTT and TTL (no
# router), however much the loaded phase queued.
. "$(dirname "$0")/lib.sh"
need_netns
command -v tc >/dev/null || skip "tc (iproute2) is not installed"
RATE_MBIT=${RATE_MBIT:-50}
inet=10.81.0
mkns c
mkns p
mkns sw
nsx sw ip link add br0 type bridge
nsx sw ip link set br0 up
link c eth0 sw pc
link p eth0 sw pp
nsx sw ip link set pc master br0
nsx sw ip link set pp master br0
addr c eth0 "$inet.1/24"
addr p eth0 "$inet.2/24"
mkkey >/dev/null
serve p "$inet.2" "$TMP/serve.log"

htb() { # NS DEV
    nsx "$1" tc qdisc add dev "$2" root handle 1: htb default 10 r2q 50
    nsx "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate "${RATE_MBIT}mbit" \
        ceil "${RATE_MBIT}mbit"
    nsx "$1" tc qdisc add dev "$2" parent 1:10 handle 10: bfifo limit 150000
}
unhtb() { nsx "$1" tc qdisc del dev "$2" root 2>/dev/null; }

mix() { # DIRECTION
    cat >"$TMP/mix.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "queue-test",
 "phases": ["quiet", "loaded"],
 "flows": [
  {"name": "probe", "op": "pingpong", "size": 256, "warmup_s": 0.3, "duration_s": 2, "peer": "$inet.2"},
  {"name": "bulk", "role": "background", "op": "stream", "direction": "$1", "size": "64KiB",
   "concurrency": 4, "warmup_s": 0.5, "peer": "$inet.2"}
 ]}
J
}

# check WANT: one run, its path object checked.
check() {
    nsx c "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/key" -o "$TMP/res.json" \
        >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "fabtop run exited $?"; }
    sed -n '/^Path:/,/^$/p' "$TMP/run.out"
    python3 - "$TMP/res.json" "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["path"]
want = sys.argv[2]
bad = []
if p["queue"] != want:
    bad.append("queue %s, expected %s (%s)" % (p["queue"], want, p["verdict"]))
if p["class"] != "leaf":
    bad.append("class %s, expected leaf (%s)" % (p["class"], p["evidence"]))
if p.get("hops") != 0:
    bad.append("hops %s, expected 0 (ttl %s)" % (p.get("hops"), p.get("ttl")))
if "peer" not in p:
    bad.append("the peer's counters are missing")
rtt = p["transport_rtt"]
print("srtt quiet %s us, loaded %s us; min RTT %.1f us" % (rtt["quiet"]["median_us"],
      rtt["loaded"]["median_us"], p["min_rtt_us"]))
if p["min_rtt_us"] > 2000:
    bad.append("quiet minimum RTT %.1f us is no rack path's" % p["min_rtt_us"])
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
}

# between: the bridge's egress towards c; p sends to c (rx at c).
htb sw pc
mix rx
check between || fail "queue between the ends"
unhtb sw pc
pass "a switch egress between the ends: between"

# local: c's own egress; c sends to p.
htb c eth0
mix tx
check local || fail "queue on this host"
unhtb c eth0
pass "this host's qdisc: local"

# peer: p's own egress; p sends to c.
htb p eth0
mix rx
check peer || fail "queue at the peer"
unhtb p eth0
pass "the peer's qdisc: peer"
