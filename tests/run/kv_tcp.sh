#!/bin/sh
# kv_tcp: KV-cache transfers over loopback TCP (`fabtop run --mix` with kv flows): a vLLM
# pull (poisson arrivals), an SGLang push (runs of pages, back to back) and a TensorRT-LLM push
# of layer blocks driven by the shipped Mooncake-format trace (prefix reuse). The results hold
# the requests, the per-request latency (kind per_request, positive, its sum within the
# measured time for the back-to-back flow: the timing covers the whole transfer), bytes =
# requests x bytes per request, the per-descriptor figure; the kv-requests preset finds its
# trace beside it from any directory; bad kv params are refused with one line naming the
# field (65).
set -u
bin=${FABTOP_BIN:?}
src=${FABTOP_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}

cat >"$tmp/kv.json" <<JSON
{"format": "fabtop-mix", "version": 1, "name": "kv-tcp-test", "phases": ["loaded"],
 "flows": [
  {"name": "kv-vllm", "role": "foreground", "transport": "tcp", "op": "kv", "size": 4096,
   "warmup_s": 0.2, "duration_s": 1.5,
   "params": {"engine": "vllm", "layers": 8, "pages": 32, "depth": 64,
              "arrival": {"process": "poisson", "rate_per_s": 100}}},
  {"name": "kv-sglang", "role": "foreground", "transport": "tcp", "op": "kv", "size": 4096,
   "warmup_s": 0.2, "duration_s": 1.5,
   "params": {"engine": "sglang", "layers": 8, "pages": 32, "run_pages": 8}},
  {"name": "kv-trtllm", "role": "foreground", "transport": "tcp", "op": "kv", "size": 2048,
   "warmup_s": 0.2, "duration_s": 1.5, "concurrency": 2,
   "params": {"engine": "trtllm", "layout": "flash", "layers": 4, "layers_per_block": 2,
              "page_tokens": 16,
              "arrival": {"process": "trace", "trace": "$src/engine/mixes/traces/kv-small.jsonl"}}}
 ]}
JSON
timeout 60 "$bin" run --mix "$tmp/kv.json" --json -o "$tmp/r.json" >/dev/null 2>"$tmp/err" ||
    bad "fabtop run --mix (kv flows) failed: $(cat "$tmp/err")"
python3 - "$tmp/r.json" <<'PY' || bad "the kv results are not what was posted"
import json, sys
d = json.load(open(sys.argv[1]))
flows = {f["name"]: f for p in d["phases"] for f in p["flows"]}
for name, per_req in [("kv-vllm", 8 * 2 * 32 * 4096), ("kv-sglang", 8 * 32 * 4096),
                      ("kv-trtllm", None)]:
    f = flows[name]
    assert f["status"] == "ok", (name, f["status"], f.get("error"))
    assert f["latency_kind"] == "per_request", f["latency_kind"]
    assert f["conditions"]["kv"]["timed"].startswith("per request"), f["conditions"]["kv"]
    p = f["points"][0]
    n = p["ops"]
    assert n >= 3, (name, "requests", n)
    lat = p["latency"]
    assert lat["kind"] == "per_request" and lat["count"] == n, (name, lat)
    assert 0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"], lat
    kv = p["kv"]
    if per_req:
        assert kv["bytes_per_request_min"] == kv["bytes_per_request_max"] == per_req, kv
        assert p["payload_bytes"] == n * per_req, (name, p["payload_bytes"], n, per_req)
    else:
        lo, hi = kv["bytes_per_request_min"], kv["bytes_per_request_max"]
        assert lo < hi, kv  # prefix reuse and prompt lengths: requests differ
        assert n * lo <= p["payload_bytes"] <= n * hi, (p["payload_bytes"], n, lo, hi)
        assert p["payload_bytes"] % (2048 * 2) == 0, p["payload_bytes"]  # whole K+V pages
    pd = kv["per_descriptor"]
    assert kv["descriptors"] > 0 and 0 < pd["p50_us"] <= pd["p99.9_us"] <= pd["max_us"], kv
    # A descriptor is done no later than its request.
    assert pd["max_us"] <= lat["max"] * 1.01, (pd, lat)
    print(name, n, "requests, p50", round(lat["p50"], 1), "us, p99.9", round(lat["p99.9"], 1),
          "us, descriptor p50", round(pd["p50_us"], 1), "us")
# vllm: 512 descriptors of 4 KiB each (8 layers x K and V x 32 pages), poisson at 100/s.
v = flows["kv-vllm"]["points"][0]
assert v["kv"]["descriptors_per_request_min"] == 512, v["kv"]
assert 0.5 * 150 < v["ops"] < 1.5 * 150, v["ops"]
# sglang back to back on one connection: the requests' times add up to the window (the timing
# covers each request's whole transfer, nothing between them), within 15 %.
s = flows["kv-sglang"]["points"][0]
assert s["kv"]["descriptors_per_request_min"] == 8 * 4, s["kv"]  # runs of 8 pages
busy = s["latency"]["mean"] * s["ops"] / 1e6
assert 0.85 * s["measure_s"] <= busy <= 1.01 * s["measure_s"], (busy, s["measure_s"])
PY

# The preset, from another directory: its trace (traces/kv-small.jsonl) is read beside it.
(cd "$tmp" && timeout 60 "$bin" run --mix kv-requests --duration 0.5 --json >"$tmp/p.json" \
    2>"$tmp/err") || bad "fabtop run --mix kv-requests failed: $(cat "$tmp/err")"
python3 - "$tmp/p.json" <<'PY' || bad "the kv-requests preset's results are not a trace's"
import json, sys
d = json.load(open(sys.argv[1]))
f = next(f for p in d["phases"] for f in p["flows"] if f["name"] == "kv-vllm")
assert f["status"] == "ok" and f["conditions"]["kv"]["arrival"]["trace"].endswith(
    "/engine/mixes/traces/kv-small.jsonl"), f["conditions"]["kv"]
assert f["conditions"]["kv"]["requests_prepared"] == 40, f["conditions"]["kv"]
PY

# Bad params: one line naming the field, status 65 (66 for a missing trace), before any traffic.
for case in '65|depth 0|"params": {"depth": 0}|params.depth' \
    '65|engine|"params": {"engine": "mooncake"}|params.engine' \
    '65|poisson without a rate|"params": {"arrival": {"process": "poisson"}}|params.arrival.rate_per_s' \
    '66|missing trace|"params": {"arrival": {"process": "trace", "trace": "/nonexistent.jsonl"}}|/nonexistent.jsonl' \
    '65|misspelt key|"params": {"dept": 4}|dept' \
    '65|rate on a kv flow|"rate_gbps": 1|rate_gbps' \
    '65|direction on a kv flow|"direction": "rx"|direction'; do
    want=${case%%|*}
    rest=${case#*|}
    what=${rest%%|*}
    rest=${rest#*|}
    param=${rest%%|*}
    needle=${rest#*|}
    printf '{"format": "fabtop-mix", "version": 1, "flows": [{"name": "kv", "op": "kv", "size": 4096, %s}]}\n' "$param" >"$tmp/bad.json"
    timeout 20 "$bin" run --mix "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = "$want" ] || bad "$what: exited $rc, not $want: $(cat "$tmp/err")"
    grep -qF -- "$needle" "$tmp/err" || bad "$what: stderr does not name $needle: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" -le 1 ] || bad "$what: more than one line: $(cat "$tmp/err")"
done

[ $fail = 0 ] && echo "PASS: kv flows over loopback TCP"
exit $fail
