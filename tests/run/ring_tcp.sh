#!/bin/sh
# ring_tcp: a ring all-reduce's message pattern over loopback TCP (op collective, engine/flow/
# ring.h). `fabtop run --model Llama-3.1-8B --tp 4 --transport tcp`: the TP flows are ring
# all-reduces of 4 ranks emulated between this host and its peer, labelled so (not NCCL); each
# all-reduce ran 2 (N - 1) = 6 steps of ceil(S / 4) bytes each way (payload = all-reduces x 2
# x 6 x chunk), its latency (one sample per all-reduce) is at least 6 x the shortest measured
# step, and algbw/busbw follow nccl-tests' all_reduce arithmetic. Then a hand mix whose S does
# not divide by N (the chunk rounds up; the summary labels it and prints its steps), a bad
# ranks refused (65), and the peer's agent killed mid-run failing the flow with its reason (2).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}

check='
import json, sys
d = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
n = 0
for ph in d["phases"]:
    for f in ph["flows"]:
        if f["name"] not in want:
            continue
        S, N = want[f["name"]]
        n += 1
        assert f["status"] == "ok", f.get("error")
        assert f["op"] == "collective" and f["transport"] == "tcp", (f["op"], f["transport"])
        assert f["latency_kind"] == "per_operation", f["latency_kind"]
        label = "ring all-reduce pattern over tcp, %d ranks emulated between this host and its peer (not NCCL)" % N
        c = f["conditions"]["ring"]
        assert c["pattern"] == label and c["ranks"] == N, c
        steps, chunk = 2 * (N - 1), -(-S // N)
        assert c["steps_per_allreduce"] == steps and c["chunk_bytes"] == chunk, c
        p = f["points"][0]
        r = p["ring"]
        assert r["pattern"] == label, r
        assert (r["ranks"], r["size_bytes"], r["chunk_bytes"]) == (N, S, chunk), r
        assert r["steps_per_allreduce"] == steps, r
        assert r["bytes_per_allreduce_each_way"] == steps * chunk, r
        assert p["ops"] > 0, p["ops"]
        # Both directions, whole all-reduces only.
        assert p["payload_bytes"] == p["ops"] * 2 * steps * chunk, (p["payload_bytes"], p["ops"])
        # The figures count the same window (an all-reduce per worker may fall either side).
        nw = f["workers"]
        assert abs(r["allreduces"] - p["ops"]) <= nw, (r["allreduces"], p["ops"])
        assert r["steps"] == r["allreduces"] * steps, r
        lat = p["latency"]
        assert lat["kind"] == "per_operation" and lat["unit"] == "us", lat
        assert abs(lat["count"] - r["allreduces"]) <= nw, (lat["count"], r["allreduces"])
        # An all-reduce waits for all its steps.
        assert lat["min"] >= steps * r["step_min_us"] * 0.99, (lat["min"], r["step_min_us"])
        assert r["allreduce_mean_us"] >= steps * r["step_mean_us"] * (1 - 1e-9), r
        assert r["step_min_us"] <= r["step_mean_us"] <= r["step_max_us"], r
        assert abs(lat["mean"] - r["allreduce_mean_us"]) <= 0.05 * r["allreduce_mean_us"], (lat["mean"], r)
        alg = S / (r["allreduce_mean_us"] * 1e3)
        assert abs(r["algbw_GBps"] - alg) <= 1e-9 * alg, (r["algbw_GBps"], alg)
        assert abs(r["busbw_GBps"] - alg * steps / N) <= 1e-9 * alg, r
        assert r["busbw_factor"] == steps / N and "10^9 bytes" in r["bandwidth"], r
assert n >= len(want), (n, want)
'

# 1. The model's mix: Llama-3.1-8B at TP 4, batch 32: S = 4096 x 32 x 2 B = 256 KiB, 64 KiB a
#    step; the decode all-reduce is the foreground (quiet and loaded).
"$bin" run --model Llama-3.1-8B --tp 4 --transport tcp --duration 1 --json >"$tmp/m.json" \
    2>"$tmp/err" || bad "fabtop run --model --transport tcp failed: $(tail -3 "$tmp/err")"
python3 - "$tmp/m.json" <<'PY' || bad "the model mix's tp flows are not ring all-reduces"
import json, sys
d = json.load(open(sys.argv[1]))
mf = {f["name"]: f for f in d["mix"]["flows"]}
f = mf["tp-decode-ring4"]
assert f["op"] == "collective" and f["params"] == {"collective": "all_reduce", "ranks": 4}, f
assert f["per_step"] == 64, f["per_step"]  # 32 layers x 2 all-reduces, not x their steps
assert f["size"] == 4096 * 32 * 2, f["size"]
assert "tp-prefill-ring4" in mf
assert "ring all-reduce's message pattern" in d["mix"]["lesson"], d["mix"]["lesson"]
PY
python3 -c "$check" "$tmp/m.json" '{"tp-decode-ring4": [262144, 4]}' ||
    bad "the decode all-reduce's steps, bytes or timing"

# 2. S = 1,000,001 B over 3 ranks: 4 steps of 333,334 B (the remainder padded).
cat >"$tmp/ring.json" <<'JSON'
{"format": "fabtop-mix", "version": 1, "name": "ring-odd", "phases": ["loaded"],
 "flows": [{"name": "ar3", "transport": "tcp", "op": "collective", "size": 1000001,
            "warmup_s": 0.2, "duration_s": 1, "concurrency": 2,
            "params": {"collective": "all_reduce", "ranks": 3}}]}
JSON
"$bin" run --mix "$tmp/ring.json" -o "$tmp/r.json" >"$tmp/r.txt" 2>"$tmp/err" ||
    bad "fabtop run of the hand ring mix failed: $(tail -3 "$tmp/err")"
# The summary says what ran, and its steps.
grep -q '^      ring all-reduce pattern over tcp, 3 ranks emulated between this host and its peer (not NCCL)$' \
    "$tmp/r.txt" || bad "the summary does not label the ring: $(cat "$tmp/r.txt")"
grep -Eq '^      4 steps of 333334 B each way, step mean [0-9.]+ us, algbw [0-9.]+ GB/s, busbw [0-9.]+ GB/s$' \
    "$tmp/r.txt" || bad "the summary has no step line: $(cat "$tmp/r.txt")"
python3 -c "$check" "$tmp/r.json" '{"ar3": [1000001, 3]}' 2>"$tmp/err" ||
    bad "the odd-sized all-reduce: $(tail -2 "$tmp/err")"

# 3. A ring of one rank is refused before any traffic, naming the field (65).
sed 's/"ranks": 3/"ranks": 1/' "$tmp/ring.json" >"$tmp/bad.json"
"$bin" run --mix "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 65 ] || bad "ranks 1: exit $rc, want 65"
grep -q "params.ranks" "$tmp/err" || bad "ranks 1: the message does not name params.ranks: $(cat "$tmp/err")"

# 4. The peer's agent killed in the middle of the all-reduces: the flow fails (exit 2) naming
#    the ring step and the closed connection, within a few seconds.
"$bin" serve --gen-key "$tmp/key" >/dev/null || bad "fabtop serve --gen-key"
"$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" >"$tmp/serve.log" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
n=0 port=
until [ -n "$port" ]; do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\):.*/\1/p' "$tmp/serve.log")
    n=$((n + 1)); [ $n -le 100 ] || { bad "fabtop serve never listened: $(cat "$tmp/serve.log")"; break; }
    [ -n "$port" ] || sleep 0.05
done
sed 's/"duration_s": 1/"duration_s": 20/' "$tmp/ring.json" >"$tmp/long.json"
t0=$(date +%s)
"$bin" run --mix "$tmp/long.json" --peer 127.0.0.1:$port --key-file "$tmp/key" \
    -o "$tmp/k.json" >"$tmp/k.out" 2>&1 &
cli=$!
sleep 1.5
kill $srv
wait $cli
rc=$?
t1=$(date +%s)
[ $rc = 2 ] || bad "agent killed: exit $rc, want 2 (a flow failed)"
[ $((t1 - t0)) -le 10 ] || bad "agent killed: the run took $((t1 - t0)) s"
python3 - "$tmp/k.json" <<'PY' || bad "agent killed: the failure is not named"
import json, sys
f = json.load(open(sys.argv[1]))["phases"][0]["flows"][0]
assert f["status"] == "failed", f["status"]
assert "ring all-reduce step" in f["error"] and "closed" in f["error"], f["error"]
PY
grep -q "tcp: collective tx" "$tmp/serve.log" || bad "the agent did not log the ring's flow"

[ $fail = 0 ] && echo "PASS: ring all-reduce pattern over loopback TCP"
exit $fail
