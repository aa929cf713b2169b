#!/bin/sh
# trace: `fabtop run --trace OUT` on a real loopback run (quiet-vs-loaded) writes Chrome trace
# events that tracecheck.py validates (every event has ph, ts, pid, tid; X events nest on each
# thread; b/e pair by id) and checks against the run's results (-o): phases, flows, points,
# goodput counter samples, events, sampled operations as async b/e events (inside their
# flow's span, their median near the p50). `fabtop report FILE --trace` writes the same
# events from the saved results, without operations (a results file holds histograms). A --trace path that cannot be created stops the run before it starts
# (73); --trace of a sweep's document is refused (65).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
. "$(dirname "$0")/../common/cli_lib.sh"

"$bin" run --mix quiet-vs-loaded --duration 0.5 -o "$tmp/run.json" --trace "$tmp/trace.json" \
    >"$tmp/run.out" 2>&1 || fail "fabtop run --trace: $(tail -5 "$tmp/run.out")"
python3 "$src/tests/report/tracecheck.py" "$tmp/trace.json" "$tmp/run.json" --ops ||
    fail "the run's trace"
"$bin" report "$tmp/run.json" --trace "$tmp/again.json" >"$tmp/out" 2>&1 ||
    fail "fabtop report --trace: $(cat "$tmp/out")"
python3 "$src/tests/report/tracecheck.py" "$tmp/again.json" "$tmp/run.json" ||
    fail "the saved run's trace"
# The same events but the sampled operations, which only the live run has.
python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda d: [e for e in d["traceEvents"] if e["ph"] not in ("b", "e")]
sys.exit(0 if strip(a) == strip(b) and not [e for e in b["traceEvents"] if e["ph"] == "b"] else 1)
' "$tmp/trace.json" "$tmp/again.json" ||
    fail "fabtop report --trace differs from fabtop run --trace (operations aside)"

# A flow whose setup, as timed, overruns its span (seen under load): every measured point
# still has its event, with its ops, inside the flow's span, shortened to fit.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for ph in d["phases"]:
    for fl in ph["flows"]:
        fl["setup_s"] = 1000.0
json.dump(d, open(sys.argv[2], "w"))
' "$tmp/run.json" "$tmp/overrun.json"
"$bin" report "$tmp/overrun.json" --trace "$tmp/overrun-trace.json" >"$tmp/out" 2>&1 ||
    fail "fabtop report --trace (setup overrun): $(cat "$tmp/out")"
python3 "$src/tests/report/tracecheck.py" "$tmp/overrun-trace.json" "$tmp/overrun.json" ||
    fail "the trace of a run whose setup overruns its flows' spans"
grep -q 'shortened to fit' "$tmp/overrun-trace.json" || fail "the overrun's points do not say so"

# Many connections at once (api): operations of one flow overlap, so they are async events.
"$bin" run --mix api --duration 0.3 -o "$tmp/api.json" --trace "$tmp/api-trace.json" \
    >"$tmp/run.out" 2>&1 || fail "fabtop run --mix api --trace: $(tail -5 "$tmp/run.out")"
python3 "$src/tests/report/tracecheck.py" "$tmp/api-trace.json" "$tmp/api.json" --ops ||
    fail "the api run's trace"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
end = {e["id"]: e["ts"] for e in t if e["ph"] == "e"}
iv = sorted((e["tid"], e["ts"], end[e["id"]]) for e in t if e["ph"] == "b")
over = sum(1 for a, b in zip(iv, iv[1:]) if a[0] == b[0] and b[1] < a[2])
print("ok: %d of %d sampled operations overlap the one before on their flow" % (over, len(iv)))
sys.exit(0 if over > 0 else 1)' "$tmp/api-trace.json" || fail "api: no overlapping operations"

"$bin" run --mix quiet-vs-loaded --duration 0.5 --trace "$tmp/nodir/t.json" >"$tmp/out" \
    2>"$tmp/err"
rc=$?
[ $rc -eq 73 ] || fail "--trace into a missing directory: status $rc, want 73"
grep -qF "$tmp/nodir/t.json" "$tmp/err" || fail "the path is not named: $(cat "$tmp/err")"
grep -q "^Phase" "$tmp/out" && fail "the run went ahead although --trace cannot be written"
"$bin" report "$src/tests/results/sweep-4ranks.json" --trace "$tmp/s.json" >"$tmp/out" \
    2>"$tmp/err"
rc=$?
[ $rc -eq 65 ] || fail "--trace of a sweep: status $rc, want 65"
[ -e "$tmp/s.json" ] && fail "--trace of a sweep wrote a file"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS: trace"
