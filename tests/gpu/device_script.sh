#!/bin/sh
# device_script: the logic of tests/gpu/device_run.sh and pack_carry.sh without a GPU. (1) With
# no GPU the device script exits 77 and says why. (2) With a pretend two-GPU machine (a fake
# nvidia-smi, and a fake fabtop that writes results shaped like the real ones) it runs every
# step in order, writes its mixes (each parses as a fabtop mix), keeps to at most 9 files in
# $OUT, and device_summary.py compares the figures with the references. (3) pack_carry.sh
# packs the real binary with libcjson and libsodium so that it runs from .carry/ alone.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
build=${FABTOP_BUILD:-$(dirname "$(dirname "$bin")")}
command -v bash >/dev/null 2>&1 || { echo "no bash: skipped"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
. "$(dirname "$0")/../common/cli_lib.sh"
mkdir -p "$tmp/nogpu" "$tmp/gpu2" "$tmp/mixes"

# (1) No GPU: a nvidia-smi that lists none.
printf '#!/bin/sh\nexit 0\n' >"$tmp/nogpu/nvidia-smi"
chmod +x "$tmp/nogpu/nvidia-smi"
PATH="$tmp/nogpu:$PATH" OUT="$tmp/out1" bash "$src/tests/gpu/device_run.sh" >"$tmp/log1" 2>&1
rc=$?
if [ $rc -eq 77 ] && grep -q "no GPU here" "$tmp/out1/device_run.log"; then
    echo "PASS: no GPU -> 77: $(grep 'no GPU' "$tmp/out1/device_run.log")"
else
    fail "no GPU -> $rc"
    cat "$tmp/log1"
fi

# (2) A pretend machine with two GPUs.
cat >"$tmp/gpu2/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
-L) printf 'GPU 0: NVIDIA H200 (UUID: GPU-0)\nGPU 1: NVIDIA H200 (UUID: GPU-1)\n' ;;
*) echo "fake nvidia-smi $*" ;;
esac
EOF
cat >"$tmp/gpu2/fake_results.py" <<'EOF'
import json, sys
mix_path, out = sys.argv[1], sys.argv[2]
m = json.load(open(mix_path))
def sizes(s):
    if isinstance(s, dict):
        sw = s["sweep"]
        def b(v):
            if isinstance(v, int): return v
            mult = {"KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}
            for k, f in mult.items():
                if v.endswith(k): return int(v[:-len(k)]) * f
            return int(v)
        x, out = b(sw["from"]), []
        while x <= b(sw["to"]):
            out.append(x); x *= sw.get("factor", 2)
        return out
    return [s if isinstance(s, int) else {"64KiB": 65536, "64MiB": 64 << 20}[s]]
killed = m["flows"][0].get("peer", "loopback") != "loopback"
phases = m.get("phases", ["loaded"])
doc = {"format": "fabtop-results", "version": 1, "mix": {"fail_bound_s": m.get("fail_bound_s", 2)},
       "summary": {"foreground": m["flows"][0]["name"]}, "events": ["e1", "e2"], "phases": []}
sock = "socket" in m["name"]
for ph in phases:
    fls = []
    for f in m["flows"]:
        if ph == "quiet" and f.get("role") == "background":
            continue
        pts = []
        for s in sizes(f["size"]):
            t = (110 if sock else 12) + s / ((3.5 if sock else 320) * 1e3)
            if ph == "loaded" and len(phases) == 2: t *= 1.5
            p = {"size_bytes": s, "measured": True,
                 "latency": {"p50": t, "p99": 1.4 * t, "p99.9": 1.6 * t, "max": 2 * t}}
            if f["op"] == "collective":
                bw = s / 1e9 / (t / 1e6)
                p["nccl"] = {"bytes": s, "algo": "RING", "proto": "LL",
                             "host_timed": {"time_us": t, "algbw_GBps": bw, "busbw_GBps": bw},
                             "per_iteration": {"mean_us": 1.1 * t, "min_us": 0.8 * t, "p50_us": t,
                                               "p99_us": 1.4 * t, "max_us": 2 * t, "count": 100},
                             "check": {"wrong": 0} if f.get("params", {}).get("check") else None}
            else:
                p["copy"] = {"h2d_GBps": 50.0, "d2h_GBps": 48.0}
            pts.append(p)
        fls.append({"name": f["name"], "role": f.get("role", "foreground"), "op": f["op"],
                    "status": "failed" if killed else "ok",
                    "error": "nccl: all_reduce did not complete within 2.00 s" if killed else None,
                    "failed_at_s": 5.1 if killed else None,
                    "detected_after_last_progress_s": 2.0 if killed else None,
                    "conditions": {"nccl": {"transports": ["P2P/CUMEM/read"]}}, "points": pts})
    doc["phases"].append({"name": ph, "flows": fls})
json.dump(doc, open(out, "w"))
sys.exit(2 if killed else 0)
EOF
cat >"$tmp/gpu2/fabtop" <<EOF
#!/bin/sh
# A fabtop that pretends: run writes results shaped like the real ones.
tmp=$tmp
case "\$1" in
--version) echo "fabtop (fake)"; exit 0 ;;
topo) for a; do [ "\$prev" = -o ] && echo '{}' >"\$a"; prev=\$a; done; echo "topology"; exit 0 ;;
serve)
    for a; do
        [ "\$prev" = --gen-key ] && { echo 0123 >"\$a"; exit 0; }
        [ "\$prev" = --log ] && log=\$a
        prev=\$a
    done
    echo "session 1: nccl: 1 rank(s) joined in 0.4 s" >>"\$log"
    exec sleep 60 ;;
