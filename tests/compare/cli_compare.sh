#!/bin/sh
# cli_compare: `fabtop compare A B` says which test conditions differ and why (exit 1 when
# the results are not like for like, 0 when comparable), --json is one valid document, and
# bad input gets one line on stderr with the sysexits status; `fabtop report FILE` prints the
# summary of a saved result. Documents come from write_doc ($1) and a short loopback run.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
write_doc=${1:?usage: cli_compare.sh WRITE_DOC}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# run STATUS -- ARGS...: run fabtop, check the status; stdout in $tmp/out, stderr in $tmp/err.
run() {
    want=$1
    shift 2
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "fabtop $* -> status $got (want $want)"
        sed 's/^/    /' "$tmp/err" "$tmp/out" | head -20
        return 1
    fi
    echo "PASS: fabtop $* -> $got"
}

# has FILE NEEDLE...: each needle appears in FILE.
has() {
    f=$1
    shift
    for n in "$@"; do
        grep -qF -- "$n" "$f" || fail "'$n' not in $(basename "$f"): $(head -c 600 "$f")"
    done
}

# bad STATUS NEEDLE -- ARGS...: one line on stderr containing NEEDLE, nothing on stdout.
bad() {
    want=$1 needle=$2
    shift 3
    run "$want" -- "$@" || return
    [ -s "$tmp/out" ] && fail "fabtop $*: unexpected stdout"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "fabtop $*: not one line on stderr: $(cat "$tmp/err")"
    has "$tmp/err" "$needle"
}

"$write_doc" "$tmp/base.json" || exit 1
"$write_doc" "$tmp/mtu.json" mtu=1024 || exit 1
"$write_doc" "$tmp/eth.json" ll=Ethernet || exit 1
"$write_doc" "$tmp/fw.json" fw=28.40.1000 || exit 1
"$write_doc" "$tmp/size.json" size=65536 || exit 1
"$write_doc" "$tmp/nb.json" neighbour=1 || exit 1
"$write_doc" "$tmp/renamed.json" mix=renamed || exit 1

run 0 -- compare "$tmp/base.json" "$tmp/base.json"
has "$tmp/out" "Comparable: every condition that changes the numbers is the same." \
    "conditions are the same" "p99 us" "x1.00"
run 0 -- compare "$tmp/base.json" "$tmp/renamed.json"
has "$tmp/out" "Comparable" "info    run: mix" "A probe-test" "B renamed"

run 1 -- compare "$tmp/base.json" "$tmp/mtu.json"
has "$tmp/out" "Not like for like" "unfair  port mlx5_0/1: active MTU" "A 4096 bytes" \
    "B 1024 bytes" "why: a smaller MTU"
run 1 -- compare "$tmp/base.json" "$tmp/eth.json"
has "$tmp/out" "unfair  port mlx5_0/1: link layer" "A InfiniBand" "B Ethernet"
run 0 -- compare "$tmp/base.json" "$tmp/fw.json"
has "$tmp/out" "Comparable with care" "caution port mlx5_0/1: firmware" "B 28.40.1000"
run 1 -- compare "$tmp/base.json" "$tmp/size.json"
has "$tmp/out" "unfair  flow probe: sizes" "A 4KiB" "B 64KiB" "4KiB|64KiB"
run 1 -- compare "$tmp/base.json" "$tmp/nb.json"
has "$tmp/out" "unfair  phase loaded: neighbours" "A none" "B 1 flow, 300.00 Gb/s" \
    "neighbour present" "B only"
run 1 -- compare --all "$tmp/base.json" "$tmp/mtu.json"
has "$tmp/out" "Conditions that are the same" "port mlx5_0/1: link layer: InfiniBand"

# --json: one document, the differing condition flagged, -o writes the same document.
run 1 -- compare --json -o "$tmp/cmp.json" "$tmp/base.json" "$tmp/mtu.json"
if command -v python3 >/dev/null; then
    python3 - "$tmp/out" "$tmp/cmp.json" <<'EOF' || fail "compare --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d == json.load(open(sys.argv[2])), "stdout and -o differ"
assert d["format"] == "fabtop-compare" and d["worst"] == "unfair", d["worst"]
c = [c for c in d["conditions"] if c["field"] == "active MTU"][0]
assert (c["a"], c["b"], c["same"], c["severity"]) == ("4096 bytes", "1024 bytes", False, "unfair"), c
assert all(k in c for k in ("group", "why", "weight"))
assert d["outcome"][0]["ratio_b_over_a"]["p99"] == 1
assert d["files"]["b"].endswith("mtu.json")
EOF
fi

