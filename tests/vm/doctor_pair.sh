#!/bin/sh
# vm_doctor_pair: `fabtop doctor` between two rxe-vm guests on one virtio wire
# (doctor_pair.guest.sh): netdev MTU 1500 against 4200 named before any queue pair, then a
# real queue pair walked at path MTU 4096 (rxe accepts it; the messages die: retry exceeded)
# and the fix proven at 1024; a missing GID index named and the port's own GID proven; clean
# when matched; judged on the host (check_doctor_pair.py).
# Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_doctor_pair: FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_doctor_pair.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_doctor_pair.out"
"$FABTOP_BIN" serve --gen-key "$tmp/key" >/dev/null
rc=0
sh "$here/rxe-vm.sh" --mode pair --timeout 480 --bin "$FABTOP_BIN" \
    --file "$tmp/key:/usr/share/fabtop-test/key" \
    --guest-script "$here/doctor_pair.guest.sh" --outdir "$logdir/vm_doctor_pair.out" \
    --log "$logdir/vm_doctor_pair.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_doctor_pair: the VM run failed (exit $rc); console logs in $logdir" >&2; exit 1; }
python3 "$here/check_doctor_pair.py" "$logdir/vm_doctor_pair.out"
