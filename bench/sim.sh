#!/bin/sh
# sim.sh: the fabric simulator's speed on one core: wall time of the 16-host 400 Gb/s incast
# (15 x 2 MB, 4 KB MTU) and events per second, and peak memory (bench/bench_sim.c). For
# reference, established packet simulators take 36 ms (htsim) and 161 ms (ns-3) for that run
# on these machines.
#   bench/sim.sh [BUILD_DIR] [RUNS]   (default build/ and 21; builds nothing: build it with
#   -O2 or -O3, e.g. the default RelWithDebInfo)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-21}
bench=$build/bench/bench_sim
[ -x "$bench" ] || { echo "build first: cmake --build $build --target bench_sim"; exit 1; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "fabtop simulator, ${cpu:-unknown CPU}, $(nproc) CPUs, build type ${type:-RelWithDebInfo (the default)}, $(date -u +%Y-%m-%d)"
# One core: pin to the last CPU when taskset is there.
pin=""
if command -v taskset >/dev/null 2>&1; then
    pin="taskset -c $(($(nproc) - 1))"
fi
$pin "$bench" "$runs"
