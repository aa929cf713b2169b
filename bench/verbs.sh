#!/bin/sh
# verbs.sh: fabtop's verbs transport against perftest (ib_write_lat, ib_write_bw) on Soft-RoCE
# in the tests' qemu VM (tests/vm/rxe-vm.sh, TCG, single VM, rxe0 loopback), alternating
# ROUNDS times (default 11) in one VM run; prints median ratios with their spread.
#   bench/verbs.sh [BUILD_DIR]        (as root; the first run builds the VM image)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
ROUNDS=${ROUNDS:-11}
[ -x "$build/bin/fabtop" ] || { echo "build first: cmake --build $build"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The guest sees no host environment: the round count goes in front of the script.
{ echo "ROUNDS=$ROUNDS"; cat "$here/bench/verbs.guest.sh"; } >"$tmp/guest.sh"
sh "$here/tests/vm/rxe-vm.sh" --timeout $((120 + ROUNDS * 60)) \
    --bin "$build/bin/fabtop" --guest-script "$tmp/guest.sh" --outdir "$tmp/out" \
    --log "$tmp/console.log" || { tail -30 "$tmp/console.log"; exit 1; }
python3 "$here/bench/verbs_report.py" "$tmp/out" "$ROUNDS"
