#!/bin/sh
# vm_kv_verbs: KV-cache transfers (op kv) over fabtop's verbs transport on Soft-RoCE in the VM
# (kv_verbs.guest.sh), judged on the host (check_kv_verbs.py). Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_kv_verbs: FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_kv_verbs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_kv_verbs.out"
rc=0
sh "$here/rxe-vm.sh" --pkg python3 --timeout 420 --bin "$FABTOP_BIN" \
    --file "$here/../../engine/mixes/traces/kv-small.jsonl:/usr/share/fabtop-test/kv-small.jsonl" \
    --guest-script "$here/kv_verbs.guest.sh" --outdir "$logdir/vm_kv_verbs.out" \
    --log "$logdir/vm_kv_verbs.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_kv_verbs: the VM run failed (exit $rc); console log in $logdir" >&2; exit 1; }
python3 "$here/check_kv_verbs.py" "$logdir/vm_kv_verbs.out"
