#!/bin/sh
# nccl_fake: the nccl transport end to end on the stand-in CUDA runtime and NCCL
# (fake_cudanccl.c), so CI exercises what otherwise only runs on GPU machines: a checked sweep
# of every collective (results verified), CUDA graphs and several communicators, copy
# neighbours (pinned and pageable) in a quiet/loaded mix, the tuning and transport parsed from
# NCCL's debug output into the results, algbw/busbw per point, a hung operation failing within
# the mix's bound (non-blocking communicators, deadline, abort), ranks held by a peer agent in a
# second process, that agent killed mid-run, a missing GPU, and no device at all.
# Usage: nccl_fake.sh PATH/libfake_cudanccl.so
set -u
. "$(dirname "$0")/../ctl/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
lib=${1:?the fake CUDA/NCCL library}
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
spid=""
trap '[ -n "$spid" ] && kill -9 "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
export FABTOP_CUDART="$lib" FABTOP_NCCL="$lib" FAKE_CUDA_DEVICES=2
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# mixfile NAME FLOWS-JSON [TOP-LEVEL-FIELDS]: fail_bound_s is $BOUND (5 s: generous on a
# loaded CI machine; the hang and kill cases use 1 s).
BOUND=5
mixfile() {
    printf '{"format": "fabtop-mix", "version": 1, "name": "%s", "fail_bound_s": %s, "progress_deadline_s": %s, %s "flows": [%s]}\n' \
        "$1" "$BOUND" "$BOUND" "${3:-}" "$2" >"$tmp/$1.json"
    echo "$tmp/$1.json"
}
SWEEP='{"sweep": {"from": 64, "to": "64KiB", "factor": 32}}'
coll() { # NAME PARAMS [SIZE [DURATION [EXTRA]]]
    printf '{"name": "%s", "transport": "nccl", "op": "collective", "size": %s, "warmup_s": 0.05, "duration_s": %s, "params": %s %s}' \
        "$1" "${3:-$SWEEP}" "${4:-0.15}" "$2" "${5:-}"
}

# check FILE PYTHON: assertions over the results document d (the first flow is f).
check() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
flows = [f for ph in d["phases"] for f in ph["flows"]]
f = flows[0]
exec(sys.argv[2])
EOF
}

