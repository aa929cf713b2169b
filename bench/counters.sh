#!/bin/sh
# counters.sh: fabtop's own CPU cost of reading every counter of an 8-NIC node ten times a
# second (a synthetic tree: 8 mlx5-like devices with counters/ and hw_counters/, 8 netdevs),
# from getrusage over SECONDS of sampling, as % of one core; then the same tree read in full
# every sample and by a naive open/read/close reader, for comparison.
#   bench/counters.sh [BUILD_DIR] [SECONDS] [COMPARE_SECONDS]   (default build/, 30, 10)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
bench=$build/bench/bench_counters
[ -x "$bench" ] || { echo "build first: cmake --build $build --target bench_counters"; exit 1; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
fs=$(df -T /tmp | awk 'NR == 2 {print $2}')
echo "fabtop counters, ${cpu:-unknown CPU}, $(nproc) CPUs, /tmp on $fs, $(date -u +%Y-%m-%d)"
"$bench" "${2:-30}" "${3:-10}"
