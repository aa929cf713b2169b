#!/bin/sh
# test_blame: the rule that tells libhwloc's own crashes from fabtop's (fuzz_lib.sh,
# fuzz_blame), on reports of real findings kept in blame/: a file named hwloc-*.txt must be
# blamed on hwloc, fabtop-*.txt on fabtop (a heap read, a UBSan report, a broken round trip,
# a leak allocated through fabtop, a report without a stack).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export FUZZ_LIB_DIR="$here"
. "$here/fuzz_lib.sh"
fails=0 n=0
for f in "$here"/blame/*.txt; do
    want=$(basename "$f" | sed 's/-.*//')
    got=$(fuzz_blame "$f")
    n=$((n + 1))
    if [ "${got%% *}" = "$want" ]; then
        echo "PASS: $(basename "$f") -> $got"
    else
        echo "FAIL: $(basename "$f") -> $got (want $want)"
        fails=$((fails + 1))
    fi
done
[ "$n" -gt 0 ] || { echo "FAIL: no reports in $here/blame"; exit 1; }
[ "$fails" -eq 0 ]
