#!/bin/sh
# node_exporter_textfile: the real consumer of --textfile. node_exporter (Debian's
# prometheus-node-exporter) runs with its textfile collector on the directory fabtop writes
# and its own infiniband collector on the same sysfs tree, listening on 127.0.0.1 only.
# Scraped while `fabtop counters --textfile --watch` rewrites the file: the collector never
# reports a scrape error (node_textfile_scrape_error 0), every fabtop sample in the file is
# in the scrape with its value, a report's file sits beside it, and what node_exporter's
# infiniband collector exports (node_infiniband_port_transmit_wait_total) has no fabtop
# twin, while fabtop adds the saturation node_exporter does not show.
set -u
FABTOP=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
SRC=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
NE=$(command -v prometheus-node-exporter || command -v node_exporter) ||
    { echo "SKIP: node_exporter is not installed (Debian package prometheus-node-exporter)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d /tmp/fabtop-promne.XXXXXX)
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# A port as node_exporter's infiniband collector wants it (fw_ver, board_id: 1.5.0 gives up
# on a device without it, state, phys_state, rate).
d=$T/sys/class/infiniband/mlx5_0
ib=$d/ports/1
mkdir -p "$ib/counters" "$ib/hw_counters" "$T/tf"
echo 16.35.2000 >"$d/fw_ver"
echo MT4123 >"$d/hca_type"
echo MT_0000000222 >"$d/board_id"
echo InfiniBand >"$ib/link_layer"
echo "4: ACTIVE" >"$ib/state"
echo "5: LinkUp" >"$ib/phys_state"
echo "100 Gb/sec (4X EDR)" >"$ib/rate"
echo 4294967295 >"$ib/counters/port_xmit_wait"
echo 1000 >"$ib/counters/port_xmit_data"
echo 12 >"$ib/hw_counters/out_of_sequence"

"$FABTOP" counters --sysfs-root "$T" --textfile "$T/tf" --watch 0.1 --count 600 \
    >"$T/w.out" 2>"$T/w.err" &
W=$!
PIDS="$PIDS $W"
"$FABTOP" report "$SRC/tests/results/sweep-4ranks.json" --textfile "$T/tf" >/dev/null ||
    fail "report --textfile exited $?"

# node_exporter on a free loopback port.
for try in 1 2 3 4 5; do
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$NE" --collector.disable-defaults --collector.textfile --collector.textfile.directory="$T/tf" \
        --collector.infiniband --path.sysfs="$T/sys" --web.listen-address="127.0.0.1:$PORT" \
        >"$T/ne.log" 2>&1 &
    NEP=$!
    PIDS="$PIDS $NEP"
    i=0
    while [ $i -lt 100 ] && kill -0 "$NEP" 2>/dev/null &&
        ! curl -sf "http://127.0.0.1:$PORT/metrics" -o /dev/null; do
        sleep 0.05
        i=$((i + 1))
    done
    curl -sf "http://127.0.0.1:$PORT/metrics" -o /dev/null && break
    kill "$NEP" 2>/dev/null
done
curl -sf "http://127.0.0.1:$PORT/metrics" -o /dev/null || { cat "$T/ne.log"; fail "node_exporter did not start"; }

# Scrapes while the file is rewritten ten times a second.
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    curl -sf "http://127.0.0.1:$PORT/metrics" -o "$T/scrape$i.txt" || fail "scrape $i failed"
    sleep 0.13
done
cp "$T/tf/fabtop.prom" "$T/file.prom"
python3 - "$T" <<'PY' || exit 1
import re, sys
tmp = sys.argv[1]
def parse(path):
    s = {}
    for line in open(path).read().splitlines():
        if line.startswith("#") or not line:
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
        assert m, line
        labels = frozenset(re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        s[(m.group(1), labels)] = float(m.group(3))
    return s
mine = parse(tmp + "/file.prom")
sweep = parse(tmp + "/tf/fabtop_sweep.prom")
for i in range(1, 13):
    got = parse(tmp + "/scrape%d.txt" % i)
    err = got.get(("node_textfile_scrape_error", frozenset()))
    assert err == 0, "scrape %d: node_textfile_scrape_error %s" % (i, err)
    for k, v in list(mine.items()) + list(sweep.items()):
        assert got.get(k) == v, ("scrape %d" % i, k, v, got.get(k))
last = got
port = frozenset({("device", "mlx5_0"), ("port", "1")})
# node_exporter's own name for the counter, and no fabtop copy of it
assert last[("node_infiniband_port_transmit_wait_total", port)] == 4294967295
assert last[("node_infiniband_port_data_transmitted_bytes_total", port)] == 4000
assert not any(k[0].startswith("fabtop_port_xmit") for k in last), "a copy of node_exporter's"
# what fabtop adds
assert last[("fabtop_port_saturated", port | {("counter", "port_xmit_wait")})] == 1
assert last[("fabtop_rdma_out_of_sequence_total", port)] == 12
fam = {k[0] for k in last if k[0].startswith("fabtop_")}
print("node_exporter ok: 12 scrapes without a textfile error; %d fabtop families beside "
      "node_infiniband_*" % len(fam))
PY
kill "$W" 2>/dev/null
wait "$W"
echo "PASS: node_exporter_textfile"
