#!/bin/sh
# determinism.sh: two runs of one simulated mix with one seed give identical results files once
# the fields that measure the real machine are removed: wall-clock times (started_at, ended_at,
# duration_s, setup_s, teardown_s, measure_s and the rates computed from it, the wall-clock
# timeline, the events' timestamps; the events themselves are sorted because flow threads log
# in any order) and the real host's state, which the simulation does not touch: its counters
# (phases[].counters: SNMP and netdev) and its topology snapshot (free memory per NUMA node). Everything simulated must match byte
# for byte: histograms, operations, payload, and conditions.sim (results, counters, timeline).
set -eu
bin=${FABTOP_BIN:?FABTOP_BIN is not set}
command -v jq >/dev/null 2>&1 || { echo "jq is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
filter='del(.started_at, .ended_at, .duration_s, .topology)
  | .phases |= map(del(.duration_s, .counters)
      | .flows |= map(del(.setup_s, .teardown_s, .timeline)
          | .points |= map(del(.measure_s, .ops_per_s, .goodput_gbps, .wire_gbps))))
  | .events |= (map(sub("^ *[0-9.]+s "; "")) | sort)
  | .summary |= with_entries(.value |= (if type == "object" then del(.goodput_gbps) else . end))'
for mix in sim/incast-pfc sim/victim-dcqcn sim/link-failure sim/ib-incast-cc; do
    for i in 1 2; do
        (cd "$tmp" && "$bin" run --mix "$mix" -o "$tmp/run$i.json" >/dev/null)
        jq -S "$filter" "$tmp/run$i.json" >"$tmp/run$i.filtered"
    done
    # The simulated outcome is there (not filtered away by accident).
    jq -e '.phases[-1].flows[0].conditions.sim.fabric.events > 0' "$tmp/run1.filtered" >/dev/null
    if ! cmp -s "$tmp/run1.filtered" "$tmp/run2.filtered"; then
        echo "FAIL: $mix: two runs with one seed differ:"
        diff "$tmp/run1.filtered" "$tmp/run2.filtered" | head -20
        exit 1
    fi
    echo "ok: $mix: identical results (wall-clock fields and host state aside)"
done
