#!/bin/sh
# tcp.sh: fabtop's TCP transport against the standard tools on the same paths, in one run,
# alternating runs (RUNS, default 11, each SECS seconds):
#   ping-pong: fabtop p50 (half round trip) vs sockperf ping-pong p50 (also RTT/2), same
#              message size; target ratio fabtop/sockperf <= 1.02
#   bandwidth: fabtop stream goodput vs iperf3 (one connection); target ratio >= 0.98
# on loopback (127.0.0.1) and, as root, on a veth pair between two network namespaces;
# then the histogram's cost per recorded sample (bench/hist.sh).
#   bench/tcp.sh [BUILD_DIR]
# PLACEMENT=free (default) leaves the placement of each tool's two ends to the kernel, which
# keeps them on one CPU in some runs and on two in others (see bench/RESULTS.md: on a 2-core
# VM that decides a loopback stream's goodput by a factor of two); PLACEMENT=one runs every
# process of both tools (clients, servers, fabtop's agent) on CPU ${CPU:-0} with taskset, so
# the two tools are compared with the same placement.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
fabtop=$build/bin/fabtop
RUNS=${RUNS:-11}
SECS=${SECS:-3}
SIZE=${SIZE:-64}
PLACEMENT=${PLACEMENT:-free}
case $PLACEMENT in
free) pin="" ;;
one) pin="taskset -c ${CPU:-0}" ;;
*) echo "PLACEMENT must be free or one, not $PLACEMENT"; exit 64 ;;
esac
for t in sockperf iperf3 python3 taskset; do
    command -v $t >/dev/null || { echo "needs $t (apt-get install sockperf iperf3 python3)"; exit 1; }
done
[ -x "$fabtop" ] || { echo "build first: cmake --build $build"; exit 1; }
tmp=$(mktemp -d)
pids=""
ns=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    [ -n "$ns" ] && { ip netns del "$ns-a" 2>/dev/null; ip netns del "$ns-b" 2>/dev/null; }
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

cat >"$tmp/pp.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "bench-pp",
 "flows": [{"name": "pp", "op": "pingpong", "size": $SIZE, "warmup_s": 0.5, "duration_s": $SECS}]}
J
cat >"$tmp/bw.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "bench-bw",
 "flows": [{"name": "bw", "op": "stream", "size": "128KiB", "warmup_s": 0.5, "duration_s": $SECS}]}
J

jget() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# stats: median, p25-p75 and min-max of the numbers on stdin, and their count
stats() {
    python3 -c '
import sys, statistics
v = sorted(float(x) for x in sys.stdin.read().split())
q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0], v[0], v[0]]
print("median %.3f (p25-p75 %.3f-%.3f, min-max %.3f-%.3f, n=%d)"
      % (statistics.median(v), q[0], q[2], v[0], v[-1], len(v)))'
}

