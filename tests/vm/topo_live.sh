#!/bin/sh
# vm_topo_live: run `fabtop topo` (JSON and text) in a Soft-RoCE guest and check on the host
# that it reports rxe0, its port, its RoCE v2 GID and veth0. Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${FABTOP_BIN:-}" ] || { echo "vm_topo_live: FABTOP_BIN is not set (run through ctest)" >&2; exit 1; }
[ -x "$FABTOP_BIN" ] || { echo "vm_topo_live: $FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_topo_live.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rc=0
sh "$here/rxe-vm.sh" --pkg python3 --bin "$FABTOP_BIN" --guest-script "$here/topo_live.guest.sh" \
    --outdir "$tmp/out" --log "$logdir/vm_topo_live.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_topo_live: the VM run failed (exit $rc); console log in $logdir" >&2; exit 1; }
python3 "$here/check_topo_live.py" "$tmp/out"