# A short real run over loopback, compared with itself and with another message size.
if "$bin" run --mix quiet-vs-loaded --duration 0.2 -o "$tmp/run.json" >"$tmp/run.out" 2>&1 &&
    "$bin" run --mix quiet-vs-loaded --duration 0.2 --size 64KiB -o "$tmp/run64.json" \
        >>"$tmp/run.out" 2>&1; then
    run 0 -- compare "$tmp/run.json" "$tmp/run.json"
    has "$tmp/out" "Comparable" "quiet  probe  4KiB  (half_round_trip)" "Gb/s"
    run 1 -- compare "$tmp/run.json" "$tmp/run64.json"
    has "$tmp/out" "unfair  flow probe: sizes" "B 64KiB" "4KiB|64KiB"
    run 0 -- report "$tmp/run.json"
    has "$tmp/out" "mix quiet-vs-loaded" "Phase quiet" "Phase loaded" "Quiet vs loaded"
    run 0 -- report --json "$tmp/run.json"
    has "$tmp/out" '"format":' '"fabtop-results"'
    # A loaded median well below the quiet one gets a note on why; a slower one does not.
    for case in "100 50 note:" "100 95 -"; do
        set -- $case
        python3 - "$tmp/run.json" "$tmp/faster.json" "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["summary"]["quiet"]["p50"] = float(sys.argv[3])
d["summary"]["loaded"]["p50"] = float(sys.argv[4])
json.dump(d, open(sys.argv[2], "w"))
EOF
        run 0 -- report "$tmp/faster.json"
        if [ "$3" = "note:" ]; then
            has "$tmp/out" "note: the loaded median is below the quiet one" "by the tail"
        elif grep -q "note: the loaded median" "$tmp/out"; then
            fail "a note although the loaded p50 is 0.95 of the quiet one"
        fi
    done
else
    echo "SKIP: loopback run failed: $(tail -3 "$tmp/run.out")"
fi
run 0 -- report "$tmp/base.json"
has "$tmp/out" "mix probe-test" "Phase loaded" "probe (foreground, verbs pingpong tx, node2:7000)"

# Bad input: one line, sysexits status.
printf 'not json\n' >"$tmp/garbage.json"
printf '{"format": "fabtop-topology", "version": 1}\n' >"$tmp/topo.json"
printf '{"format": "fabtop-results", "version": 99}\n' >"$tmp/v99.json"
bad 66 "$tmp/missing.json" -- compare "$tmp/base.json" "$tmp/missing.json"
bad 65 "$tmp/garbage.json" -- compare "$tmp/garbage.json" "$tmp/base.json"
bad 65 "topology snapshot" -- compare "$tmp/base.json" "$tmp/topo.json"
bad 65 "not a fabtop results file" -- compare "$tmp/v99.json" "$tmp/base.json"
bad 66 "$tmp/missing.json" -- report "$tmp/missing.json"
# Sizes that are no number of bytes a mix can have: one line naming the field and its range
# (compare printed "A -9223372036854775808B" for a size of 9.3e18).
python3 - "$tmp/base.json" "$tmp/hugesize.json" "$tmp/negpoint.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["mix"]["flows"][0]["size"] = 9.3e18
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
d["phases"][0]["flows"][0]["points"][0]["size_bytes"] = -1e300
json.dump(d, open(sys.argv[3], "w"))
EOF
# A flow without name, role or operation: the report says n/a, never "(null)".
python3 - "$tmp/base.json" "$tmp/noname.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("name", "role", "op"):
    del d["phases"][0]["flows"][0][k]
del d["phases"][0]["name"]
json.dump(d, open(sys.argv[2], "w"))
EOF
run 0 -- report "$tmp/noname.json"
has "$tmp/out" "Phase n/a" "  n/a (n/a, verbs n/a tx"
grep -q "(null)" "$tmp/out" && fail "report prints (null): $(grep "(null)" "$tmp/out")"
bad 65 "hugesize.json: mix.flows[0].size = 9.3e+18 is out of range 1-17179869184 (bytes)" -- \
    compare "$tmp/base.json" "$tmp/hugesize.json"
bad 65 "negpoint.json: phases[0].flows[0].points[0].size_bytes = -1e+300 is out of range" -- \
    report "$tmp/negpoint.json"
bad 65 "topology snapshot" -- report "$tmp/topo.json"
run 64 -- compare "$tmp/base.json"
has "$tmp/err" "needs two results files"
run 64 -- compare --bogus "$tmp/base.json" "$tmp/base.json"
run 64 -- report
run 0 -- compare --help
has "$tmp/out" "Usage: fabtop compare" "Exit status"
run 0 -- --help
has "$tmp/out" "compare" "report"

[ "$fails" -eq 0 ] || {
    echo "$fails failure(s)"
    exit 1
}
echo "all passed"
