#!/bin/sh
# cli_tarball: `fabtop topo --sysfs-root` on the hwloc-gather tarball of a 2-socket Xeon
# (FABTOP_SHARED_DATA; exit 77 when absent) shows the ConnectX-3 at 0000:82:00.0 as mlx4_0
# with its FDR port, LID, SM LID and IPoIB netdev, and no NIC for the dangling scif0.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
data=${FABTOP_SHARED_DATA:-/work/shared/data}
tarball="$data/hwloc-fsroot/hwloc-tests_32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"
[ -f "$tarball" ] || { echo "no $tarball; skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xjf "$tarball" -C "$tmp" || exit 1
root="$tmp/32em64t-2n8c+1mic"
"$bin" topo --sysfs-root "$root" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
fails=0
check() {
    if grep -qF -- "$1" "$tmp/out"; then
        echo "PASS: output has: $1"
    else
        echo "FAIL: output lacks: $1"
        fails=$((fails + 1))
    fi
}
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; cat "$tmp/err"; fails=$((fails + 1)); }
[ -s "$tmp/err" ] && { echo "FAIL: unexpected stderr:"; cat "$tmp/err"; fails=$((fails + 1)); }
check "NIC mlx4_0 0000:82:00.0"
check "fw 2.11.500"
check "port 1: ACTIVE/LinkUp, InfiniBand, 56 Gb/s (4X FDR)"
check "LID 0x3a4"
check "SM LID 0x1"
check "netdev ib0"
check "scif0: /sys/class/infiniband/scif0 is a dangling link"
if grep -q "NIC scif0" "$tmp/out"; then
    echo "FAIL: scif0 shown as a NIC"
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
