#!/bin/sh
# netns_faults: bounded failure detection. A peer agent killed mid-run, and the veth link
# set down mid-run (for a ping-pong, a sending stream and a receiving stream), are each
# detected within the mix's bound (2 s), the flow is marked failed with the reason, and
# the results file is still written with the data measured before the fault.
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
