#!/bin/sh
# fuzz.sh: long fuzzing sessions of fabtop's libFuzzer targets (tests/fuzz/README.md).
# Usage: scripts/fuzz.sh [-t SECONDS] [-o DIR] [-b BUILD] [-j JOBS] [-s TARGET=DIR]...
#                        [TARGET...]
#   -t SECONDS   time per target (default 600)
#   -o DIR       where the corpora (DIR/corpus/TARGET, kept and grown from run to run),
#                findings (DIR/artifacts/TARGET) and logs (DIR/TARGET.log) go
#                (default ./fuzz-out)
#   -b BUILD     the clang fuzz build directory (default build-fuzz; configured and built
#                here when it has no fuzz targets yet)
#   -j JOBS      libFuzzer -fork=JOBS: fuzzing processes at once (default 1)
#   -s T=DIR     more seeds for target T, read only (e.g. hwloc_xml=../shared/data/hwloc:
#                data that must not be committed can seed a run from where it lies)
#   TARGET       mix results expect topo_json hwloc_xml cabling theme sim_params sim_topo
#                config ctl_agent ctl_client ctl_requests launch_record launch_groups
#                launch_env (default: all)
# Fork mode with -ignore_crashes=1 keeps going past findings; each finding is replayed and
# blamed on fabtop or libhwloc (tests/fuzz/fuzz_lib.sh). Prints per target executions, time,
# coverage (cov: code edges, ft: features), corpus size and findings; exit 1 when a finding
# is fabtop's.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
export FUZZ_LIB_DIR="$here/tests/fuzz"
. "$FUZZ_LIB_DIR/fuzz_lib.sh"
secs=600 out=./fuzz-out build=$here/build-fuzz jobs=1 extra=""
all="mix results expect topo_json hwloc_xml cabling theme sim_params sim_topo config \
ctl_agent ctl_client ctl_requests launch_record launch_groups launch_env"
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
while getopts t:o:b:j:s:h opt; do
    case $opt in
    t) secs=$OPTARG ;;
    o) out=$OPTARG ;;
    b) build=$OPTARG ;;
    j) jobs=$OPTARG ;;
    s) extra="$extra $OPTARG" ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
targets=${*:-$all}
case $secs$jobs in *[!0-9]*) usage ;; esac
for t in $targets; do
    case " $all " in *" $t "*) ;; *) echo "fuzz.sh: unknown target '$t' (targets: $all)" >&2; exit 64 ;; esac
done

if [ ! -x "$build/tests/fuzz/fuzz_mix" ]; then
    command -v clang >/dev/null || { echo "fuzz.sh: needs clang (scripts/deps.sh)" >&2; exit 69; }
    CC=clang cmake -S "$here" -B "$build" -DFABTOP_FUZZ=ON -DFABTOP_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
fi
cmake --build "$build" -j"$(nproc)" >/dev/null || { echo "fuzz.sh: build failed" >&2; exit 1; }
fuzz_env
mkdir -p "$out" || exit 73
summary=$out/summary.txt
printf '%-11s %12s %7s %6s %7s %7s %8s %s\n' target executions time_s cov ft corpus fabtop hwloc |
    tee "$summary"
bad=0
for t in $targets; do
    bin=$build/tests/fuzz/fuzz_$t
    mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
    seeds="$here/tests/fuzz/corpus/$t"
    for e in $extra; do
        [ "${e%%=*}" = "$t" ] && seeds="$seeds ${e#*=}"
    done
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" -fork="$jobs" -ignore_crashes=1 -max_total_time="$secs" -timeout=20 \
        -rss_limit_mb=2048 -artifact_prefix="$out/artifacts/$t/" "$out/corpus/$t" $seeds \
        >"$out/$t.log" 2>&1
    t1=$(date +%s)
    fuzz_triage "$bin" "$out/artifacts/$t" >"$out/$t.findings"
    nf=$(grep -c '^[a-z]* fabtop ' "$out/$t.findings")
    nh=$(grep -c '^[a-z]* hwloc ' "$out/$t.findings")
    # shellcheck disable=SC2046
    set -- $(fuzz_stats "$out/$t.log")
    printf '%-11s %12s %7s %6s %7s %7s %8s %s\n' "$t" "$1" $((t1 - t0)) "$2" "$3" "$4" "$nf" "$nh" |
        tee -a "$summary"
    [ "$nf" -gt 0 ] && bad=1
done
for t in $targets; do
    [ -s "$out/$t.findings" ] || continue
    echo "== $t: distinct findings (count, kind, whose, first frame; reports in FILE.txt):"
    fuzz_group "$out/$t.findings"
done
exit $bad
