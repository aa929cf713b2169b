#!/bin/sh
# determinism.sh: two runs of one simulated mix with one seed give identical results files.
# With --reproducible, fabtop leaves out what measures the real machine (wall-clock times and
# the rates computed from them, the wall-clock timelines, the events' times and order, the
# host's counters), so the two files must match byte for byte (cmp). Without it, the same holds
# once jq removes those fields here: wall-clock times (started_at, ended_at, duration_s,
# setup_s, teardown_s, measure_s and the rates computed from it, the wall-clock timeline, the
# events' timestamps; the events themselves are sorted because flow threads log in any order)
# and the host's counters (phases[].counters, null for an all-sim mix anyway). Everything
# simulated must match: histograms, operations, payload, and conditions.sim (results, counters,
# timeline). A simulated run records nothing of the host it ran on that other programs change
# under it: its conditions are the simulated fabric's only (no netdev MTUs, no sysctls) and it
# embeds no host topology (whose netdevs come and go), so the documents of two runs match even
# when interfaces appear on the host between or during them.
set -eu
bin=${FABTOP_BIN:?FABTOP_BIN is not set}
command -v jq >/dev/null 2>&1 || { echo "jq is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
filter='del(.started_at, .ended_at, .duration_s)
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
    # Nothing of the host's interfaces or sysctls: the run's conditions hold the simulated
    # fabric only, each flow's its simulated endpoints (and that no CPU was pinned).
    host_keys='^(netdev_mtu|netdevs|mtu_by_netdev|tcp_congestion_control|tcp_ecn|tcp_rmem|tcp_wmem)$'
    jq -e --arg hk "$host_keys" '(.conditions | keys) == ["sim"]
        and (.conditions.sim.topology | type == "string")
        and ([paths | select(.[-1] | tostring | test($hk))] | length) == 0
        and .topology == null
        and all(.phases[].flows[]; ((.conditions | keys) - ["sim", "worker_cpus"]) == [])' \
        "$tmp/run1.json" >/dev/null || {
        echo "FAIL: $mix: the results hold host state: conditions $(jq -c '.conditions' \
            "$tmp/run1.json" | cut -c1-300), topology $(jq -c '.topology | type' "$tmp/run1.json")"
        exit 1
    }
    if ! cmp -s "$tmp/run1.filtered" "$tmp/run2.filtered"; then
        echo "FAIL: $mix: two runs with one seed differ:"
        diff "$tmp/run1.filtered" "$tmp/run2.filtered" | head -20
        exit 1
    fi
    echo "ok: $mix: identical results (wall-clock fields and host state aside)"
    # --reproducible: the files themselves are identical.
    for i in 1 2; do
        (cd "$tmp" && "$bin" run --mix "$mix" --reproducible -o "$tmp/repro$i.json" >/dev/null)
    done
    if ! cmp "$tmp/repro1.json" "$tmp/repro2.json"; then
        echo "FAIL: $mix: two --reproducible runs with one seed give different files:"
        diff "$tmp/repro1.json" "$tmp/repro2.json" | head -20
        exit 1
    fi
    # What it left out is null, and nothing simulated went with it.
    jq -e '.started_at == null and .ended_at == null and .duration_s == null
        and (.reproducible | type == "string")
        and all(.phases[]; .duration_s == null and .counters == null
            and all(.flows[]; .setup_s == null and .timeline == null
                and all(.points[]; .measure_s == null and .goodput_gbps == null)))
        and all(.events[]; test("^ *[0-9.]+s ") | not)
        and (.phases[-1].flows[0].conditions.sim.fabric.events > 0)
        and .topology == null' "$tmp/repro1.json" >/dev/null || {
        echo "FAIL: $mix: --reproducible left a wall-clock field, or dropped a simulated one"
        exit 1
    }
    # The same simulated outcome as the plain run's.
    jq -S "$filter" "$tmp/repro1.json" >"$tmp/repro1.filtered"
    jq -S "$filter" "$tmp/run1.json" | jq -S 'del(.reproducible)' >"$tmp/run1.refiltered"
    jq -S 'del(.reproducible)' "$tmp/repro1.filtered" >"$tmp/repro1.refiltered"
    if ! cmp -s "$tmp/run1.refiltered" "$tmp/repro1.refiltered"; then
        echo "FAIL: $mix: --reproducible changed the simulated outcome:"
        diff "$tmp/run1.refiltered" "$tmp/repro1.refiltered" | head -20
        exit 1
    fi
    echo "ok: $mix: --reproducible files identical (cmp)"
done
