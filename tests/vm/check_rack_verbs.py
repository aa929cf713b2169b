#!/usr/bin/env python3
"""check_rack_verbs: judge a sweep document of three ranks on rxe0 (argv[1]; argv[2], when
given, the launcher the document must record): every test ok, 9 TCP and 9 verbs pair tests,
each verbs flow on rxe0, every verbs and TCP pair measured with real figures. Used by
rack_verbs.sh (no launcher) and rack_mpi.sh (mpirun)."""
import json
import sys

d = json.load(open(sys.argv[1]))
if len(sys.argv) > 2:
    assert d["launcher"] == sys.argv[2], d["launcher"]
    assert d["status"] == "ok", d["status"]
    assert [r["rank"] for r in d["ranks"]] == [0, 1, 2], d["ranks"]
    for r in d["ranks"]:
        assert r["nics"] and r["nics"][0]["rdma_dev"] == "rxe0", r["nics"]
by = {}
for t in d["tests"]:
    if t["pattern"] == "pairs":
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
print("PASS: %s3 ranks on rxe0: 9 TCP and 9 verbs tests ok; verbs bandwidth %s Gb/s, p50 %s us" % (
    "%s, " % sys.argv[2] if len(sys.argv) > 2 else "",
    ", ".join("%.3g" % p["bw_ab_gbps"] for p in pairs), ", ".join("%.3g" % p["lat_p50_us"] for p in pairs)))
