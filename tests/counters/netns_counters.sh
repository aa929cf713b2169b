#!/bin/sh
# netns_counters: counters seen inside the test's own network namespaces during an incast.
# Four senders stream into one receiver through a "switch" namespace whose port towards the
# receiver is an htb class with a small bfifo leaf (a bfifo alone at the root of a veth
# never builds a queue: veth does not push back). While `fabtop run` runs in the receiver,
# `fabtop counters --watch --json` runs in the switch (qdisc backlog, drops, overlimits)
# and in each sender (TCP retransmissions from /proc/net/snmp, which is per namespace).
# Checks: the backlog is 0 before the run and builds up during it, drops and overlimits
# rise, the senders retransmit, ethtool statistics of the veth are read through the ioctl,
# and the run's results hold per-phase counter deltas for the receiver's eth0, labelled
# port-wide, that cover the bytes the flows moved. Root only (77 otherwise).
. "$FABTOP_SRC/tests/netns/lib.sh"
need_netns
RATE_MBIT=${RATE_MBIT:-100}
incast_topology 10.79.0

# ethtool statistics of a real netdev, through ETHTOOL_GSTATS (veth has a few).
nsx sw "$FABTOP" counters --ethtool --port pr --json >"$TMP/eth.json" ||
    fail "fabtop counters --ethtool exited $?"
python3 - "$TMP/eth.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
eth = [c for c in d["counters"] if c["source"] == "ethtool"]
assert eth, "no ethtool counters for the veth"
p = next(c for c in eth if c["name"] == "peer_ifindex")
assert p["kind"] == "gauge" and p["value"] > 0, p
print("ethtool: %d veth statistics, peer_ifindex %d" % (len(eth), p["value"]))
PY

# Watchers: the switch's qdiscs every 0.2 s, each sender's TCP counters every 0.5 s.
# Started by `ip netns exec` itself (it execs fabtop), not through a shell function, so
# that $! is fabtop and the kills below reach it; --count ends them after 2 minutes anyway.
ip netns exec "$NSP-sw" "$FABTOP" counters --qdisc --port pr --watch 0.2 --count 600 --json \
    >"$TMP/sw.jsonl" 2>"$TMP/sw.err" &
W="$!"
PIDS="$PIDS $!"
for i in 1 2 3 4; do
    ip netns exec "$NSP-s$i" "$FABTOP" counters --snmp --port eth0 --watch 0.5 --count 240 \
        --json >"$TMP/s$i.jsonl" 2>"$TMP/s$i.err" &
    W="$W $!"
    PIDS="$PIDS $!"
done
wait_for "the switch watcher's first frames" "[ \$(wc -l <$TMP/sw.jsonl) -ge 3 ]"
for i in 1 2 3 4; do wait_for "sender $i's watcher" "[ -s $TMP/s$i.jsonl ]"; done

cat >"$TMP/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "incast-counters",
 "phases": ["quiet", "loaded"],
 "flows": [
  {"name": "probe", "op": "pingpong", "size": 256, "warmup_s": 0.3, "duration_s": 3, "peer": "10.79.0.11"},
  {"name": "sender1", "role": "background", "op": "stream", "direction": "rx", "size": "64KiB", "warmup_s": 0.5, "peer": "10.79.0.11"},
  {"name": "sender2", "role": "background", "op": "stream", "direction": "rx", "size": "64KiB", "warmup_s": 0.5, "peer": "10.79.0.12"},
  {"name": "sender3", "role": "background", "op": "stream", "direction": "rx", "size": "64KiB", "warmup_s": 0.5, "peer": "10.79.0.13"},
  {"name": "sender4", "role": "background", "op": "stream", "direction": "rx", "size": "64KiB", "warmup_s": 0.5, "peer": "10.79.0.14"}
 ]}
J
start_lines=$(wc -l <"$TMP/sw.jsonl")
nsx r "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/key" -o "$TMP/res.json" \
    >"$TMP/run.out" 2>&1
