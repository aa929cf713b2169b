#!/bin/sh
# cli_sim.sh: fabtop run with the simulator's presets: --list names every sim/ preset shipped in
# engine/mixes/sim (as sim/NAME, never the topologies beside them); the summary shows a sim
# flow's goodput and completion in simulated time (the numbers in its results), not per
# wall-clock second; --expect gbps tests that simulated goodput; an all-sim mix opens no host
# counters; a sim stream's per-operation latency histogram is kept.
set -eu
bin=${FABTOP_BIN:?FABTOP_BIN is not set}
src=${FABTOP_SRC:?FABTOP_SRC is not set}
command -v jq >/dev/null 2>&1 || { echo "jq is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

# --list: every shipped sim preset, by its sim/ name, after the plain presets.
"$bin" run --list >"$tmp/list"
n=0
for f in "$src"/engine/mixes/sim/*.json; do
    name=sim/$(basename "$f" .json)
    grep -q "^$name " "$tmp/list" || fail "--list lacks $name"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no sim presets in $src/engine/mixes/sim"
if grep -q "topolog" "$tmp/list"; then fail "--list shows a topology file"; fi
first_sim=$(grep -n '^sim/' "$tmp/list" | head -1 | cut -d: -f1)
last_plain=$(grep -vn '^sim/' "$tmp/list" | tail -1 | cut -d: -f1)
[ "$last_plain" -lt "$first_sim" ] || fail "sim/ presets are not listed after the others"
echo "ok: --list shows the $n sim/ presets"

# The summary: simulated-time goodput and completion, as in the results file.
(cd "$tmp" && "$bin" run --mix sim/baseline -o "$tmp/b.json" >"$tmp/b.txt")
grep -q "in simulated time" "$tmp/b.txt" || fail "the summary does not say simulated time"
grep -q "sim Gb/s" "$tmp/b.txt" || fail "no sim Gb/s column"
if grep -q "wire Gb/s" "$tmp/b.txt"; then fail "wall-clock columns shown for sim flows"; fi
for flow in pingpong stream; do
    g=$(jq -r --arg f "$flow" '.phases[-1].flows[] | select(.name == $f)
        | .conditions.sim.results.goodput_gbps' "$tmp/b.json")
    c=$(jq -r --arg f "$flow" '.phases[-1].flows[] | select(.name == $f)
        | .conditions.sim.results.completion_us' "$tmp/b.json")
    want=$(printf '%.3f %.1f' "$g" "$c")
    # The flow's table row ends with those two numbers.
    row=$(awk -v f="  $flow " 'index($0, f) == 1 { on = 1; next } on && /^ +[0-9]/ { print; exit }' \
        "$tmp/b.txt")
    case "$row" in
    *"$(printf '%.3f' "$g")"*"$(printf '%.1f' "$c")") ;;
    *) fail "$flow: summary row '$row' does not end with the simulated '$want'" ;;
    esac
    # The wall-clock goodput of the point is not what is shown.
    w=$(jq -r --arg f "$flow" '.phases[-1].flows[] | select(.name == $f)
        | .points[0].goodput_gbps' "$tmp/b.json")
    case "$row" in *" $(printf '%.3f' "$w") "*) fail "$flow: wall-clock goodput $w shown" ;; esac
done
echo "ok: the summary shows simulated goodput and completion"

# A sim stream keeps its per-operation latencies (one sample per message).
jq -e '.phases[-1].flows[] | select(.name == "stream")
    | .latency_kind == "per_operation"
      and .points[0].latency.count == .points[0].ops and .points[0].ops > 0
      and (.points[0].latency.max - .conditions.sim.results.latency_max_us | fabs) < 0.01
          * .conditions.sim.results.latency_max_us' "$tmp/b.json" >/dev/null ||
    fail "the sim stream's latency histogram is missing or disagrees with the simulation"
echo "ok: sim stream latency is per operation, every message counted"

# No host counters for an all-sim mix: the phase's counters are null, the events say why.
jq -e '.phases[-1].counters == null
    and any(.events[]; test("every flow is simulated"))' "$tmp/b.json" >/dev/null ||
    fail "host counters were opened for an all-sim mix"
echo "ok: no host counters for an all-sim mix"

# --expect gbps tests the simulated goodput of the foreground.
g=$(jq -r '.phases[-1].flows[] | select(.name == "pingpong") | .conditions.sim.results.goodput_gbps' \
    "$tmp/b.json")
below=$(awk -v g="$g" 'BEGIN { printf "%.3f", g * 0.99 }')
above=$(awk -v g="$g" 'BEGIN { printf "%.3f", g * 1.01 }')
(cd "$tmp" && "$bin" run --mix sim/baseline --expect "gbps>$below" >/dev/null 2>"$tmp/e1") ||
    fail "gbps>$below failed against a simulated goodput of $g: $(cat "$tmp/e1")"
rc=0
(cd "$tmp" && "$bin" run --mix sim/baseline --expect "gbps>$above" >/dev/null 2>"$tmp/e2") || rc=$?
[ "$rc" -eq 1 ] || fail "gbps>$above: exit $rc, want 1"
grep -q "simulated time" "$tmp/e2" || fail "the violation does not say simulated time"
echo "ok: --expect gbps checks the simulated goodput"
