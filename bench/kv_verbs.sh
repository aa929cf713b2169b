#!/bin/sh
# kv_verbs.sh: fabtop's kv op over verbs (one KV request as a list of READs or WRITEs, timed
# per request) against perftest's ib_read_bw / ib_write_bw with the same descriptor size and
# depth, on Soft-RoCE in the tests' qemu VM (TCG, single VM, rxe0 loopback), alternating
# ROUNDS times (default 5) in one VM run; prints median goodput ratios with their spread, and
# beside them the cost of issuing descriptors: fabtop's work requests posted per CPU second of
# the posting thread (and of ibv_post_send alone), work requests per second per core.
#   bench/kv_verbs.sh [BUILD_DIR]        (as root; the first run builds the VM image)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
ROUNDS=${ROUNDS:-5}
[ -x "$build/bin/fabtop" ] || { echo "build first: cmake --build $build"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ echo "ROUNDS=$ROUNDS"; cat "$here/bench/kv_verbs.guest.sh"; } >"$tmp/guest.sh"
sh "$here/tests/vm/rxe-vm.sh" --timeout $((120 + ROUNDS * 60)) \
    --bin "$build/bin/fabtop" --guest-script "$tmp/guest.sh" --outdir "$tmp/out" \
    --log "$tmp/console.log" || { tail -30 "$tmp/console.log"; exit 1; }
python3 "$here/bench/kv_verbs_report.py" "$tmp/out" "$ROUNDS"