rc=$?
end_lines=$(wc -l <"$TMP/sw.jsonl")
sleep 0.6
for p in $W; do kill -TERM "$p" 2>/dev/null; done
for p in $W; do wait "$p" 2>/dev/null; done
nsx sw tc -s qdisc show dev pr | sed 's/^/    tc: /'
[ "$rc" -eq 0 ] || { cat "$TMP/run.out"; fail "fabtop run exited $rc"; }

python3 - "$TMP" "$start_lines" "$end_lines" <<'PY' || exit 1
import json, sys, traceback
def excepthook(t, v, tb):
    traceback.print_exception(t, v, tb, file=sys.stdout)
    print("FAIL: the checks raised %s" % t.__name__)
    sys.exit(1)
sys.excepthook = excepthook
tmp, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = []
sw = [json.loads(l) for l in open(tmp + "/sw.jsonl")]
def q(frame, obj, name):
    return next(c for c in frame["counters"] if c["object"] == obj and c["name"] == name)
leaf, root = "pr qdisc 10: bfifo", "pr qdisc 1: htb"
before, during = sw[:start], sw[start:end]
print("switch frames: %d before the run, %d during it" % (len(before), len(during)))
bl = [q(f, leaf, "backlog")["value"] for f in during]
print("bfifo backlog during the run (bytes): max %d, frames with a queue %d of %d"
      % (max(bl), sum(1 for b in bl if b > 0), len(bl)))
if any(q(f, leaf, "backlog")["value"] != 0 for f in before):
    bad.append("backlog before the run should be 0")
if not max(bl) > 0:
    bad.append("the bfifo backlog never built up during the incast")
if q(sw[-1], leaf, "backlog")["peak"] < max(bl):
    bad.append("the backlog's peak since the start is below what the frames showed")
d0, d1 = q(during[0], leaf, "drops")["delta"], q(sw[-1], leaf, "drops")["delta"]
o1 = q(sw[-1], root, "overlimits")["delta"]
print("bfifo drops since the watch started: %d at the run's start, %d at its end; "
      "htb overlimits %d" % (d0, d1, o1))
if not d1 > d0:
    bad.append("qdisc drops did not rise during the run")
if not o1 > 0:
    bad.append("htb overlimits did not rise (the rate limit never held packets back)")
if q(sw[-1], leaf, "drops")["width"] != 32:
    bad.append("qdisc drops should be a 32-bit counter")
retrans = 0
for i in range(1, 5):
    fr = [json.loads(l) for l in open("%s/s%d.jsonl" % (tmp, i))]
    r = next(c for c in fr[-1]["counters"] if c["object"] == "Tcp" and c["name"] == "RetransSegs")
    rates = [next(c for c in f["counters"] if c["object"] == "Tcp" and
                  c["name"] == "RetransSegs")["rate"] for f in fr]
    print("sender %d: %d frames, RetransSegs +%d since its watch started, peak rate %.0f/s"
          % (i, len(fr), r["delta"], max([x for x in rates if x is not None] or [0])))
    retrans += r["delta"]
if not retrans > 0:
    bad.append("no sender retransmitted a TCP segment")

res = json.load(open(tmp + "/res.json"))
for ph in res["phases"]:
    c = ph["counters"]
    if not c or "port-wide" not in c["scope"]:
        bad.append("phase %s: no port-wide counters" % ph["name"])
        continue
    if not any(o.startswith("eth0 ") for o in c["objects"]):
        bad.append("phase %s: the receiver's eth0 is not among %s" % (ph["name"], c["objects"]))
        continue
    # Wire bytes count both directions of a ping-pong: compare with rx + tx.
    eth = sum(x["delta"] for x in c["counters"]
              if x["object"] == "eth0" and x["name"] in ("rx_bytes", "tx_bytes"))
    wire = sum(f["points"][0].get("wire_bytes") or 0 for f in ph["flows"])
    print("results %s: eth0 rx+tx bytes +%d over the phase, flows' wire bytes in windows %d"
          % (ph["name"], eth, wire))
    if not eth >= wire > 0:
        bad.append("phase %s: eth0's delta does not cover the flows' bytes" % ph["name"])
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
pass "qdisc backlog, drops and TCP retransmissions rise during an incast, read in its namespaces"
