#!/bin/sh
# vm_rack_verbs: fabtop sweep's rounds over verbs on real Soft-RoCE traffic in the VM
# (rack_verbs.c via rack_verbs.guest.sh), judged here: every pair of three ranks measured over
# TCP and over verbs (a matrix each), each verbs test's flow on rxe0 with the RDMA device
# the member named, its figures real. Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prog=${1:?the rack_verbs binary}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_rack_verbs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_rack_verbs.out"
rc=0
sh "$here/rxe-vm.sh" --pkg python3 --timeout 420 --bin "$prog" \
    --guest-script "$here/rack_verbs.guest.sh" --outdir "$logdir/vm_rack_verbs.out" \
    --log "$logdir/vm_rack_verbs.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_rack_verbs: the VM run failed (exit $rc); console log in $logdir" >&2; exit 1; }
out=$logdir/vm_rack_verbs.out
[ "$(cat "$out/rack_verbs.rc" 2>/dev/null)" = 0 ] ||
    { cat "$out/rack_verbs.log" 2>/dev/null; echo "FAIL: rack_verbs did not write its document"; exit 1; }
python3 "$here/check_rack_verbs.py" "$out/sweep.json"
