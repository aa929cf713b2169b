#!/bin/sh
# run_short.sh: the fuzz tests ctest runs (label fuzz; tests/fuzz/CMakeLists.txt).
#   run_short.sh replay BIN CORPUS WORK MODE         every committed input once (seconds)
#   run_short.sh fuzz BIN CORPUS WORK MODE SECS SEED  a short fuzzing run from the corpus
# MODE plain: any crash, leak, sanitizer report or timeout fails the test. MODE fork (the
# hwloc XML target): libFuzzer's fork mode with -ignore_crashes=1 keeps going past crashes;
# each finding is then replayed and blamed (fuzz_lib.sh): one in fabtop's code fails the
# test, one inside libhwloc itself is listed and tolerated. New inputs and findings go to
# WORK (in the build tree, emptied first), never into the committed corpus. SEED 0: random.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export FUZZ_LIB_DIR="$here"
. "$here/fuzz_lib.sh"
fuzz_env
what=$1 bin=$2 corpus=$3 work=$4 mode=$5
[ -d "$corpus" ] || { echo "FAIL: no corpus directory $corpus"; exit 1; }
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts" || exit 1
log=$work/log

if [ "$what" = replay ]; then
    n=$(find "$corpus" -type f | wc -l)
    "$bin" -runs=0 -timeout=30 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" \
        "$corpus" >"$log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        tail -n 40 "$log"
        echo "FAIL: $(basename "$bin") on its corpus ($n inputs): exit $rc; findings in $work/artifacts"
        exit 1
    fi
    echo "PASS: $(basename "$bin") replayed $n inputs of $corpus (cov $(fuzz_stats "$log" | cut -d' ' -f2))"
    exit 0
fi

secs=$6 seed=$7
seedopt=""
[ "$seed" != 0 ] && seedopt="-seed=$seed"
t0=$(date +%s)
if [ "$mode" = fork ]; then
    # shellcheck disable=SC2086
    "$bin" -fork=1 -ignore_crashes=1 $seedopt -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" "$work/corpus" "$corpus" \
        >"$log" 2>&1
else
    # shellcheck disable=SC2086
    "$bin" $seedopt -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$corpus" \
        >"$log" 2>&1
fi
rc=$?
t1=$(date +%s)
# shellcheck disable=SC2046
set -- $(fuzz_stats "$log")
summary="$1 executions in $((t1 - t0))s, cov $2, ft $3, corpus $4 (seed $seed)"
bad=0
fuzz_triage "$bin" "$work/artifacts" >"$work/triage" 2>&1
grep '^[a-z]* hwloc ' "$work/triage" >"$work/triage.hwloc"
if [ "$mode" = fork ] && [ -s "$work/triage.hwloc" ]; then
    echo "NOTE: $(wc -l <"$work/triage.hwloc") finding(s) inside libhwloc itself (tolerated):"
    fuzz_group "$work/triage.hwloc"
fi
while read -r kind who file frame; do
    [ "$who" = hwloc ] && [ "$mode" = fork ] && continue
    echo "FINDING: $kind in $who: $file: $frame"
    echo "  replay: $bin $file   (report: $file.txt)"
    bad=$((bad + 1))
done <"$work/triage"
if [ "$mode" != fork ] && [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    bad=1
    echo "FINDING: exit $rc without an artifact"
fi
if [ "$bad" -ne 0 ]; then
    tail -n 40 "$log"
    echo "FAIL: $(basename "$bin"): $bad finding(s); $summary"
    exit 1
fi
echo "PASS: $(basename "$bin"): $summary"
