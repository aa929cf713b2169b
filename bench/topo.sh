#!/bin/sh
# topo.sh: how long fabtop takes to load a topology and compute the affinity matrix,
# against lstopo-no-graphics on the same input, alternating runs (at least 11 each).
#   bench/topo.sh [BUILD_DIR]     (default build/)
# Prints medians in milliseconds, the p10-p90 spread, and fabtop/lstopo ratios.
# Targets: largest fixture load + matrix under 50 ms; live discovery under 1 s.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
fabtop=$build/bin/fabtop
bench=$build/bench/bench_topo
runs=${RUNS:-15}
data=${FABTOP_SHARED_DATA:-$here/../shared/data}
command -v lstopo-no-graphics >/dev/null || { echo "needs lstopo-no-graphics (hwloc-nox)"; exit 1; }
[ -x "$bench" ] || { echo "build first: cmake --build $build"; exit 1; }

# Wall time of one command in ms (process start-up included).
wall() {
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    echo "scale=3; ($e - $s) / 1000000" | bc
}

# median and p10-p90 of numbers on stdin
stats() {
    sort -n | awk '{v[NR]=$1} END {m=v[int((NR+1)/2)]; lo=v[int(NR*0.1)+1]; hi=v[int(NR*0.9+0.5)];
        printf "%.2f ms (p10-p90 %.2f-%.2f, n=%d)", m, lo, hi, NR}'
}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

compare() { # label, fabtop-args..., --, lstopo-args...
    label=$1
    shift
    fa=""
    while [ "$1" != "--" ]; do fa="$fa $1"; shift; done
    shift || true
    : >/tmp/bt.f; : >/tmp/bt.l; : >/tmp/bt.i
    i=0
    while [ $i -lt "$runs" ]; do
        # shellcheck disable=SC2086
        wall "$fabtop" topo --matrix $(echo "$fa" | sed 's/--live//') >>/tmp/bt.f
        wall lstopo-no-graphics "$@" --whole-io --of console >>/tmp/bt.l
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    "$bench" $fa "$runs" >/tmp/bt.i
    f=$(median </tmp/bt.f)
    l=$(median </tmp/bt.l)
    echo "$label"
    echo "  fabtop load+matrix, in process:      $(stats </tmp/bt.i)"
    echo "  fabtop topo --matrix, whole process: $(stats </tmp/bt.f)"
    echo "  lstopo-no-graphics, whole process:   $(stats </tmp/bt.l)"
    echo "  ratio fabtop/lstopo (median, whole process): $(echo "scale=2; $f / $l" | bc)"
}

echo "fabtop $("$fabtop" --version | cut -d' ' -f2), hwloc $(pkg-config --modversion hwloc), $(nproc) CPUs, $(date -u +%Y-%m-%d)"
largest=$(ls -S "$data"/hwloc-xml/*.xml 2>/dev/null | head -1 || true)
if [ -n "$largest" ]; then
    compare "Largest fixture: $(basename "$largest") ($(stat -c %s "$largest") bytes)" \
        --input "$largest" -- -i "$largest"
else
    echo "(shared data not found: fixture benchmark skipped)"
fi
compare "Live discovery on this machine" --live --
