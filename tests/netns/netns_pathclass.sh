#!/bin/sh
# netns_pathclass: the path's class from evidence load cannot fake. A client c and a peer p
# (`fabtop serve`) joined through a router namespace rt that forwards every packet through a
# user-space delay line over two TUN devices (tun_delay.py; this kernel has no netem):
#   DELAY 4 ms each way: a quiet minimum RTT above 8 ms and 2 router hops -> "wan", with the
#     rule's warning for the tp flow, the peer's --site label recorded;
#   no delay: 2 router hops, a short RTT -> "site", no warning; with a sites file (--sites)
#     placing the ends in two sites -> "wan" (this host's label from the file, the agent's
#     own --site kept; then an agent without one placed by the file too), in one -> "site";
#   the same client against a loopback peer -> "host".
# (A heavily loaded rack path staying "leaf" is netns_queue's check: every run there.)
. "$(dirname "$0")/lib.sh"
need_netns
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
mkns c
mkns p
mkns rt
link c eth0 rt ea
link p eth0 rt eb
addr c eth0 10.82.1.2/24
addr rt ea 10.82.1.1/24
addr p eth0 10.82.2.2/24
addr rt eb 10.82.2.1/24
nsx c ip route add default via 10.82.1.1
nsx p ip route add default via 10.82.2.1
nsx rt sysctl -qw net.ipv4.ip_forward=1
# Packets come back out of the tuns with sources routed elsewhere: no reverse-path filter
# (new namespaces start at 0; set it, as the doctor's tests do).
for k in all default ea eb; do nsx rt sysctl -qw "net.ipv4.conf.$k.rp_filter=0"; done
nsx rt ip tuntap add mode tun name tunA || skip "cannot create a TUN device"
nsx rt ip tuntap add mode tun name tunB
nsx rt ip link set tunA up
nsx rt ip link set tunB up
for k in tunA tunB; do nsx rt sysctl -qw "net.ipv4.conf.$k.rp_filter=0"; done
# c -> p: in at ea, out through tunA; the relay writes it into tunB, the main table sends it
# to p. p -> c: in at eb, out through tunB, back in at tunA, to c.
nsx rt ip rule add iif ea lookup 100
nsx rt ip route add default dev tunA table 100
nsx rt ip rule add iif eb lookup 101
nsx rt ip route add default dev tunB table 101

relay() { # DELAY_MS
    [ -n "${RELAY_PID:-}" ] && kill "$RELAY_PID" 2>/dev/null && wait "$RELAY_PID" 2>/dev/null
    # ip netns exec execs the relay: $! is its own PID, to kill by.
    ip netns exec "$NSP-rt" python3 "$(dirname "$0")/tun_delay.py" tunA tunB "$1" &
    RELAY_PID=$!
    PIDS="$PIDS $RELAY_PID"
    wait_for "the relay (${1} ms) on the TUN devices" \
        "nsx rt sh -c 'ip link show tunA | grep -q LOWER_UP && ip link show tunB | grep -q LOWER_UP'"
}

mkkey >/dev/null
relay 4
serve p 10.82.2.2 "$TMP/serve.log" --site far
cat >"$TMP/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "pathclass-test",
 "phases": ["quiet", "loaded"],
 "flows": [
  {"name": "allreduce", "class": "tp", "op": "pingpong", "size": 4096, "warmup_s": 0.3, "duration_s": 1.5, "peer": "10.82.2.2"},
  {"name": "kv", "class": "kv", "role": "background", "op": "stream", "size": "64KiB", "warmup_s": 0.3, "peer": "10.82.2.2"}
 ]}
J

# check WANT WARN(0|1) [run options...]
check() {
    want=$1 warn=$2
    shift 2
    nsx c "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/key" -o "$TMP/res.json" "$@" \
        >"$TMP/run.out" 2>&1 || { cat "$TMP/run.out"; fail "fabtop run exited $?"; }
    sed -n '/^Path:/,/^$/p' "$TMP/run.out"
    python3 - "$TMP/res.json" "$want" "$warn" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["path"]
want, warn = sys.argv[2], sys.argv[3] == "1"
bad = []
if p["class"] != want:
    bad.append("class %s, expected %s (%s)" % (p["class"], want, p["evidence"]))
if want != "host" and p.get("hops") != 2:
    bad.append("hops %s, expected 2 through the router (ttl %s)" % (p.get("hops"), p.get("ttl")))
w = [x for x in p["warnings"] if "keep tightly coupled ranks inside one validated site" in x]
if warn != bool(w):
    bad.append("warnings %s" % p["warnings"])
print("min RTT %.1f us, hops %s" % (p["min_rtt_us"], p.get("hops")))
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
}

# No --site here: the distance alone decides (the agent's label is recorded beside; labels
# that differ are path_class's unit test).
check wan 1 || fail "4 ms each way"
python3 - "$TMP/res.json" <<'PY' || fail "site labels"
import json, sys
p = json.load(open(sys.argv[1]))["path"]
assert "site_local" not in p and p["site_peer"] == "far", p
assert p["min_rtt_us"] > 8000 and "farther than one site" in p["evidence"], p
PY
grep -q "WARNING: flow allreduce (class tp)" "$TMP/run.out" || fail "no warning in the summary"
pass "4 ms each way: wan, the tp flow warned"

relay 0
check site 0 || fail "no delay"
pass "no delay: site"

# A sites file (--sites): an end without --site takes its address's site. The agent keeps its
# own label (far); this host's comes from the file: two sites, so wide area however near.
printf '# the test fabric\neast 10.82.1.0/24\nwest 10.82.2.0/24 # the peer\n' >"$TMP/sites"
check wan 1 --sites "$TMP/sites" || fail "sites file, the agent labelled"
python3 - "$TMP/res.json" "$TMP/sites" <<'PY' || fail "sites file: the labels"
import json, sys
p = json.load(open(sys.argv[1]))["path"]
assert p["site_local"] == "east" and p["site_peer"] == "far", p
assert p["site_from"] == sys.argv[2] + ": this host 10.82.1.2 in 10.82.1.0/24", p
PY
grep -q "from the sites file $TMP/sites: this host 10.82.1.2 in 10.82.1.0/24" "$TMP/run.out" ||
    fail "sites file: the summary does not say where the label came from"
pass "sites file: this host in east, the agent's own label far: wan"
# The agent again without a label: the file places it too.
kill "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
serve p 10.82.2.2 "$TMP/serve2.log"
check wan 1 --sites "$TMP/sites" || fail "sites file, two sites"
python3 - "$TMP/res.json" <<'PY' || fail "sites file: both labels"
import json, sys
p = json.load(open(sys.argv[1]))["path"]
assert p["site_local"] == "east" and p["site_peer"] == "west", p
assert p["site_from"].endswith(": this host 10.82.1.2 in 10.82.1.0/24, the peer 10.82.2.2 in 10.82.2.0/24"), p
PY
printf 'hall 10.82.0.0/16\n' >"$TMP/sites1"
check site 0 --sites "$TMP/sites1" || fail "sites file, one site"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["path"]; sys.exit(0 if p["site_local"] == p["site_peer"] == "hall" else 1)' \
    "$TMP/res.json" || fail "sites file: one site's labels"
pass "sites file: east against west wan, one hall site"

sed 's/"peer": "10.82.2.2"/"peer": "loopback"/g' "$TMP/mix.json" >"$TMP/mix.lo" && mv "$TMP/mix.lo" "$TMP/mix.json"
check host 0 || fail "loopback"
pass "loopback: host"
