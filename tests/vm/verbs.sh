#!/bin/sh
# vm_verbs: fabtop's verbs transport on real Soft-RoCE traffic in the VM (verbs.guest.sh),
# judged on the host (check_verbs.py). Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_verbs: FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_verbs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_verbs.out"
rc=0
rrc=${1:?the vb_rr_client binary}
sh "$here/rxe-vm.sh" --pkg python3 --bin /usr/bin/setpriv --timeout 420 --bin "$FABTOP_BIN" \
    --bin "$rrc" \
    --guest-script "$here/verbs.guest.sh" --outdir "$logdir/vm_verbs.out" \
    --log "$logdir/vm_verbs.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_verbs: the VM run failed (exit $rc); console log in $logdir" >&2; exit 1; }
python3 "$here/check_verbs.py" "$logdir/vm_verbs.out"
