#!/bin/sh
# A many-sender run's summary: incast's four senders (real loopback TCP streams into this host)
# get one line with their total goodput and Jain's fairness index, both recomputed here from
# the results JSON ((sum x)^2 / (n sum x^2) over the senders' goodputs).
. "$(dirname "$0")/text_lib.sh"
fabtop run --mix incast --duration 0.5 -o "$T/r.json" > "$T/run.txt" 2>&1 ||
    { cat "$T/run.txt"; fail "run --mix incast"; }
"$FABTOP" report "$T/r.json" > "$T/rep.txt"
line=$(grep "4 bulk flows: total" "$T/rep.txt" | tail -1)
[ -n "$line" ] || { cat "$T/rep.txt"; fail "no senders line"; }
want=$(python3 - "$T/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ph = d["phases"][-1]
g = []
for f in ph["flows"]:
    if f["op"] != "stream":
        continue
    pts = [p for p in f["points"] if p.get("measured")]
    g.append(pts[-1]["goodput_gbps"])
s = sum(g)
print("total %.3f Gb/s, Jain's fairness %.3f" % (s, s * s / (len(g) * sum(x * x for x in g))))
PY
)
case $line in
*"$want"*) ;;
*) fail "printed '$line', recomputed '$want'" ;;
esac
echo "ok: $line"
