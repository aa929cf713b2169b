#!/bin/sh
# trace: `fabtop run --trace OUT` on a real loopback run (quiet-vs-loaded) writes Chrome trace
# events that tracecheck.py validates (every event has ph, ts, pid, tid; X events nest on each
# thread; b/e pair by id) and checks against the run's results (-o): phases, flows, points,
# goodput counter samples, events. `fabtop report FILE --trace` writes the same file from
# the saved results. A --trace path that cannot be created stops the run before it starts
# (73); --trace of a sweep's document is refused (65).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

"$bin" run --mix quiet-vs-loaded --duration 0.5 -o "$tmp/run.json" --trace "$tmp/trace.json" \
    >"$tmp/run.out" 2>&1 || fail "fabtop run --trace: $(tail -5 "$tmp/run.out")"
python3 "$src/tests/report/tracecheck.py" "$tmp/trace.json" "$tmp/run.json" ||
    fail "the run's trace"
"$bin" report "$tmp/run.json" --trace "$tmp/again.json" >"$tmp/out" 2>&1 ||
    fail "fabtop report --trace: $(cat "$tmp/out")"
cmp "$tmp/trace.json" "$tmp/again.json" >/dev/null ||
    fail "fabtop report --trace differs from fabtop run --trace"

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
