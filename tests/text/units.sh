#!/bin/sh
# A run whose latencies are milliseconds reads in milliseconds: `fabtop report` of a real
# loopback run's results with its latencies scaled by 1000 (as kv-transfer's 4-64 MiB blocks
# measure) shows its tables "milliseconds" with the same digits, the JSON keeps microseconds;
# the run as measured (tens of us) stays in microseconds.
. "$(dirname "$0")/text_lib.sh"
fabtop run --mix quiet-vs-loaded --duration 0.3 -o "$T/us.json" > "$T/run.txt" 2>&1 ||
    { cat "$T/run.txt"; fail "run"; }
"$FABTOP" report "$T/us.json" > "$T/us.txt"
grep -q "latency: half_round_trip, microseconds" "$T/us.txt" || fail "the measured run is not in microseconds"
grep -q "Quiet vs loaded, probe (last size point, us)" "$T/us.txt" || fail "quiet vs loaded not in us"
python3 - "$T/us.json" "$T/ms.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for ph in d["phases"]:
    for f in ph["flows"]:
        for p in f.get("points") or []:
            lat = p.get("latency") or {}
            for k in ("min", "mean", "stdev", "p50", "p90", "p99", "p99.9", "p99.99", "max"):
                if isinstance(lat.get(k), (int, float)):
                    lat[k] *= 1000
s = d.get("summary") or {}
for name in ("quiet", "loaded"):
    ph = s.get(name) or {}
    for k in ("p50", "p99", "p99.9", "max"):
        if isinstance(ph.get(k), (int, float)):
            ph[k] *= 1000
json.dump(d, open(sys.argv[2], "w"))
PY
"$FABTOP" report "$T/ms.json" > "$T/ms.txt"
grep -q "latency: half_round_trip, milliseconds" "$T/ms.txt" || { cat "$T/ms.txt"; fail "not in milliseconds"; }
grep -q "Quiet vs loaded, probe (last size point, ms)" "$T/ms.txt" || { cat "$T/ms.txt"; fail "quiet vs loaded not in ms"; }
# The same digits: the us report's p50 cell of the probe's quiet phase, read in ms.
want=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); v=d['phases'][0]['flows'][0]['points'][0]['latency']['p50']; print('%.2f' % (v/1000) if v/1000 < 1000 else '%.1f' % (v/1000))" "$T/ms.json")
grep -q " $want " "$T/ms.txt" || { cat "$T/ms.txt"; fail "p50 $want ms not in the table"; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['phases'][0]['flows'][0]['points'][0]['latency']['unit']=='us'" "$T/ms.json"
echo "ok: microseconds as measured, milliseconds for ms latencies ($want ms)"
