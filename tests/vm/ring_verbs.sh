#!/bin/sh
# vm_ring_verbs: a ring all-reduce's message pattern (op collective) over fabtop's verbs
# transport on Soft-RoCE in the VM (ring_verbs.guest.sh), judged on the host
# (check_ring_verbs.py). Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_ring_verbs: FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_ring_verbs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_ring_verbs.out"
rc=0
sh "$here/rxe-vm.sh" --pkg python3 --timeout 300 --bin "$FABTOP_BIN" \
    --file "$here/../../engine/models/Llama-3.1-8B.json:/usr/share/fabtop-test/Llama-3.1-8B.json" \
    --guest-script "$here/ring_verbs.guest.sh" --outdir "$logdir/vm_ring_verbs.out" \
    --log "$logdir/vm_ring_verbs.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_ring_verbs: the VM run failed (exit $rc); console log in $logdir" >&2; exit 1; }
python3 "$here/check_ring_verbs.py" "$logdir/vm_ring_verbs.out"
