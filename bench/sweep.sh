#!/bin/sh
# sweep.sh: planning and judging a fabtop sweep of 1,024 ranks x 8 rails (4.19 M rail-aligned
# pairs, groups of 32): time of the pairs tournament, of the verdicts and the second pass's
# plan, and the peak RSS, against the targets of issue 16 (under 2 s, under 512 MB).
#   bench/sweep.sh [BUILD_DIR] [RANKS RAILS PER_GROUP]     (default build/, 1024 8 32)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
[ $# -gt 0 ] && shift
bench=$build/bench/bench_sweep
[ -x "$bench" ] || { echo "build first: cmake --build $build --target bench_sweep"; exit 1; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "fabtop sweep planning and verdicts, ${cpu:-unknown CPU}, $(nproc) CPUs, $(date -u +%Y-%m-%d)"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" "$@"
