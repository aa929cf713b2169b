#!/bin/sh
# vm_rack_mpi: `fabtop sweep` launched by OpenMPI's real mpirun (orterun, its components and
# PMIx carried into the guest) on a node whose rail is an RDMA port: three ranks in the
# rxe-vm guest, every pair measured over TCP and over verbs on rxe0 (rack_mpi.guest.sh),
# judged here: the launcher recorded as mpirun, each verbs test's flow on rxe0, real figures.
# The namespace rack (tests/rack) has the launchers across hosts but no RDMA; this is the
# launcher and verbs together. Exit 0 pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_rack_mpi: FABTOP_BIN is not an executable" >&2; exit 1; }
sweep=$(dirname "$FABTOP_BIN")/fabtop-sweep
[ -x "$sweep" ] || { echo "SKIP: no fabtop-sweep beside $FABTOP_BIN (OpenMPI not found at build)"; exit 77; }
orterun=$(command -v orterun || true)
orted=$(command -v orted || true)
[ -n "$orterun" ] && [ -n "$orted" ] || { echo "SKIP: no orterun/orted (openmpi-bin)"; exit 77; }
lib=/usr/lib/x86_64-linux-gnu
for d in "$lib/openmpi" "$lib/pmix2" /usr/share/openmpi /etc/openmpi; do
    [ -d "$d" ] || { echo "SKIP: $d is missing (libopenmpi3, libpmix2, openmpi-common)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_rack_mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
rm -rf "$logdir/vm_rack_mpi.out"
rc=0
sh "$here/rxe-vm.sh" --pkg python3 --timeout 600 --bin "$FABTOP_BIN" --bin "$sweep" \
    --bin "$orterun" --bin "$orted" \
    --file "$lib/openmpi:$lib/openmpi" --file "$lib/pmix2:$lib/pmix2" \
    --file /usr/share/openmpi:/usr/share/openmpi --file /etc/openmpi:/etc/openmpi \
    --guest-script "$here/rack_mpi.guest.sh" --outdir "$logdir/vm_rack_mpi.out" \
    --log "$logdir/vm_rack_mpi.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_rack_mpi: the VM run failed (exit $rc); console log in $logdir" >&2; exit 1; }
out=$logdir/vm_rack_mpi.out
[ "$(cat "$out/mpirun.rc" 2>/dev/null)" = 0 ] ||
    { cat "$out/mpirun.out" "$out/mpirun.err" 2>/dev/null; echo "FAIL: mpirun fabtop sweep exited $(cat "$out/mpirun.rc" 2>/dev/null)"; exit 1; }
grep -q "3 ranks on 1 host, started by mpirun" "$out/mpirun.out" ||
    { cat "$out/mpirun.out"; echo "FAIL: no header line naming mpirun"; exit 1; }
python3 "$here/check_rack_verbs.py" "$out/sweep.json" mpirun