run)
    for a; do
        [ "\$prev" = --mix ] && mix=\$a
        [ "\$prev" = -o ] && out=\$a
        prev=\$a
    done
    cp "\$mix" "\$tmp/mixes/"
    python3 "\$tmp/gpu2/fake_results.py" "\$mix" "\$out"
    exit \$? ;;
esac
exit 64
EOF
chmod +x "$tmp/gpu2/nvidia-smi" "$tmp/gpu2/fabtop"
PATH="$tmp/gpu2:$PATH" OUT="$tmp/out2" FABTOP_DEVICE_BIN="$tmp/gpu2/fabtop" \
    bash "$src/tests/gpu/device_run.sh" >"$tmp/log2" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "pretend 2 GPUs -> $rc"; tail -30 "$tmp/log2"; }
n=$(ls "$tmp/out2" | wc -l)
[ "$n" -le 9 ] && echo "PASS: $n files in \$OUT (at most 9): $(ls "$tmp/out2" | tr '\n' ' ')" ||
    fail "$n files in \$OUT"
for f in device_run.log topo.json nvlink.json socket.json socket_blocking.json contention.json kill.json \
    summary.json; do
    [ -s "$tmp/out2/$f" ] || fail "\$OUT/$f missing"
done
for s in topo nvlink_sweep socket_sweep socket_sweep_blocking contention contention_pageable check_all_reduce \
    check_sendrecv decode_graph decode_nograph; do
    grep -q "== $s: exit 0" "$tmp/out2/device_run.log" || fail "step $s did not run cleanly"
done
grep -q "kill: fabtop run exit 2" "$tmp/out2/device_run.log" || fail "kill demo"
grep -q "kill_socket: fabtop run exit 2" "$tmp/out2/device_run.log" || fail "kill demo (socket)"
python3 - "$tmp/out2/summary.json" <<'EOF' || fail "summary.json contents"
import json, sys
s = json.load(open(sys.argv[1]))
rows = {r["what"]: r for r in s["reference_comparison"]}
assert len(rows) == 10, rows
assert rows["NVLink busbw 512 MiB (host-timed), GB/s"]["pass"] is True, rows
assert rows["socket 64 KiB time (host-timed), us"]["ratio"] is not None
assert len(s["nvlink_vs_torch"]) == 28
assert s["kill"]["status"] == "failed" and s["kill"]["meta"]["run_exit"] == "2"
assert s["contention"]["p99_loaded_over_quiet"] > 1.4
assert s["contention"]["copies"]["h2d"]["h2d_GBps"] == 50.0
assert len(s["checks"]) == 7 and all(v["wrong"] == [0, 0, 0] for v in s["checks"].values()), s["checks"]
assert s["decode"]["points"] and s["decode_nograph"]["points"]
print("PASS: summary.json compares %d figures with the references" % len(rows))
EOF
# Every mix the script wrote parses as a fabtop mix (exit 69: parsed, then no CUDA here).
for m in "$tmp"/mixes/*.json; do
    FABTOP_CUDART=/nonexistent/libcudart.so.13 "$bin" run --mix "$m" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 69 ] || { fail "$(basename "$m") -> $rc: $(cat "$tmp/err")"; }
done
echo "PASS: $(ls "$tmp"/mixes | wc -l) generated mixes parse"

# (3) pack_carry.sh on the real binary.
if [ -x "$build/bin/fabtop" ]; then
    CARRY_DIR="$tmp/carry" sh "$src/tests/gpu/pack_carry.sh" "$build" >"$tmp/pack.log" 2>&1 ||
        { fail "pack_carry.sh"; cat "$tmp/pack.log"; }
    [ -n "$(find "$tmp/carry/lib" -name 'libcjson*')" ] || fail "libcjson not carried"
    [ -n "$(find "$tmp/carry/lib" -name 'libsodium*')" ] || fail "libsodium not carried"
    LD_LIBRARY_PATH="$tmp/carry/lib" "$tmp/carry/fabtop" --version >/dev/null 2>&1 ||
        fail "the carried fabtop does not start"
    grep -q "^carried: " "$tmp/carry/MANIFEST" && echo "PASS: pack_carry.sh: $(grep carried: "$tmp/carry/MANIFEST")"
fi
[ $fails -eq 0 ] || exit 1
