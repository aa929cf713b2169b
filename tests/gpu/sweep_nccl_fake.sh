#!/bin/sh
# sweep_nccl_fake: fabtop sweep between GPU ranks under a real mpirun on this host, with the
# stand-in CUDA runtime and NCCL (fake_cudanccl.c; real GPUs are the device issue's run):
# each rank records the GPUs NCCL can use, every pair is measured over TCP and then over
# NCCL (a sendrecv between rank a's GPU and rank b's, latency then bandwidth), the NCCL
# matrix is its own (transport "nccl" in tests, pairs and the heat map), and without the
# runtime no NCCL test is planned. Args: the fake library. Needs mpirun and python3.
set -u
lib=${1:?the fake CUDA/NCCL library}
bin=${FABTOP_BIN:?}
command -v mpirun >/dev/null || { echo "SKIP: mpirun is absent (openmpi-bin)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d /tmp/fabtop-sweepnccl.XXXXXX)
export XDG_RUNTIME_DIR="$tmp"
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
mpi() { timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none "$@"; }
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE

# 3 ranks, each the GPU of its local rank (0, 1, 2 of the stand-in's 4).
mpi -np 3 -x FABTOP_CUDART="$lib" -x FABTOP_NCCL="$lib" -x FAKE_CUDA_DEVICES=4 \
    -x NCCL_NVLS_ENABLE=0 -x XDG_RUNTIME_DIR \
    "$bin" sweep --listen 127.0.0.1 --pattern pairs --duration 0.3 -o "$tmp/sweep.json" \
    >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "the sweep exited $?"; }
cat "$tmp/out"
python3 - "$tmp/sweep.json" <<'PY' || fail "the sweep document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok", d["status"]
tests = d["tests"]
by = {}
# The first pass's tests (a loaded machine may add a re-test of a noisy pair: pattern recheck).
for t in tests:
    if t["pattern"] == "pairs":
        by.setdefault(t.get("transport", "tcp"), []).append(t)
assert set(by) == {"tcp", "nccl"}, set(by)
# Every pair of 3 ranks: TCP's 3 steps, NCCL's 2, all ok.
assert len(by["tcp"]) == 9 and len(by["nccl"]) == 6, (len(by["tcp"]), len(by["nccl"]))
assert all(t["status"] == "ok" for t in tests), [(t["src"], t["dst"], t["error"]) for t in tests if t["status"] != "ok"]
for t in by["nccl"]:
    f = t["run"]["phases"][0]["flows"][0]
    assert f["transport"] == "nccl" and f["status"] == "ok", f.get("error")
    c = f["conditions"]["nccl"]
    assert c["nranks"] == 2, c
    # a's GPU here, b's on b's agent (the rank's local rank's GPU).
    assert c["local_ranks"][0]["cuda_device"] == t["src"], (t["src"], c["local_ranks"])
    assert "GPUs %d " % t["dst"] in c["peer_ranks"], (t["dst"], c["peer_ranks"])
    assert f["peer"] == d["ranks"][t["dst"]]["address"], (f["peer"], d["ranks"][t["dst"]])
pairs = {(p["a"], p["b"], p.get("transport", "tcp")): p for p in d["pairs"]}
for a, b in [(0, 1), (0, 2), (1, 2)]:
    ab = (min(a, b), max(a, b))
    keys = [k for k in pairs if {k[0], k[1]} == set(ab)]
    assert sorted(k[2] for k in keys) == ["nccl", "tcp"], keys
    n = [pairs[k] for k in keys if k[2] == "nccl"][0]
    # sendrecv moves both directions at once: one rate for both.
    assert n["bw_ab_gbps"] > 0 and n["bw_ba_gbps"] == n["bw_ab_gbps"], n
    assert n["lat_p50_us"] > 0 and not n["failed"], n
print("ok: 3 GPU ranks: %d TCP and %d NCCL tests, NCCL sendrecv median %.3g Gb/s" % (
    len(by["tcp"]), len(by["nccl"]),
    sorted(p["bw_ab_gbps"] for p in d["pairs"] if p.get("transport") == "nccl")[1]))
PY
grep -q "^nccl bandwidth a<->b (sendrecv algbw, both ways at once)" "$tmp/out" ||
    fail "no NCCL heat map in the report"
grep -qE "^fabtop sweep 3 ranks: 3/3 pairs measured, .*; nccl 3 pairs, bandwidth median " "$tmp/out" ||
    fail "the summary line does not count the NCCL pairs"
echo "ok: the NCCL heat map and summary printed"

# Two GPUs for three ranks of one host: local ranks 0 and 2 both take GPU 0 (bus id
# 0000:18:00.0), which NCCL refuses twice in one communicator, so their pair has TCP tests
# only and an event says why; pairs 0-1 and 1-2 have NCCL ones, and the sweep is ok.
mpi -np 3 -x FABTOP_CUDART="$lib" -x FABTOP_NCCL="$lib" -x FAKE_CUDA_DEVICES=2 \
    -x NCCL_NVLS_ENABLE=0 -x XDG_RUNTIME_DIR \
    "$bin" sweep --listen 127.0.0.1 --pattern pairs --duration 0.3 --json >"$tmp/shared.json" \
    2>"$tmp/err" || { cat "$tmp/err"; fail "the sweep with a shared GPU exited $?"; }
python3 - "$tmp/shared.json" <<'PY' || fail "the sweep with a shared GPU"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok", (d["status"], [t.get("error") for t in d["tests"] if t["status"] != "ok"])
nccl = sorted({(t["src"], t["dst"]) for t in d["tests"] if t.get("transport") == "nccl"})
assert [tuple(sorted(p)) for p in nccl] == [(0, 1), (1, 2)], nccl
tcp = {tuple(sorted((t["src"], t["dst"]))) for t in d["tests"] if t.get("transport", "tcp") == "tcp"}
assert tcp == {(0, 1), (0, 2), (1, 2)}, tcp
ev = [e for e in d["events"] if "share GPU 0000:18:00.0" in e]
assert len(ev) == 1 and "ranks 0, 2 on " in ev[0], d["events"]
print("ok: ranks 0 and 2 share a GPU: no NCCL test between them, said once:", ev[0])
PY

# Without a CUDA runtime (FABTOP_CUDART pointing nowhere): TCP only, no NCCL test planned.
mpi -np 2 -x FABTOP_CUDART="$tmp/none.so" -x FABTOP_NCCL="$tmp/none.so" -x XDG_RUNTIME_DIR \
    "$bin" sweep --listen 127.0.0.1 --pattern pairs --duration 0.3 --json >"$tmp/plain.json" \
    2>"$tmp/err" || { cat "$tmp/err"; fail "the sweep without NCCL exited $?"; }
python3 - "$tmp/plain.json" <<'PY' || fail "the sweep without NCCL"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok"
assert {t.get("transport", "tcp") for t in d["tests"]} == {"tcp"}, d["tests"]
assert len(d["pairs"]) == 1
print("ok: without CUDA and NCCL only TCP tests, 1 pair")
PY
