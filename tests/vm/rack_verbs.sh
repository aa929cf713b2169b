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
python3 - "$out/sweep.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
by = {}
for t in d["tests"]:
    by.setdefault(t.get("transport", "tcp"), []).append(t)
bad = [(t.get("transport"), t["src"], t["dst"], t["step"], t.get("error")) for t in d["tests"] if t["status"] != "ok"]
assert not bad, bad
assert sorted(by) == ["tcp", "verbs"], sorted(by)
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
tcp = [p for p in d["pairs"] if p.get("transport") == "tcp"]
assert len(tcp) == 3, tcp
print("PASS: 3 ranks on rxe0: 9 TCP and 9 verbs tests ok; verbs bandwidth %s Gb/s, p50 %s us" % (
    ", ".join("%.3g" % p["bw_ab_gbps"] for p in pairs), ", ".join("%.3g" % p["lat_p50_us"] for p in pairs)))
PY
