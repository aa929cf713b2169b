#!/bin/sh
# ui_overhead.sh: what the explorer's drawing costs the measurement. The same loopback TCP
# ping-pong mix, alternately headless (`fabtop run --mix FILE -o res.json`) and in the
# explorer (`fabtop --run FILE` at 132x43 in a private tmux server, results saved with the w
# key), RUNS times each (default 11); prints the p50 and p99 ratios explorer/headless with
# their spread, and the explorer's UI (main) thread CPU use while the test runs, from
# /proc/PID/task/PID/schedstat (ns on CPU) and .../stat (utime + stime, clock ticks).
# Targets: median ratio <= 1.05 with 1.00 inside the ratios' interquartile range; UI thread
# at most 2% of a core.
#   bench/ui_overhead.sh [BUILD_DIR]        (RUNS=11 SECS=3 SIZE=64 by default)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
fabtop=$build/bin/fabtop
RUNS=${RUNS:-11}
SECS=${SECS:-3}
SIZE=${SIZE:-64}
for t in tmux python3; do
    command -v $t >/dev/null || { echo "needs $t (apt-get install tmux python3)"; exit 1; }
done
[ -x "$fabtop" ] || { echo "build first: cmake --build $build"; exit 1; }
tmp=$(mktemp -d)
sock=fabtop-ui-$$
cleanup() {
    tmux -L "$sock" kill-server 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

cat >"$tmp/pp.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "bench-ui",
 "flows": [{"name": "pp", "op": "pingpong", "size": $SIZE, "warmup_s": 0.5, "duration_s": $SECS}]}
J

# lat FILE: "p50 p99" of the ping-pong, microseconds (half round trip)
lat() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
l = r["phases"][0]["flows"][0]["points"][0]["latency"]
print(l["p50"], l["p99"])' "$1"
}

# cpu PID: "ns_on_cpu ticks" of the process's main thread (the explorer's UI thread)
cpu() {
    ns=$(cut -d' ' -f1 "/proc/$1/task/$1/schedstat")
    ticks=$(sed 's/^.*) //' "/proc/$1/task/$1/stat" | awk '{print $12 + $13}')
    echo "$ns $ticks"
}

now_ns() { date +%s%N; }

# wait_for TEXT SECONDS: poll the pane every 50 ms until TEXT shows; 1 on timeout
wait_for() {
    end=$(($(date +%s) + $2))
    while [ "$(date +%s)" -le $end ]; do
        tmux -L "$sock" capture-pane -p -t ui 2>/dev/null | grep -q -- "$1" && return 0
        sleep 0.05
    done
    echo "timed out waiting for '$1'; the screen was:" >&2
    tmux -L "$sock" capture-pane -p -t ui >&2 || true
    return 1
}

explorer_run() {
    rm -rf "$tmp/xdg"
    tmux -L "$sock" -f /dev/null new-session -d -s ui -x 132 -y 43 \
        -e TERM=tmux-256color -e LC_ALL=C.UTF-8 -e XDG_DATA_HOME="$tmp/xdg" \
        "exec '$fabtop' --run '$tmp/pp.json' --config-dir '$tmp/cfg'"
    pid=$(tmux -L "$sock" display-message -p -t ui '#{pane_pid}')
    # From the first frame of the live view (setup, warm-up, measuring) to the end.
    wait_for "Events" 60
    c0=$(cpu "$pid")
    t0=$(now_ns)
    # No polling while it measures: capture-pane would add load the headless run lacks.
    sleep "$SECS"
    wait_for "done after" 60
    c1=$(cpu "$pid")
    t1=$(now_ns)
    tmux -L "$sock" send-keys -t ui w
    wait_for "Results saved to" 10
    tmux -L "$sock" send-keys -t ui q
    while tmux -L "$sock" has-session -t ui 2>/dev/null; do sleep 0.05; done
    echo "$c0 $c1 $t0 $t1" | awk -v hz="$(getconf CLK_TCK)" '{
        wall = ($6 - $5) / 1e9
        printf "%.4f %.4f\n", ($3 - $1) / 1e9 / wall * 100, ($4 - $2) / hz / wall * 100 }' \
        >>"$tmp/cpu"
    lat "$(ls "$tmp"/xdg/fabtop/results/*.json)" >>"$tmp/explorer"
}

headless_run() {
    "$fabtop" run --mix "$tmp/pp.json" -o "$tmp/h.json" >/dev/null
    lat "$tmp/h.json" >>"$tmp/headless"
}

: >"$tmp/cpu"; : >"$tmp/explorer"; : >"$tmp/headless"
i=0
while [ $i -lt "$RUNS" ]; do
    # Alternate which goes first so a drift in the machine's load hits both alike.
    if [ $((i % 2)) -eq 0 ]; then headless_run; explorer_run; else explorer_run; headless_run; fi
    echo "pair $((i + 1)) of $RUNS done" >&2
    i=$((i + 1))
done

echo "fabtop $("$fabtop" --version | head -1 | awk '{print $NF}'), $(nproc) CPUs, $(date -u +%Y-%m-%d)"
echo "UI overhead: loopback TCP ping-pong ${SIZE} B, ${SECS} s measured per run, $RUNS alternating"
echo "pairs; explorer at 132x43 in tmux, drawing at most 10 frames/s; latency = half round trip"
python3 - "$tmp/headless" "$tmp/explorer" "$tmp/cpu" <<'P'
import statistics, sys

def rows(path):
    return [[float(x) for x in line.split()] for line in open(path) if line.strip()]

def q(v, p):
    # linear interpolation between order statistics (p in [0, 1])
    v = sorted(v)
    k = (len(v) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)

def line(v, unit):
    return "median %.3f%s (p25-p75 %.3f-%.3f, min-max %.3f-%.3f, n=%d)" % (
        statistics.median(v), unit, q(v, .25), q(v, .75), min(v), max(v), len(v))

h, e, c = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
for k, name in ((0, "p50"), (1, "p99")):
    hv, ev = [r[k] for r in h], [r[k] for r in e]
    ratio = [b / a for a, b in zip(hv, ev)]
    rel = [x / statistics.median(hv) for x in hv]
    print("  %s (us)" % name)
    print("    headless  %s" % line(hv, ""))
    print("    explorer  %s" % line(ev, ""))
    print("    ratio explorer/headless, per pair: %s" % line(ratio, ""))
    print("    ratio of the medians: %.3f" % (statistics.median(ev) / statistics.median(hv)))
    print("    headless run-to-run (each / their median): p25-p75 %.3f-%.3f" % (q(rel, .25), q(rel, .75)))
    m = statistics.median(ratio)
    one_inside = q(ratio, .25) <= 1.0 <= q(ratio, .75)
    m_inside = q(rel, .25) <= m <= q(rel, .75)
    print("    target median ratio <= 1.05 (per pair): %s" % ("met" if m <= 1.05 else "NOT met"))
    print("    no difference beyond the spread: %s (1.00 inside the ratios' p25-p75: %s;"
          " median ratio inside headless run-to-run p25-p75: %s)" % (
              "met" if one_inside or m_inside else "NOT met",
              "yes" if one_inside else "no", "yes" if m_inside else "no"))
sched, ticks = [r[0] for r in c], [r[1] for r in c]
print("  UI thread CPU while the test ran (% of one core)")
print("    schedstat %s" % line(sched, "%"))
print("    stat      %s" % line(ticks, "%"))
ok = statistics.median(sched) <= 2 and statistics.median(ticks) <= 2
print("    target <= 2%% (both medians): %s" % ("met" if ok else "NOT met"))
P
