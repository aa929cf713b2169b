#!/bin/sh
# prom_report: `fabtop report FILE --prometheus` on the results of a real short run over
# loopback (quiet-vs-loaded, 1 s a phase) and on a sweep's document: promtool check metrics
# says nothing, and every figure is the document's own converted to base units: latency
# percentiles (microseconds) as summary quantiles in seconds with the flow, phase, size and
# latency kind, _count the samples, goodput (Gb/s) as bytes per second, the start time as
# seconds since the epoch; a sweep's pairs per direction. --textfile DIR writes the same
# exposition to DIR/fabtop_run.prom; a missing DIR is one line and 73.
set -u
FABTOP=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
SRC=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
command -v promtool >/dev/null || { echo "SKIP: promtool is not installed (Debian package prometheus)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d /tmp/fabtop-promrep.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/prom_lib.sh"

"$FABTOP" run --mix quiet-vs-loaded --duration 1 -o "$T/run.json" >"$T/run.out" 2>&1 ||
    { tail -20 "$T/run.out"; fail "fabtop run exited $?"; }
"$FABTOP" report "$T/run.json" --prometheus >"$T/run.prom" || fail "report --prometheus exited $?"
promcheck "$T/run.prom"

# The exposition against the document (the checker parses the text format itself).
cat >"$T/parse.py" <<'PY'
import re
def parse(path):
    """{(name, frozenset(labels)): value}, and {name: type}"""
    s, types = {}, {}
    for line in open(path).read().splitlines():
        if line.startswith("# TYPE "):
            _, _, n, t = line.split(" ")
            types[n] = t
            continue
        if line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
        assert m, line
        labels = frozenset(re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in s, "duplicate series " + line
        s[key] = float(m.group(3))
    return s, types
def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
PY
python3 - "$T" <<'PY' || exit 1
import datetime, json, sys
sys.path.insert(0, sys.argv[1])
from parse import parse, close
d = json.load(open(sys.argv[1] + "/run.json"))
s, types = parse(sys.argv[1] + "/run.prom")
assert types["fabtop_run_latency_seconds"] == "summary", types
assert types["fabtop_run_goodput_bytes_per_second"] == "gauge", types
start = datetime.datetime.strptime(d["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
    tzinfo=datetime.timezone.utc).timestamp()
got = s[("fabtop_run_start_timestamp_seconds", frozenset())]
assert abs(got - start) < 0.001, (got, start)
assert close(s[("fabtop_run_duration_seconds", frozenset())], d["duration_s"])
quant = {"0": "min", "0.5": "p50", "0.9": "p90", "0.99": "p99", "0.999": "p99.9",
         "0.9999": "p99.99", "1": "max"}
checked = 0
for ph in d["phases"]:
    for f in ph["flows"]:
        for p in f["points"]:
            base = {("flow", f["name"]), ("phase", ph["name"]), ("transport", f["transport"]),
                    ("size_bytes", "%d" % p["size_bytes"])}
            g = s[("fabtop_run_goodput_bytes_per_second", frozenset(base))]
            assert close(g, p["goodput_gbps"] * 1e9 / 8), (f["name"], g, p["goodput_gbps"])
            lat = p.get("latency")
            if not lat or not lat.get("count"):
                continue
            assert lat["unit"] == "us", lat["unit"]
            lb = base | {("latency_kind", f["latency_kind"])}
            for q, k in quant.items():
                v = s[("fabtop_run_latency_seconds", frozenset(lb | {("quantile", q)}))]
                assert abs(v - lat[k] / 1e6) <= 1e-14 * max(lat[k] / 1e6, 1e-300) + 1e-20, \
                    (f["name"], ph["name"], q, v, lat[k])
                checked += 1
            assert s[("fabtop_run_latency_seconds_count", frozenset(lb))] == lat["count"]
            ssum = s[("fabtop_run_latency_seconds_sum", frozenset(lb))]
            assert abs(ssum - lat["mean"] * lat["count"] / 1e6) <= 1e-9 * ssum, ssum
assert checked >= 14, checked  # the probe in both phases
p99 = [(dict(k[1]), v) for k, v in s.items()
       if k[0] == "fabtop_run_latency_seconds" and ("quantile", "0.99") in k[1]]
print("run ok: %d series; p99 %s" % (len(s), ", ".join(
    "%s/%s %.1f us" % (l["flow"], l["phase"], v * 1e6) for l, v in p99)))
PY

# The phases' counter deltas (port-wide, of lo here) as the document has them; a flow's own
# queue pairs' RDMA counter and a saturated PortCounter (a verbs run's, written into the
# document: this host has no RDMA device).
python3 - "$T" <<'PY' || exit 1
import json, sys
sys.path.insert(0, sys.argv[1])
from parse import parse, close
tmp = sys.argv[1]
d = json.load(open(tmp + "/run.json"))
s, types = parse(tmp + "/run.prom")
n = 0
for ph in d["phases"]:
    for c in (ph.get("counters") or {}).get("counters", []):
        if c["source"] == "netdev" and c["name"] == "rx_bytes" and c.get("delta") is not None:
            v = s[("fabtop_run_phase_netdev_rx_bytes",
                   frozenset({("phase", ph["name"]), ("device", c["object"])}))]
            assert v == c["delta"], (v, c)
            n += 1
assert n == 2, n
assert types["fabtop_run_phase_netdev_rx_bytes"] == "gauge"
loaded = d["phases"][1]
probe = next(f for f in loaded["flows"] if f["name"] == "probe")
probe["qp_counters"] = {"scope": "this test's queue pairs", "objects": [], "notes": [],
    "counters": [{"source": "qp_counter", "object": "probe: mlx5_0/1 counter 4",
                  "name": "out_of_sequence", "group": "loss/retransmission", "kind": "counter",
                  "unit": "packets", "width": 32, "behaviour": "wraps", "known": True,
                  "error_like": True, "delta": 7, "saturated": False, "reset": False}],
    "status": "bound", "reason": None, "errno": None, "device": "mlx5_0", "port": 1,
    "driver": "mlx5", "counter_id": 4}
loaded["counters"]["counters"].append(
    {"source": "ib", "object": "mlx5_0/1", "name": "port_xmit_wait", "group": "congestion",
     "kind": "counter", "unit": "ticks", "width": 32, "behaviour": "saturates", "known": True,
     "error_like": False, "delta": None, "saturated": True, "reset": False})
loaded["counters"]["counters"].append(
    {"source": "ib", "object": "mlx5_0/1", "name": "port_xmit_data", "group": "traffic",
     "kind": "counter", "unit": "bytes", "width": 64, "behaviour": "saturates", "known": True,
     "error_like": False, "delta": 4000, "saturated": False, "reset": False})
json.dump(d, open(tmp + "/verbs.json", "w"), indent=1)
PY
"$FABTOP" report "$T/verbs.json" --prometheus >"$T/verbs.prom" || fail "report of the edited document exited $?"
promcheck "$T/verbs.prom"
grep -qxF 'fabtop_run_phase_qp_out_of_sequence{phase="loaded",flow="probe",device="mlx5_0",port="1"} 7' "$T/verbs.prom" ||
    { grep qp_ "$T/verbs.prom"; fail "no QP counter delta"; }
grep -qxF 'fabtop_run_phase_saturated{phase="loaded",device="mlx5_0",port="1",counter="port_xmit_wait"} 1' "$T/verbs.prom" ||
    fail "no saturation gauge for the phase"
grep -qxF 'fabtop_run_phase_port_xmit_data_bytes{phase="loaded",device="mlx5_0",port="1"} 4000' "$T/verbs.prom" ||
    fail "no port_xmit_data delta in bytes"
! grep -q '^fabtop_run_phase_port_xmit_wait' "$T/verbs.prom" || fail "a saturated counter has no growth"

# --textfile: the same exposition in DIR/fabtop_run.prom.
mkdir "$T/tf"
"$FABTOP" report "$T/run.json" --textfile "$T/tf" >"$T/tf.out" || fail "report --textfile exited $?"
cmp -s "$T/tf/fabtop_run.prom" "$T/run.prom" || fail "DIR/fabtop_run.prom differs from --prometheus"
[ "$(ls -A "$T/tf")" = "fabtop_run.prom" ] || fail "the directory holds more: $(ls -A "$T/tf")"
"$FABTOP" report "$T/run.json" --textfile "$T/none" >"$T/bad.out" 2>"$T/bad.err"
rc=$?
[ "$rc" -eq 73 ] || fail "a missing --textfile directory: exit $rc, not 73"
[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -qF "$T/none: no such directory" "$T/bad.err" ||
    { cat "$T/bad.err"; fail "not one line naming the directory"; }
"$FABTOP" report "$T/run.json" --json --prometheus >/dev/null 2>&1
[ $? -eq 64 ] || fail "--json --prometheus should be a usage error (64)"

# A sweep's document: each pair per direction, src and dst by host and rank.
"$FABTOP" report "$SRC/tests/results/sweep-4ranks.json" --prometheus >"$T/sweep.prom" ||
    fail "report --prometheus of a sweep exited $?"
promcheck "$T/sweep.prom"
python3 - "$T" "$SRC/tests/results/sweep-4ranks.json" <<'PY' || exit 1
import json, sys
sys.path.insert(0, sys.argv[1])
from parse import parse, close
d = json.load(open(sys.argv[2]))
s, types = parse(sys.argv[1] + "/sweep.prom")
assert types["fabtop_sweep_pair_latency_seconds"] == "summary"
host = {r["rank"]: r["host"] for r in d["ranks"]}
n = 0
for p in d["pairs"]:
    def lab(a, b):
        return {("src", host[a]), ("src_rank", str(a)), ("dst", host[b]), ("dst_rank", str(b)),
                ("rail", str(p["rail"])), ("transport", p.get("transport") or "tcp")}
    for a, b, k in ((p["a"], p["b"], "bw_ab_gbps"), (p["b"], p["a"], "bw_ba_gbps")):
        if p.get(k) is None:
            continue
        v = s[("fabtop_sweep_pair_goodput_bytes_per_second", frozenset(lab(a, b)))]
        assert close(v, p[k] * 1e9 / 8), (a, b, v, p[k])
        n += 1
    for q, k in (("0.5", "lat_p50_us"), ("0.99", "lat_p99_us"), ("0.999", "lat_p999_us")):
        if p.get(k) is None:
            continue
        l = lab(p["a"], p["b"]) | {("latency_kind", p["latency_kind"]), ("quantile", q)}
        v = s[("fabtop_sweep_pair_latency_seconds", frozenset(l))]
        assert close(v, p[k] / 1e6), (p, q, v)
        n += 1
    failed = s[("fabtop_sweep_pair_failed", frozenset(lab(p["a"], p["b"])))]
    assert failed == (1 if p["failed"] else 0), p
print("sweep ok: %d figures checked" % n)
PY
echo "PASS: prom_report"