# 1. Every collective, checked, across sizes; some with graphs, in place, 3 communicators.
for c in all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv; do
    case $c in
    all_reduce) p='"dtype": "bf16", "redop": "avg", "graph": true, "in_place": true' ;;
    all_gather) p='"dtype": "half", "in_place": true' ;;
    reduce_scatter) p='"dtype": "float", "redop": "max", "in_place": true' ;;
    reduce) p='"dtype": "int32", "redop": "prod", "root": 1, "graph": true' ;;
    broadcast) p='"dtype": "double", "root": 1' ;;
    *) p='"dtype": "float", "graph": true' ;;
    esac
    m=$(mixfile "$c" "$(coll "$c" "{\"collective\": \"$c\", $p, \"check\": true}" "$SWEEP" 0 ', "concurrency": 3, "iterations": 600')")
    timeout 60 "$bin" run --mix "$m" -o "$tmp/$c.out.json" >"$tmp/log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { fail "$c: exit $rc"; cat "$tmp/log"; continue; }
    check "$tmp/$c.out.json" '
pts = f["points"]
assert f["status"] == "ok" and len(pts) == 3, f.get("error")
for p in pts:
    n = p["nccl"]
    assert n["check"]["wrong"] == 0 and n["check"]["checked_elements"] > 0, n["check"]
    assert n["host_timed"]["time_us"] > 0 and n["per_iteration"]["count"] > 0
    assert n["busbw_GBps"] > 0 and n["bw_from"] == "host_timed"
    assert p["latency"]["kind"] == "per_operation"
assert f["workers"] == 3
' && echo "PASS: $c checked on 3 sizes x 3 communicators" || fail "$c results"
done

# 2. The reported figures: busbw = algbw x 2(n-1)/n, tuning and transport from NCCL's log,
#    the note on event resolution, point_figures merged into the points.
m=$(mixfile sweep "$(coll ar '{"collective": "all_reduce", "gpus": [0, 1]}' '{"sweep": {"from": 8, "to": "64KiB", "factor": 8}}' 0 ', "iterations": 400')")
timeout 60 "$bin" run --mix "$m" -o "$tmp/sweep.out.json" >"$tmp/log" 2>&1 || fail "sweep: $(cat "$tmp/log")"
check "$tmp/sweep.out.json" '
c = f["conditions"]["nccl"]
assert "point_figures" not in f["conditions"]
assert c["transports"] == ["P2P/FAKE/read"] and c["nccl_version_log"] == "2.28.9+fake", c
assert c["channels"]["coll"] == 2 and c["busbw_factor"] == "2(n-1)/n"
assert "0.5 us" in c["timing"]["latency_note"] and "TUNING" in c["tuning_log"]
assert f["peer"] == "" and c["peer_ranks"] is None
for p in f["points"]:
    n = p["nccl"]
    h = n["host_timed"]
    assert abs(h["algbw_GBps"] - n["bytes"] / 1e9 / (h["time_us"] / 1e6)) < 1e-9 * h["algbw_GBps"] + 1e-12
    assert abs(n["busbw_GBps"] - n["algbw_GBps"]) < 1e-12  # 2 ranks: factor 1
    assert n["algo"] == "RING" and n["proto"] in ("LL", "SIMPLE"), n
    assert n["per_iteration"]["note"] == "CUDA events resolve about 0.5 us"
    assert n["per_iteration"]["mean_us"] >= 2.9  # the fake takes 3 us an operation
    # Gated batches: the enqueue time is reported apart from the operation time.
    assert n["enqueue_us_per_op"] > 0, n
assert "holds each stream" in c["timing"]["gate"], c["timing"]
' && echo "PASS: figures, tuning and transport in the results" || fail "sweep results"
# The text summary prints each point as nccl-tests does: the host-timed time, algbw and
# busbw from the results, and NCCL's algorithm/protocol; no TCP columns.
"$bin" report "$tmp/sweep.out.json" >"$tmp/report" 2>&1 || fail "report: $(cat "$tmp/report")"
python3 - "$tmp/sweep.out.json" "$tmp/report" <<'EOF' && echo "PASS: the summary shows time, algbw, busbw, algo/proto" || fail "summary: $(cat "$tmp/report")"
import json, sys
d = json.load(open(sys.argv[1]))
txt = open(sys.argv[2]).read()
assert "time us" in txt and "alg GB/s" in txt and "bus GB/s" in txt and "algo/proto" in txt and "retrans" not in txt, txt
assert "(foreground, nccl collective tx)" in txt, txt
pts = [p for p in d["phases"][0]["flows"][0]["points"] if p["measured"]]
rows = [l.split() for l in txt.splitlines() if l.strip().endswith(("/LL", "/SIMPLE"))]
assert len(rows) == len(pts), (rows, len(pts))
for r, p in zip(rows, pts):
    n = p["nccl"]
    assert abs(float(r[-2]) - round(n["busbw_GBps"], 2)) < 0.006, (r, n["busbw_GBps"])
    assert abs(float(r[-3]) - round(n["algbw_GBps"], 2)) < 0.006, (r, n["algbw_GBps"])
    assert r[-1] == "%s/%s" % (n["algo"], n["proto"]), r
EOF

# 3. Copy neighbours, quiet then loaded.
m=$(mixfile cont "$(coll ar '{"collective": "all_reduce"}' '"64KiB"' 0.4),
 {\"name\": \"h2d\", \"role\": \"background\", \"transport\": \"nccl\", \"op\": \"copy\", \"size\": \"1MiB\", \"warmup_s\": 0.01, \"params\": {\"copy\": \"h2d\"}},
 {\"name\": \"d2h\", \"role\": \"background\", \"transport\": \"nccl\", \"op\": \"copy\", \"direction\": \"rx\", \"size\": \"1MiB\", \"warmup_s\": 0.01, \"params\": {\"pinned\": false, \"gpus\": [1]}}" \
    '"phases": ["quiet", "loaded"],')
timeout 60 "$bin" run --mix "$m" -o "$tmp/cont.out.json" >"$tmp/log" 2>&1 || fail "contention: $(cat "$tmp/log")"
check "$tmp/cont.out.json" '
ph = {p["name"]: p for p in d["phases"]}
assert len(ph["quiet"]["flows"]) == 1 and len(ph["loaded"]["flows"]) == 3
c = {f["name"]: f for f in ph["loaded"]["flows"]}
assert c["h2d"]["points"][0]["copy"]["h2d_GBps"] > 0 and c["h2d"]["points"][0]["copy"]["d2h_GBps"] is None
assert c["d2h"]["points"][0]["copy"]["d2h_GBps"] > 0
assert "pageable" in c["d2h"]["conditions"]["copy"]["host_memory"]
assert "NonBlocking" in c["h2d"]["conditions"]["copy"]["streams"]
assert c["h2d"]["conditions"]["copy"]["lanes"] == ["GPU 0 h2d", "GPU 1 h2d"]
assert c["d2h"]["conditions"]["copy"]["lanes"] == ["GPU 1 d2h"]
assert d["summary"]["quiet"]["p99"] > 0 and d["summary"]["loaded"]["p99"] > 0
' && echo "PASS: copy neighbours, quiet vs loaded" || fail "contention results"
"$bin" report "$tmp/cont.out.json" >"$tmp/report" 2>&1 || fail "report: $(cat "$tmp/report")"
python3 - "$tmp/cont.out.json" "$tmp/report" <<'EOF' && echo "PASS: copies print GB/s per direction" || fail "copy summary: $(cat "$tmp/report")"
import json, sys
d = json.load(open(sys.argv[1]))
txt = open(sys.argv[2]).read()
assert "h2d GB/s" in txt and "d2h GB/s" in txt, txt
lines = txt.splitlines()
for name in ("h2d", "d2h"):
    f = [f for f in d["phases"][1]["flows"] if f["name"] == name][0]
    c = [p for p in f["points"] if p["measured"]][-1]["copy"]
    i = next(k for k, l in enumerate(lines) if l.strip().startswith(name + " (background"))
    row = lines[i + 3].split()
    want = ["n/a" if c[k] is None else "%.2f" % c[k] for k in ("h2d_GBps", "d2h_GBps")]
    assert row[-3:-1] == want, (name, row, want)
EOF

# 4. A hung operation: the flow fails within the bound, with the reason, and the run ends.
BOUND=1
m=$(mixfile hang "$(coll ar '{"collective": "all_reduce"}' '"64KiB"' 20)")
t0=$(date +%s)
FAKE_NCCL_HANG_AFTER=300 timeout 60 "$bin" run --mix "$m" -o "$tmp/hang.out.json" >"$tmp/log" 2>&1
rc=$?
t=$(($(date +%s) - t0))
[ $rc -eq 2 ] && [ $t -lt 15 ] || fail "hang: exit $rc after $t s"
check "$tmp/hang.out.json" '
assert f["status"] == "failed", f["status"]
assert "did not complete within 0.60 s" in f["error"] and "vanished or hangs" in f["error"], f["error"]
assert f["detected_after_last_progress_s"] < 1.6, f["detected_after_last_progress_s"]
assert any("communicators aborted" in e for e in d["events"]), d["events"]
print("PASS: a hung all_reduce fails after %.2f s without progress: %s" % (f["detected_after_last_progress_s"], f["error"]))
' || 
    fail "hang results"

# 5. Ranks in a second process: a peer agent holds GPU 1; then the same with the agent killed.
#    An agent serves NCCL only with --allow-nccl, and makes the unique ids itself (the
#    bootstrap root): every communicator, on both sides, uses an id the agent's process made.
"$bin" serve --gen-key "$tmp/key" >/dev/null 2>&1
BOUND=5
# serve_nccl [FLAGS]: an agent on a port it chooses (so no other test's port can collide);
# sets port and builds the mix "remote" that names it as the peer.
serve_nccl() {
    "$bin" serve --listen "127.0.0.1:0" --key-file "$tmp/key" "$@" --log "$tmp/serve.log" \
        2>>"$tmp/serve.log" &
    spid=$!
    port=$(serve_port "$tmp/serve.log")
    [ -n "$port" ] || { fail "the agent did not say where it listens: $(cat "$tmp/serve.log")"; exit 1; }
    peer='"peer": "127.0.0.1:'$port'"'
    m=$(mixfile remote "$(coll ar '{"collective": "all_reduce", "gpus": [0], "peer_gpus": [1], "graph": true}' "$SWEEP" 0 ", $peer, \"iterations\": 300")")
}
serve_nccl
timeout 60 "$bin" run --mix "$m" --key-file "$tmp/key" -o "$tmp/denied.out.json" >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "nccl.open: this agent does not serve NCCL to this key: NCCL's ranks connect to addresses the client's ranks advertise, so it is allowed per key ('fabtop serve --allow-nccl')" "$tmp/log" &&
    echo "PASS: without --allow-nccl the agent refuses NCCL, naming the flag" ||
    fail "NCCL not allowed -> $rc: $(cat "$tmp/log")"
kill "$spid"
wait "$spid" 2>/dev/null
rm -f "$tmp/serve.log"
FAKE_NCCL_ID_LOG=$tmp/ids.log serve_nccl --allow-nccl
FAKE_NCCL_ID_LOG=$tmp/ids.log timeout 60 "$bin" run --mix "$m" --key-file "$tmp/key" \
    -o "$tmp/remote.out.json" >"$tmp/log" 2>&1 ||
    { fail "remote: $(cat "$tmp/log")"; cat "$tmp/serve.log"; }
python3 - "$tmp/ids.log" "$spid" <<'EOF' && echo "PASS: the agent made every unique id" || fail "ids: $(cat "$tmp/ids.log")"
import sys
made, inits = {}, []
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "made":
        made[w[1]] = w[3]
    else:
        inits.append((w[1], w[5]))
assert made and set(made.values()) == {sys.argv[2]}, made
assert len({p for _, p in inits}) == 2 and all(made.get(u) == sys.argv[2] for u, _ in inits), inits
EOF
check "$tmp/remote.out.json" '
c = f["conditions"]["nccl"]
assert f["status"] == "ok", f["error"]
assert c["nranks"] == 2 and len(c["local_ranks"]) == 1 and "GPUs 1 (0000:19:00.0)" in c["peer_ranks"], c
assert f["peer"].startswith("127.0.0.1:")
for p in f["points"]:
    assert p["nccl"]["host_timed"]["iterations"] > 0 and p["nccl"]["per_iteration"]["count"] > 0
' && echo "PASS: ranks on a peer agent: $(grep -o 'nccl: [0-9] rank(s) joined.*' "$tmp/serve.log" | head -1)" ||
    fail "remote results"
BOUND=1
m=$(mixfile killed "$(coll ar '{"collective": "all_reduce", "gpus": [0], "peer_gpus": [1]}' '"64KiB"' 30 ", $peer")")
timeout 60 "$bin" run --mix "$m" --key-file "$tmp/key" -o "$tmp/killed.out.json" >"$tmp/log" 2>&1 &
rpid=$!
sleep 2
kill -9 "$spid"
spid=""
t0=$(date +%s)
wait "$rpid"
rc=$?
t=$(($(date +%s) - t0))
[ $rc -eq 2 ] && [ $t -lt 15 ] || fail "killed peer: exit $rc after $t s"
check "$tmp/killed.out.json" '
assert f["status"] == "failed", f["status"]
e = f["error"]
assert "did not complete within" in e or "peer 127.0.0.1" in e, e
print("PASS: killed peer agent -> failed after %.2f s without progress: %s" % (f["detected_after_last_progress_s"], e))
' ||
    fail "killed peer results: $(cat "$tmp/log")"

# 6. Setup errors are the flow's error; no device at all is "unavailable" (69).
m=$(mixfile nogpu "$(coll ar '{"collective": "all_reduce", "gpus": [0, 5]}' '"64KiB"')")
timeout 30 "$bin" run --mix "$m" >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "GPU 5 does not exist on this host (2 visible)" "$tmp/log" &&
    echo "PASS: a GPU that does not exist is named" || fail "gpus [0, 5] -> $rc: $(cat "$tmp/log")"
m=$(mixfile one "$(coll ar '{"collective": "all_reduce", "gpus": [1]}' '"64KiB"')")
timeout 30 "$bin" run --mix "$m" >"$tmp/log" 2>&1
grep -q "a collective needs at least 2 ranks" "$tmp/log" && echo "PASS: one rank is refused" ||
    fail "one rank: $(cat "$tmp/log")"
FAKE_CUDA_NO_DEVICE=1 timeout 30 "$bin" run --mix "$m" >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 69 ] && grep -q "unavailable here: no usable GPU: cudaGetDeviceCount" "$tmp/log" &&
    echo "PASS: no device -> 69" || fail "no device -> $rc: $(cat "$tmp/log")"

[ $fails -eq 0 ] || exit 1
