#!/bin/sh
# hist.sh: what fabtop's latency histogram costs: ns per hist_record (median of 11 runs of
# 10^8 records of varying latencies), and the cost of hist_snapshot and hist_stats.
#   bench/hist.sh [BUILD_DIR]     (default build/; builds nothing)
# RECORDS and RUNS in the environment override 10^8 and 11.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
bench=$build/bench/bench_hist
[ -x "$bench" ] || { echo "build first: cmake --build $build --target bench_hist"; exit 1; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "fabtop histogram, ${cpu:-unknown CPU}, $(nproc) CPUs, $(date -u +%Y-%m-%d)"
"$bench" "${RECORDS:-100000000}" "${RUNS:-11}"
