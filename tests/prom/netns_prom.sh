#!/bin/sh
# netns_prom: `fabtop counters --textfile DIR --watch` on the live veth netdev of the test's
# own network namespace while a real `fabtop run` streams through it into a peer namespace
# (an htb class with a bfifo leaf on the sender's veth, so that a queue builds). Every copy of
# DIR/fabtop.prom taken during the run is accepted by promtool without a word (the file is
# renamed into place, never seen half-written); the qdisc's bytes grow between copies;
# qdisc backlog and the veth's ethtool peer_ifindex are gauges, qdisc bytes counters;
# netdev statistics are node_exporter's and stay out, unless --overlap, where tx_bytes is
# the kernel's own figure; TcpExt fields node_exporter does not export come in from the
# namespace's /proc/net/netstat. Root only (77 otherwise).
. "$FABTOP_SRC/tests/netns/lib.sh"
need_netns
command -v promtool >/dev/null || skip "promtool is not installed (Debian package prometheus)"
command -v tc >/dev/null || skip "tc (iproute2) is not installed"

mkns a
mkns b
link a va b vb
addr a va 10.83.0.1/24
addr b vb 10.83.0.2/24
nsx a tc qdisc add dev va root handle 1: htb default 10 r2q 200
nsx a tc class add dev va parent 1: classid 1:10 htb rate 200mbit ceil 200mbit
nsx a tc qdisc add dev va parent 1:10 handle 10: bfifo limit 64000
mkkey >/dev/null
serve b 10.83.0.2 "$TMP/serve.log"

. "$(dirname "$0")/prom_lib.sh"

mkdir "$TMP/tf"
ip netns exec "$NSP-a" "$FABTOP" counters --port va --qdisc --ethtool --snmp --textfile "$TMP/tf" \
    --watch 0.1 --count 1200 >"$TMP/w.out" 2>"$TMP/w.err" &
W=$!
PIDS="$PIDS $W"
wait_for "the first $TMP/tf/fabtop.prom" "[ -s $TMP/tf/fabtop.prom ]"

cat >"$TMP/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "prom-stream",
 "phases": ["quiet", "loaded"],
 "flows": [
  {"name": "probe", "op": "pingpong", "size": 256, "warmup_s": 0.2, "duration_s": 1.5, "peer": "10.83.0.2"},
  {"name": "bulk", "role": "background", "op": "stream", "direction": "tx", "size": "64KiB", "warmup_s": 0.2, "peer": "10.83.0.2"}
 ]}
J
nsx a "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/key" -o "$TMP/res.json" \
    >"$TMP/run.out" 2>&1 &
R=$!
PIDS="$PIDS $R"
# Copies of the file while the run goes on: each must be a whole exposition.
i=0
while kill -0 "$R" 2>/dev/null; do
    i=$((i + 1))
    cp "$TMP/tf/fabtop.prom" "$TMP/snap$i.prom"
    sleep 0.15
done
wait "$R" || { cat "$TMP/run.out"; fail "fabtop run exited $?"; }
sleep 0.3
cp "$TMP/tf/fabtop.prom" "$TMP/final.prom"
kill -TERM "$W"
wait "$W"
wrc=$?
[ "$wrc" -eq 0 ] || { cat "$TMP/w.err"; fail "the --textfile watcher exited $wrc"; }
[ "$i" -ge 5 ] || fail "only $i copies taken during the run"
for f in "$TMP"/snap*.prom "$TMP/final.prom"; do promcheck "$f"; done
[ "$(ls -A "$TMP/tf")" = "fabtop.prom" ] || fail "the directory holds more: $(ls -A "$TMP/tf")"

python3 - "$TMP" "$i" <<'PY' || exit 1
import re, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def parse(path):
    s, types = {}, {}
    for line in open(path).read().splitlines():
        if line.startswith("# TYPE "):
            types[line.split(" ")[2]] = line.split(" ")[3]
        elif not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            s[k] = float(v)
    return s, types
first, _ = parse(tmp + "/snap1.prom")
final, types = parse(tmp + "/final.prom")
qb = 'fabtop_qdisc_bytes_total{device="va",handle="1:",kind="htb"}'
assert types["fabtop_qdisc_bytes_total"] == "counter", types
assert types["fabtop_qdisc_backlog_bytes"] == "gauge", types
assert types["fabtop_ethtool_peer_ifindex"] == "gauge", types
assert final[qb] - first[qb] > 10e6, (first[qb], final[qb])  # the stream went through it
assert final['fabtop_ethtool_peer_ifindex{device="va"}'] > 0
assert 'fabtop_qdisc_drops_total{device="va",handle="10:",kind="bfifo"}' in final
assert not any(k.startswith("fabtop_netdev_") for k in final), "netdev is node_exporter's"
assert not any(k.startswith("fabtop_snmp_tcp_out_segs") for k in final), "node_exporter's"
ext = [k for k in final if k.startswith("fabtop_snmp_tcp_ext_")]
assert ext, "no TcpExt fields"
print("textfile ok: %d copies, qdisc 1: htb moved %.1f MB, %d TcpExt fields" %
      (n, (final[qb] - first[qb]) / 1e6, len(ext)))
PY

# --overlap: the netdev's own statistics, as the kernel counts them (the link is idle now).
before=$(nsx a cat /sys/class/net/va/statistics/tx_bytes)
nsx a "$FABTOP" counters --port va --prometheus --overlap >"$TMP/ov.prom" ||
    fail "--prometheus --overlap exited $?"
after=$(nsx a cat /sys/class/net/va/statistics/tx_bytes)
promcheck "$TMP/ov.prom"
got=$(sed -n 's/^fabtop_netdev_tx_bytes_total{device="va"} //p' "$TMP/ov.prom")
[ -n "$got" ] || fail "no fabtop_netdev_tx_bytes_total with --overlap"
[ "$got" -ge "$before" ] && [ "$got" -le "$after" ] ||
    fail "tx_bytes $got is not between $before and $after"
pass "netns_prom: veth tx_bytes $got, $(grep -vc '^#' "$TMP/final.prom") samples in the textfile"
