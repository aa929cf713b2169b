#!/bin/sh
# netns_faults: bounded failure detection. A peer agent killed mid-run, and the veth link
# set down mid-run (for a ping-pong, a sending stream and a receiving stream), are each
# detected within the mix's bound (2 s), the flow is marked failed with the reason, and
# the results file is still written with the data measured before the fault. A stream starved
# while a probe to the same peer still moves fails within the bound too, its reason saying
# that the peer is up.
. "$(dirname "$0")/lib.sh"
need_netns
BOUND=2.0
mkns a
mkns b
link a va b vb
addr a va 10.79.0.1/24
addr b vb 10.79.0.2/24
mkkey >/dev/null

mix() { # NAME OP DIRECTION
    cat >"$TMP/$1.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "fail_bound_s": $BOUND,
 "flows": [{"name": "$1", "op": "$2", "direction": "$3", "size": 4096,
            "warmup_s": 0.2, "duration_s": 20}]}
J
}

# case NAME OP DIR FAULT: run, inject FAULT ("kill" or "down") mid-run, check detection.
case_() {
    name=$1 op=$2 dir=$3 fault=$4
    ip -n "$NSP-b" link set vb up
    # The previous case's dead link left FAILED neighbour entries (EHOSTUNREACH): forget them.
    ip -n "$NSP-a" neigh flush dev va
    ip -n "$NSP-b" neigh flush dev vb
    wait_for "link up" "nsx a grep -qx up /sys/class/net/va/operstate"
    serve b 10.79.0.2 "$TMP/$name.serve.log"
    mix "$name" "$op" "$dir"
    nsx a "$FABTOP" run --mix "$TMP/$name.json" --peer 10.79.0.2 --key-file "$TMP/key" \
        -o "$TMP/$name.res.json" >"$TMP/$name.out" 2>&1 &
    run=$!
    wait_for "the flow's data connection ($(cat $TMP/$name.out $TMP/$name.serve.log 2>/dev/null | tr '\n' ' '))" "grep -q 'tcp:' '$TMP/$name.serve.log'"
    sleep 1.5 # into the measure window
    t_fault=$(now)
    if [ "$fault" = kill ]; then
        kill -9 "$SERVE_PID"
    else
        ip -n "$NSP-b" link set vb down
    fi
    wait "$run"
    rc=$?
    kill -9 "$SERVE_PID" 2>/dev/null
    wait "$SERVE_PID" 2>/dev/null
    [ "$rc" -eq 2 ] || { cat "$TMP/$name.out"; fail "$name: exit status $rc, want 2 (a flow failed)"; }
    [ -s "$TMP/$name.res.json" ] || fail "$name: no results file"
    python3 - "$TMP/$name.res.json" "$t_fault" "$BOUND" "$name" <<'PY' || exit 1
import json, sys, datetime
r = json.load(open(sys.argv[1]))
t_fault, bound, name = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
f = r["phases"][0]["flows"][0]
start = datetime.datetime.strptime(r["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
    tzinfo=datetime.timezone.utc).timestamp()
detected = start + f["failed_at_run_s"] - t_fault
pt = f["points"][0]
print("%s: %s after %.3f s (bound %.1f s): %s; %d operations measured before the fault"
      % (name, f["status"], detected, bound, f["error"], pt.get("ops", 0)))
bad = []
if f["status"] != "failed":
    bad.append("status %s" % f["status"])
# started_at is rounded down to the millisecond and the run's clock and `date` are read in
# different processes, so a failure seen at once can compute a few ms below zero.
if not (-0.010 <= detected <= bound):
    bad.append("detected after %.3f s, bound %.1f s" % (detected, bound))
if not pt["measured"] or pt["complete"] or pt.get("ops", 0) <= 0:
    bad.append("the partial measurement was not kept")
if pt["measured"] and f["op"] != "stream" and (pt["latency"] or {}).get("count", 0) <= 0:
    bad.append("no latency samples kept")
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
    pass "$name"
}

case_ pingpong-peer-killed pingpong tx kill
case_ pingpong-link-down pingpong tx down
case_ stream-tx-link-down stream tx down
case_ stream-rx-link-down stream rx down
case_ stream-rx-peer-killed stream rx kill

# A flow starved while its peer is up: a ping-pong probe and a receiving stream share the
# peer; full-sized segments from the peer are dropped (nftables in a's namespace), so the
# stream's data stops while the probe's 256-byte messages still pass. The stream fails within
# the bound, and its reason says the peer is up (the probe moved), not "peer gone".
starved() {
    command -v nft >/dev/null || { echo "SKIP part: nftables (nft) is not installed"; return 0; }
    ip -n "$NSP-b" link set vb up
    wait_for "link up" "nsx a grep -qx up /sys/class/net/va/operstate"
    serve b 10.79.0.2 "$TMP/starved.serve.log"
    cat >"$TMP/starved.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "starved", "fail_bound_s": $BOUND,
 "flows": [{"name": "probe", "op": "pingpong", "size": 256, "warmup_s": 0.2, "duration_s": 6},
           {"name": "bulk", "role": "background", "op": "stream", "direction": "rx",
            "size": "64KiB", "warmup_s": 0.2}]}
J
    nsx a "$FABTOP" run --mix "$TMP/starved.json" --peer 10.79.0.2 --key-file "$TMP/key" \
        -o "$TMP/starved.res.json" >"$TMP/starved.out" 2>&1 &
    run=$!
    wait_for "the data connections" "[ \$(grep -c 'tcp:' '$TMP/starved.serve.log') -ge 2 ]"
    sleep 1.5
    t_fault=$(now)
    nsx a nft -f - <<'N' || fail "starved: nft rule"
table inet fabtop_starve {
  chain in { type filter hook input priority 0; ip saddr 10.79.0.2 meta l4proto tcp meta length > 1000 drop; }
}
N
    sleep 3
    nsx a nft delete table inet fabtop_starve
    wait "$run"
    rc=$?
    kill "$SERVE_PID" 2>/dev/null
    wait "$SERVE_PID" 2>/dev/null
    [ "$rc" -eq 2 ] || { cat "$TMP/starved.out"; fail "starved: exit status $rc, want 2"; }
    python3 - "$TMP/starved.res.json" "$t_fault" "$BOUND" <<'PY' || exit 1
import json, sys, datetime
r = json.load(open(sys.argv[1]))
t_fault, bound = float(sys.argv[2]), float(sys.argv[3])
fl = {f["name"]: f for f in r["phases"][0]["flows"]}
start = datetime.datetime.strptime(r["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
    tzinfo=datetime.timezone.utc).timestamp()
b, p = fl["bulk"], fl["probe"]
print("bulk: %s: %s" % (b["status"], b["error"]))
print("probe: %s, %d operations" % (p["status"], p["points"][0].get("ops", 0)))
bad = []
if b["status"] != "failed":
    bad.append("bulk status %s, want failed" % b["status"])
else:
    detected = start + b["failed_at_run_s"] - t_fault
    print("bulk failed %.3f s after the drop began (bound %.1f s)" % (detected, bound))
    if not (-0.010 <= detected <= bound):
        bad.append("detected after %.3f s, bound %.1f s" % (detected, bound))
    if "while probe to the same peer moved" not in (b["error"] or ""):
        bad.append("the reason does not say the peer was up")
if p["status"] != "ok":
    bad.append("probe status %s: its 256-byte messages should have passed" % p["status"])
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
    pass "stream-rx-starved (the peer up)"
}
starved
