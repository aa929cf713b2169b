#!/bin/sh
# vm_kv_verbs_pair: KV transfers over verbs between two rxe-vm guests on one virtio wire
# (kv_verbs_pair.guest.sh), so that the bytes cross a netdev; judged on the host
# (check_kv_verbs_pair.py). Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_kv_verbs_pair: FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_kv_verbs_pair.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_kv_verbs_pair.out"
"$FABTOP_BIN" serve --gen-key "$tmp/key" >/dev/null
rc=0
sh "$here/rxe-vm.sh" --mode pair --pkg python3 --timeout 480 --bin "$FABTOP_BIN" \
    --file "$tmp/key:/usr/share/fabtop-test/key" \
    --guest-script "$here/kv_verbs_pair.guest.sh" --outdir "$logdir/vm_kv_verbs_pair.out" \
    --log "$logdir/vm_kv_verbs_pair.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_kv_verbs_pair: the VM run failed (exit $rc); console logs in $logdir" >&2; exit 1; }
python3 "$here/check_kv_verbs_pair.py" "$logdir/vm_kv_verbs_pair.out"
