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
python3 - "$out/sweep.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "fabtop-sweep" and d["status"] == "ok", d["status"]
assert d["launcher"] == "mpirun", d["launcher"]
assert [r["rank"] for r in d["ranks"]] == [0, 1, 2], d["ranks"]
for r in d["ranks"]:
    assert r["nics"] and r["nics"][0]["rdma_dev"] == "rxe0", r["nics"]
by = {}
for t in d["tests"]:
    if t["pattern"] == "pairs":
        by.setdefault(t.get("transport", "tcp"), []).append(t)
assert sorted(by) == ["tcp", "verbs"], sorted(by)
bad = [(t.get("transport"), t["src"], t["dst"], t["step"], t.get("error")) for t in d["tests"] if t["status"] != "ok"]
assert not bad, bad
assert len(by["verbs"]) == 9 and len(by["tcp"]) == 9, (len(by["verbs"]), len(by["tcp"]))
for t in by["verbs"]:
    f = t["run"]["phases"][0]["flows"][0]
    assert f["transport"] == "verbs" and f["status"] == "ok", f.get("error")
    assert f["conditions"]["rdma_device"] == "rxe0", f["conditions"].get("rdma_device")
pairs = [p for p in d["pairs"] if p.get("transport") == "verbs"]
assert len(pairs) == 3, pairs
for p in pairs:
    assert not p["failed"] and p["bw_ab_gbps"] > 0 and p["bw_ba_gbps"] > 0, p
    assert p["lat_p50_us"] > 0 and p["lat_p99_us"] >= p["lat_p50_us"], p
print("PASS: mpirun -np 3 fabtop sweep on rxe0: 9 TCP and 9 verbs tests ok; verbs bandwidth %s Gb/s, p50 %s us" % (
    ", ".join("%.3g" % p["bw_ab_gbps"] for p in pairs), ", ".join("%.3g" % p["lat_p50_us"] for p in pairs)))
PY
