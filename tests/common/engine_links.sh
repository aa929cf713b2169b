#!/bin/sh
# engine_links: the engine's libraries link in layers (engine/CMakeLists.txt,
# docs/architecture.md): each library's declared links (build/engine/engine_links.txt, written
# by CMake) name only libraries of a lower rank, and the simulator links common/ and libm only.
# Ranks, bottom up (libraries of one rank sit side by side and never link each other):
#   0 common topology | 1 sim sweep model launch path | 2 flow | 3 counters peer | 4 xport_tcp xport_verbs xport_nccl
#   xport_sim doctor | 5 xport results | 6 run judge | 7 rack
# With an argument, checks that file instead (to show a violation is caught).
set -u
links=${1:-${FABTOP_BUILD:?}/engine/engine_links.txt}
if [ ! -r "$links" ]; then
    echo "FAIL: $links is missing (configure the build first)"
    exit 1
fi

rank() {
    case $1 in
    fabtop_common | fabtop_topology) echo 0 ;;
    fabtop_sim | fabtop_sweep | fabtop_model | fabtop_launch | fabtop_path) echo 1 ;;
    fabtop_flow) echo 2 ;;
    fabtop_counters | fabtop_peer) echo 3 ;;
    fabtop_xport_tcp | fabtop_xport_verbs | fabtop_xport_nccl | fabtop_xport_sim | fabtop_doctor) echo 4 ;;
    fabtop_xport | fabtop_results) echo 5 ;;
    fabtop_run | fabtop_judge) echo 6 ;;
    fabtop_rack) echo 7 ;;
    fabtop_*) echo unknown ;;
    *) echo external ;;
    esac
}

fail=0
n=0
while IFS= read -r line; do
    lib=${line%%:*}
    deps=${line#*:}
    r=$(rank "$lib")
    n=$((n + 1))
    if [ "$r" = unknown ]; then
        echo "FAIL: $lib has no rank in tests/common/engine_links.sh"
        fail=1
        continue
    fi
    for d in $deps; do
        dr=$(rank "$d")
        if [ "$dr" = unknown ]; then
            echo "FAIL: $lib links $d, which has no rank"
            fail=1
        elif [ "$dr" != external ] && [ "$dr" -ge "$r" ]; then
            echo "FAIL: $lib (rank $r) links $d (rank $dr): not below it"
            fail=1
        fi
        if [ "$lib" = fabtop_sim ] && [ "$d" != fabtop_common ] && [ "$d" != m ]; then
            echo "FAIL: fabtop_sim links $d: the simulator depends on common/ only"
            fail=1
        fi
    done
done <"$links"
if [ "$n" -lt 15 ]; then
    echo "FAIL: $links lists $n libraries, expected the engine's 15"
    fail=1
fi
[ $fail = 0 ] && echo "PASS: $n engine libraries link only the layers below them"
exit $fail
