#!/bin/sh
# sweep_report: `fabtop report FILE` on a sweep's document (tests/results/sweep-4ranks.json)
# prints the sweep's report (header, unlike ranks, heat maps, failed pairs, verdicts, the
# summary line last), --json prints the document back unchanged, and a malformed sweep
# document gets the reader's one line on stderr with status 65 (missing file: 66).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?}
doc=$src/tests/results/sweep-4ranks.json
. "$(dirname "$0")/../common/cli_lib.sh"
has() {
    f=$1
    shift
    for n in "$@"; do
        grep -qF -- "$n" "$f" || fail "'$n' not in $(basename "$f"): $(head -c 800 "$f")"
    done
}
# bad STATUS NEEDLE ARGS...: one line on stderr holding NEEDLE, nothing on stdout.
bad() {
    want=$1 needle=$2
    shift 2
    run "$want" "$@" || return
    [ -s "$tmp/out" ] && fail "fabtop $*: unexpected stdout"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "fabtop $*: not one line on stderr: $(cat "$tmp/err")"
    has "$tmp/err" "$needle"
}

run 0 report "$doc"
has "$tmp/out" "fabtop sweep: 4 ranks by mpirun, patterns pairs, status failed, rounds 3/3 done" \
    "     2 rk-h2: eth0 MTU 1400 (the others 9000)" \
    "bandwidth a->b (row a to column b), rail 0: median 94.0 Gb/s of 10 figures" \
    "   2 rk-h2          . . \\ ." "   1 rk-h1          # \\ # X" \
    "latency p50 (half round trip), rail 0: median 62 us of 5 pairs" \
    "failed pairs:" "NAMED   rk-h2 [rank bandwidth, rail 0]: rk-h2 eth0 0.27x"
last=$(tail -1 "$tmp/out")
[ "$last" = "fabtop sweep 4 ranks: 5/6 pairs measured, 1 failed, bandwidth median 94.0 Gb/s, latency p50 median 62 us; 2 named: rk-h2 eth0 0.27x the rack's median bandwidth (and 1 more); status failed" ] ||
    fail "the last line is not the summary: $last"
awk 'length > 80 && !/^(NAMED|SUSPECT|CLEARED|fabtop sweep [0-9])/ && !/ -> .*, rail [0-9]+: / {print; bad = 1} END {exit bad}' \
    "$tmp/out" || fail "lines wider than 80 columns"

run 0 report --json "$doc"
if command -v python3 >/dev/null; then
    python3 - "$doc" "$tmp/out" <<'PY' || fail "report --json is not the document"
import json, sys
a, b = (json.load(open(p), parse_int=float) for p in sys.argv[1:])
assert json.dumps(a) == json.dumps(b), "differs"
PY
fi

# Malformed sweep documents: the reader's one line, status 65.
if command -v python3 >/dev/null; then
    python3 - "$doc" "$tmp" <<'PY'
import json, sys
src, tmp = sys.argv[1:]
def edit(name, fn):
    d = json.load(open(src))
    fn(d)
    json.dump(d, open("%s/%s.json" % (tmp, name), "w"))
edit("badrank", lambda d: d["tests"][0].__setitem__("src", 9))
edit("newer", lambda d: d.__setitem__("version", 2))
edit("badrun", lambda d: d["tests"][0]["run"]["phases"][0]["flows"][0].__setitem__("status", 3))
edit("negrail", lambda d: d["pairs"][1].__setitem__("rail", -1))
PY
    bad 65 "badrank.json: tests[0].src = 9 is no rank in ranks[] (4 ranks)" report "$tmp/badrank.json"
    bad 65 "newer.json: not a fabtop sweep document" report "$tmp/newer.json"
    has "$tmp/err" "version 2 is newer than this fabtop reads (1)"
    bad 65 "badrun.json: tests[0].run: phases[0].flows[0].status is not a string or null" \
        report "$tmp/badrun.json"
    bad 65 "negrail.json: pairs[1].rail = -1 is out of range" report "$tmp/negrail.json"
    bad 65 "badrank.json: tests[0].src" report --json "$tmp/badrank.json"
fi
bad 66 "$tmp/missing.json" report "$tmp/missing.json"

[ "$fails" -eq 0 ] || {
    echo "$fails failure(s)"
    exit 1
}
echo "all passed"
