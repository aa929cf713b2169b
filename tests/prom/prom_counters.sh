#!/bin/sh
# prom_counters: `fabtop counters --prometheus` and `--textfile DIR` checked by promtool (any
# output from `promtool check metrics` fails the test) and by value: on a tree this script
# writes (a saturated port_xmit_wait, 4-byte words, "N/A (no PMA)", an hw_counter, netdev
# statistics) and, when the reference data is there, on its sysfs and procfs captures
# (words x4 against the raw file, hw_counters as read, the saturated mlx4 port_xmit_wait of
# node_exporter's own fixture, snmp fields node_exporter does not export). --textfile: the
# file is the exposition, the directory holds nothing else; a missing directory, a file, an
# unwritable directory: one line and 73; the directory vanishing under --watch: 73 and the
# measured counters saved elsewhere.
set -u
FABTOP=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
command -v promtool >/dev/null || { echo "SKIP: promtool is not installed (Debian package prometheus)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d /tmp/fabtop-promctr.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

. "$(dirname "$0")/prom_lib.sh"
# has FILE LINE: the exposition holds exactly this sample line.
has() { grep -qxF "$2" "$1" || { grep -F "${2%%\{*}" "$1" | head -5; fail "$1 lacks: $2"; }; }
hasnt() { ! grep -qF "$2" "$1" || fail "$1 should not hold '$2'"; }

ib=$T/sys/class/infiniband/mlx5_0/ports/1
mkdir -p "$ib/counters" "$ib/hw_counters" "$T/sys/class/net/eth0/statistics"
echo 4294967295 >"$ib/counters/port_xmit_wait"
echo 1000 >"$ib/counters/port_xmit_data"
echo "N/A (no PMA)" >"$ib/counters/symbol_error"
echo 12 >"$ib/hw_counters/out_of_sequence"
echo 131 >"$ib/hw_counters/local_ack_timeout_err"
echo 5000 >"$T/sys/class/net/eth0/statistics/rx_bytes"

# Default: node_exporter's own counters are left out, their saturation is not.
"$FABTOP" counters --sysfs-root "$T" --prometheus >"$T/def.prom" || fail "--prometheus exited $?"
promcheck "$T/def.prom"
has "$T/def.prom" 'fabtop_port_saturated{device="mlx5_0",port="1",counter="port_xmit_wait"} 1'
has "$T/def.prom" 'fabtop_port_saturated{device="mlx5_0",port="1",counter="port_xmit_data"} 0'
has "$T/def.prom" '# TYPE fabtop_port_saturated gauge'
has "$T/def.prom" 'fabtop_rdma_out_of_sequence_total{device="mlx5_0",port="1"} 12'
has "$T/def.prom" 'fabtop_rdma_local_ack_timeout_err_total{device="mlx5_0",port="1"} 131'
has "$T/def.prom" '# TYPE fabtop_rdma_out_of_sequence_total counter'
hasnt "$T/def.prom" 'fabtop_port_xmit_wait_total'
hasnt "$T/def.prom" 'fabtop_port_xmit_data'
hasnt "$T/def.prom" 'fabtop_netdev_'
hasnt "$T/def.prom" 'symbol_error_total' # n/a: no sample, never 0
# --overlap: everything, words as bytes.
"$FABTOP" counters --sysfs-root "$T" --prometheus --overlap >"$T/all.prom" || fail "--overlap exited $?"
promcheck "$T/all.prom"
has "$T/all.prom" 'fabtop_port_xmit_data_bytes_total{device="mlx5_0",port="1"} 4000'
has "$T/all.prom" 'fabtop_port_xmit_wait_total{device="mlx5_0",port="1"} 4294967295'
has "$T/all.prom" 'fabtop_netdev_rx_bytes_total{device="eth0"} 5000'
has "$T/all.prom" 'fabtop_port_saturated{device="mlx5_0",port="1",counter="port_xmit_wait"} 1'
hasnt "$T/all.prom" 'symbol_error_total'
echo "tree ok: $(grep -vc '^#' "$T/all.prom") samples with --overlap"

# The reference captures.
D=${FABTOP_SHARED_DATA:-}/sysfs-infiniband
if [ -n "${FABTOP_SHARED_DATA:-}" ] && [ -d "$D" ]; then
    for set in node_exporter prometheus-procfs hwloc-32em64t; do
        "$FABTOP" counters --sysfs-root "$D/$set" --prometheus >"$T/$set.prom" ||
            fail "$set: exited $?"
        promcheck "$T/$set.prom"
        "$FABTOP" counters --sysfs-root "$D/$set" --prometheus --overlap --all \
            >"$T/$set.all.prom" || fail "$set --overlap --all: exited $?"
        promcheck "$T/$set.all.prom"
    done
    # Every readable counter is one series of its own (no two names meet in one family and
    # label set), plus one saturation gauge per readable saturating counter.
    for set in node_exporter prometheus-procfs hwloc-32em64t; do
        "$FABTOP" counters --sysfs-root "$D/$set" --json --all >"$T/$set.json" || fail "$set --json"
        python3 - "$T/$set.json" "$T/$set.all.prom" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
ok = [c for c in d["counters"] if c["value"] is not None and not c.get("setting")]
sat = [c for c in ok if c["behaviour"] == "saturates"]
lines = [l for l in open(sys.argv[2]) if not l.startswith("#")]
want = len(ok) + len(sat)
assert len(lines) == want, (sys.argv[1], len(lines), len(ok), len(sat))
PY
    done
    has "$T/node_exporter.all.prom" 'fabtop_port_multicast_rcv_packets_total{device="mlx4_0",port="2"} 0'
    has "$T/node_exporter.all.prom" 'fabtop_port_port_multicast_rcv_packets_total{device="mlx4_0",port="2"} 93'
    # node_exporter's fixture has port_xmit_wait stuck at 2^32 - 1.
    has "$T/node_exporter.prom" \
        'fabtop_port_saturated{device="mlx4_0",port="1",counter="port_xmit_wait"} 1'
    has "$T/node_exporter.all.prom" 'fabtop_port_xmit_wait_total{device="mlx4_0",port="1"} 4294967295'
    # i40iw0 reads "N/A (no PMA)" everywhere: no sample of it at all.
    hasnt "$T/node_exporter.all.prom" 'device="i40iw0"'
    # A real FDR port: port_xmit_data in 4-byte words, exported as bytes.
    c=$D/hwloc-32em64t/sys/class/infiniband/mlx4_0/ports/1/counters
    words=$(cat "$c/port_xmit_data")
    has "$T/hwloc-32em64t.all.prom" \
        "fabtop_port_xmit_data_bytes_total{device=\"mlx4_0\",port=\"1\"} $((words * 4))"
    has "$T/hwloc-32em64t.all.prom" \
        "fabtop_port_xmit_wait_total{device=\"mlx4_0\",port=\"1\"} $(cat "$c/port_xmit_wait")"
    has "$T/hwloc-32em64t.prom" \
        'fabtop_port_saturated{device="mlx4_0",port="1",counter="port_xmit_wait"} 0'
    # mlx5 hw_counters (not in node_exporter) as read.
    h=$D/prometheus-procfs/sys/class/infiniband/mlx5_0/ports/1/hw_counters
    for n in local_ack_timeout_err roce_adp_retrans resp_cqe_error rx_read_requests; do
        has "$T/prometheus-procfs.prom" \
            "fabtop_rdma_${n}_total{device=\"mlx5_0\",port=\"1\"} $(cat "$h/$n")"
    done
    # /proc/net/snmp and netstat: what node_exporter's netstat collector exports by default
    # stays out (Tcp RetransSegs), the rest comes in, snake_case.
    P=$FABTOP_SHARED_DATA/procfs-net/node_exporter
    "$FABTOP" counters --sysfs-root "$D/node_exporter" --proc-root "$P" --snmp --prometheus \
        >"$T/snmp.prom" || fail "--snmp exited $?"
    promcheck "$T/snmp.prom"
    "$FABTOP" counters --sysfs-root "$D/node_exporter" --proc-root "$P" --snmp --prometheus \
        --overlap >"$T/snmp.all.prom" || fail "--snmp --overlap exited $?"
    promcheck "$T/snmp.all.prom"
    python3 - "$P/proc/net" "$T/snmp.prom" "$T/snmp.all.prom" <<'PY' || exit 1
import re, sys
net, dflt, full = sys.argv[1:]
def table(path):
    t, lines = {}, open(path).read().splitlines()
    for a, b in zip(lines[0::2], lines[1::2]):
        p, names = a.split(":")[0], a.split()[1:]
        for n, v in zip(names, b.split()[1:]):
            t[(p, n)] = int(v)
    return t
t = table(net + "/snmp"); t.update(table(net + "/netstat"))
def samples(path):
    return dict(l.rsplit(" ", 1) for l in open(path).read().splitlines() if not l.startswith("#"))
d, f = samples(dflt), samples(full)
rs = "fabtop_snmp_tcp_retrans_segs_total"
assert rs not in d, "Tcp RetransSegs is node_exporter's (node_netstat_Tcp_RetransSegs)"
assert float(f[rs]) == t[("Tcp", "RetransSegs")], (f[rs], t[("Tcp", "RetransSegs")])
lr = "fabtop_snmp_tcp_ext_tcp_lost_retransmit_total"
assert float(d[lr]) == t[("TcpExt", "TCPLostRetransmit")], (d.get(lr),)
assert "fabtop_snmp_tcp_ext_listen_overflows_total" not in d
for name in d:
    assert re.fullmatch(r"[a-z_][a-z0-9_]*(\{.*\})?", name), name
print("snmp ok: %d samples by default, %d with --overlap" % (len(d), len(f)))
PY
    echo "captures ok"
else
    echo "(no reference data: the captures are not checked)"
fi

# This host's own counters, every source and every unknown counter (names from any driver
# and any kernel's netstat): promtool must accept them all.
"$FABTOP" counters --prometheus --all --overlap --snmp --qdisc --ethtool >"$T/live.prom" 2>"$T/live.err"
rc=$?
if [ "$rc" -eq 0 ]; then
    promcheck "$T/live.prom"
    echo "live ok: $(grep -vc '^#' "$T/live.prom") samples of this host"
else
    [ "$rc" -eq 66 ] || { cat "$T/live.err"; fail "live --prometheus exited $rc"; }
    echo "(no counters on this host: $(cat "$T/live.err"))"
fi

# --textfile: the file is the exposition; nothing else is left in the directory.
mkdir "$T/tf"
"$FABTOP" counters --sysfs-root "$T" --textfile "$T/tf" >"$T/tf.out" || fail "--textfile exited $?"
grep -q "^Wrote [0-9]* samples to $T/tf/fabtop.prom$" "$T/tf.out" || { cat "$T/tf.out"; fail "no 'Wrote' line"; }
cmp -s "$T/tf/fabtop.prom" "$T/def.prom" || fail "DIR/fabtop.prom differs from --prometheus"
[ "$(ls -A "$T/tf")" = "fabtop.prom" ] || fail "the directory holds more: $(ls -A "$T/tf")"
"$FABTOP" counters --sysfs-root "$T" --textfile "$T/tf" --prometheus --watch 0.1 --count 3 \
    >"$T/tfw.out" || fail "--textfile --watch exited $?"
promcheck "$T/tf/fabtop.prom"
[ "$(grep -c '^# TYPE fabtop_port_saturated gauge$' "$T/tfw.out")" -eq 3 ] ||
    fail "--prometheus --watch --count 3 should print 3 expositions"
[ "$(ls -A "$T/tf")" = "fabtop.prom" ] || fail "a temporary file was left: $(ls -A "$T/tf")"

# Bad directories: one line naming it, 73, nothing written.
bad() {
    want=$1
    shift
    "$FABTOP" counters --sysfs-root "$T" "$@" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    [ "$rc" -eq 73 ] || { cat "$T/bad.err"; fail "$* exited $rc, not 73"; }
    [ "$(wc -l <"$T/bad.err")" -eq 1 ] || { cat "$T/bad.err"; fail "$*: not one line"; }
    grep -qF "$want" "$T/bad.err" || { cat "$T/bad.err"; fail "$*: the line lacks '$want'"; }
    [ ! -s "$T/bad.out" ] || fail "$*: printed on stdout"
}
bad "$T/none: no such directory" --textfile "$T/none"
[ ! -e "$T/none" ] || fail "--textfile created the missing directory"
: >"$T/afile"
bad "$T/afile: not a directory" --textfile "$T/afile"
mkdir "$T/ro"
chmod 555 "$T/ro"
if [ "$(id -u)" -ne 0 ]; then
    bad "$T/ro: no permission" --textfile "$T/ro"
elif command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$FABTOP" --version >/dev/null 2>&1; then
    chmod 755 "$T"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$FABTOP" counters --sysfs-root "$T" \
        --textfile "$T/ro" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    [ "$rc" -eq 73 ] || { cat "$T/bad.err"; fail "an unwritable directory: exit $rc, not 73"; }
    grep -qF "$T/ro: no permission" "$T/bad.err" || { cat "$T/bad.err"; fail "no permission line"; }
    [ "$(wc -l <"$T/bad.err")" -eq 1 ] || fail "not one line"
else
    echo "(root without setpriv as nobody: the unwritable directory is not checked)"
fi
rm -f "$T/ro/fabtop.prom"
[ -z "$(ls -A "$T/ro")" ] || fail "something was written into the unwritable directory"

# The directory vanishes under --watch: 73, one line for it, the counters saved elsewhere.
mkdir "$T/gone" "$T/cwd"
(cd "$T/cwd" && exec "$FABTOP" counters --sysfs-root "$T" --textfile "$T/gone" --watch 0.1 \
    --count 600 >"$T/gone.out" 2>"$T/gone.err") &
pid=$!
i=0
while [ ! -s "$T/gone/fabtop.prom" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -s "$T/gone/fabtop.prom" ] || fail "--watch wrote no file"
rm -rf "$T/gone"
wait $pid
rc=$?
[ "$rc" -eq 73 ] || { cat "$T/gone.err"; fail "a vanished directory: exit $rc, not 73"; }
grep -q "^fabtop: --textfile: .*$T/gone/fabtop.prom" "$T/gone.err" || { cat "$T/gone.err"; fail "no line naming the file"; }
saved=$(ls "$T/cwd"/fabtop-counters-*.json 2>/dev/null | head -1)
[ -n "$saved" ] || { cat "$T/gone.err"; fail "the counters were not saved elsewhere"; }
grep -qF "$saved" "$T/gone.err" || fail "stderr does not name $saved"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any(c['name']=='out_of_sequence' and c['value']==12 for c in d['counters'])" "$saved" ||
    fail "$saved does not hold the counters"

# Usage errors.
"$FABTOP" counters --prometheus --json >/dev/null 2>&1
[ $? -eq 64 ] || fail "--prometheus --json should be a usage error (64)"
"$FABTOP" counters --overlap >/dev/null 2>&1
[ $? -eq 64 ] || fail "--overlap without --prometheus should be a usage error (64)"
echo "PASS: prom_counters"