# path LABEL RUNNER IP: RUNNER prefixes commands for the client side ("" or "ip netns exec A");
# servers already listen at IP (sockperf :11111, iperf3 :5201, fabtop serve :7470 or loopback).
path() {
    label=$1 pre=$2 ip=$3 peer=$4
    : >"$tmp/pp.ratio"; : >"$tmp/bw.ratio"; : >"$tmp/pp.f"; : >"$tmp/pp.s"; : >"$tmp/bw.f"; : >"$tmp/bw.i"
    i=0
    while [ $i -lt "$RUNS" ]; do
        $pre $pin "$fabtop" run --mix "$tmp/pp.json" $peer --no-pin -o "$tmp/f.json" >/dev/null
        f=$(jget "$tmp/f.json" 'r["phases"][0]["flows"][0]["points"][0]["latency"]["p50"]')
        $pre $pin sockperf ping-pong --tcp -i "$ip" -p 11111 -m "$SIZE" -t "$SECS" --full-log "$tmp/s.csv" >"$tmp/s.out" 2>&1
        s=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$tmp/s.out" | tail -1)
        echo "$f" >>"$tmp/pp.f"; echo "$s" >>"$tmp/pp.s"
        echo "$f $s" | awk '{printf "%.4f\n", $1 / $2}' >>"$tmp/pp.ratio"

        $pre $pin "$fabtop" run --mix "$tmp/bw.json" $peer --no-pin -o "$tmp/f.json" >/dev/null
        f=$(jget "$tmp/f.json" 'r["phases"][0]["flows"][0]["points"][0]["goodput_gbps"]')
        $pre $pin iperf3 -c "$ip" -p 5201 -t "$SECS" -O 0.5 -J >"$tmp/i.json" 2>/dev/null
        g=$(jget "$tmp/i.json" 'r["end"]["sum_received"]["bits_per_second"] / 1e9')
        echo "$f" >>"$tmp/bw.f"; echo "$g" >>"$tmp/bw.i"
        echo "$f $g" | awk '{printf "%.4f\n", $1 / $2}' >>"$tmp/bw.ratio"
        i=$((i + 1))
    done
    echo "$label"
    echo "  ping-pong ${SIZE} B, p50 half round trip (us):"
    echo "    fabtop   $(stats <"$tmp/pp.f")"
    echo "    sockperf $(stats <"$tmp/pp.s")"
    echo "    ratio fabtop/sockperf: $(stats <"$tmp/pp.ratio")   target <= 1.02"
    echo "  stream, one connection, goodput (Gb/s):"
    echo "    fabtop   $(stats <"$tmp/bw.f")"
    echo "    iperf3   $(stats <"$tmp/bw.i")"
    echo "    ratio fabtop/iperf3: $(stats <"$tmp/bw.ratio")   target >= 0.98"
}

echo "fabtop $("$fabtop" --version | cut -d' ' -f2), $(sockperf --version 2>&1 | head -1), $(iperf3 --version | head -1 | cut -d' ' -f1-2)"
echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "$RUNS alternating runs of $SECS s each, placement $PLACEMENT${pin:+ ($pin)}; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Loopback: fabtop's in-process agent and the two tools' servers on 127.0.0.1.
$pin sockperf server --tcp -i 127.0.0.1 -p 11111 >/dev/null 2>&1 &
pids="$pids $!"
$pin iperf3 -s -B 127.0.0.1 -p 5201 >/dev/null 2>&1 &
pids="$pids $!"
sleep 0.5
path "Loopback 127.0.0.1" "" 127.0.0.1 ""

if [ "$(id -u)" -eq 0 ] && ip netns add "ftb$$-probe" 2>/dev/null; then
    ip netns del "ftb$$-probe"
    ns="ftb$$"
    ip netns add "$ns-a"; ip netns add "$ns-b"
    ip -n "$ns-a" link set lo up; ip -n "$ns-b" link set lo up
    ip link add va netns "$ns-a" type veth peer name vb netns "$ns-b"
    ip -n "$ns-a" addr add 10.80.0.1/24 dev va; ip -n "$ns-b" addr add 10.80.0.2/24 dev vb
    ip -n "$ns-a" link set va up; ip -n "$ns-b" link set vb up
    "$fabtop" serve --gen-key "$tmp/key" >/dev/null
    ip netns exec "$ns-b" $pin sockperf server --tcp -i 10.80.0.2 -p 11111 >/dev/null 2>&1 &
    pids="$pids $!"
    ip netns exec "$ns-b" $pin iperf3 -s -B 10.80.0.2 -p 5201 >/dev/null 2>&1 &
    pids="$pids $!"
    ip netns exec "$ns-b" $pin "$fabtop" serve --listen 10.80.0.2:7470 --key-file "$tmp/key" \
        --max-rate 1000 --max-duration 600 >/dev/null 2>&1 &
    pids="$pids $!"
    sleep 0.5
    path "veth between two network namespaces (10.80.0.1 -> 10.80.0.2)" \
        "ip netns exec $ns-a" 10.80.0.2 "--peer 10.80.0.2 --key-file $tmp/key"
else
    echo "(not root: the veth path was skipped)"
fi

if [ -x "$build/bench/bench_hist" ]; then
    echo "Histogram cost per recorded sample:"
    RUNS=11 RECORDS=20000000 sh "$here/bench/hist.sh" "$build" | sed 's/^/  /'
fi
