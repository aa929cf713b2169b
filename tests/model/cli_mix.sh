#!/bin/sh
# cli_mix: `fabtop mix --model` prints a mix the mix reader loads back unchanged (`fabtop run
# --mix FILE` runs it) and a summary with units; `fabtop run --model` runs a model's mix over
# loopback TCP (no GPU needed) and exits 0 with a results document (its KV flow one kv request
# of 32,768 descriptors of 16 KiB, bytes = requests x 512 MiB); bad configs and layouts
# exit 65, 66 or 64 with one line naming the field or option.
set -u
bin=${FABTOP_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}

# expect STATUS TEXT CMD...: CMD exits STATUS and its stderr names TEXT.
expect() {
    st=$1
    text=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = "$st" ] || bad "$* exited $rc, not $st: $(cat "$tmp/err")"
    grep -qF -- "$text" "$tmp/err" || bad "$*: stderr does not name '$text': $(cat "$tmp/err")"
    # One line saying why (a usage error adds "Try 'fabtop mix --help'.").
    head -n 1 "$tmp/err" | grep -qF -- "$text" || bad "$*: the first line does not say why"
    [ "$(grep -vc '^Try ' "$tmp/err")" -le 1 ] || bad "$*: more than one line on stderr"
}

# The summary, with the worked example's sizes.
"$bin" mix --model Llama-3.1-70B --tp 8 >"$tmp/sum" || bad "fabtop mix --model Llama-3.1-70B failed"
for t in "327680 B (320 KiB)" "descriptor 4096 B (4 KiB)" "81920 descriptors" \
    "335544320 B (320 MiB) per rank" "huggingface.co/meta-llama/Llama-3.1-70B"; do
    grep -qF "$t" "$tmp/sum" || bad "the summary lacks '$t'"
done
"$bin" mix --model DeepSeek-V3 --tp 8 --ep 8 >"$tmp/sum" || bad "fabtop mix --model DeepSeek-V3 failed"
grep -qF "per token per rank 70272 B" "$tmp/sum" || bad "DeepSeek-V3: not 70272 B per token per rank"

# No --transport: the best available here. Without a CUDA runtime (FABTOP_CUDART pointing at
# nothing) NCCL is out; on a machine without RDMA devices so is verbs: tcp, said so.
FABTOP_CUDART=$tmp/none.so FABTOP_NCCL=$tmp/none.so "$bin" mix --model Llama-3.1-8B --tp 2 \
    >"$tmp/best" 2>"$tmp/err" || bad "fabtop mix without --transport failed: $(cat "$tmp/err")"
if grep -qF "transport tcp: the best available here" "$tmp/best"; then
    grep -qF "no nccl here (" "$tmp/best" || bad "the summary does not say why not nccl"
    grep -q '"transport": *"nccl"' "$tmp/best" && bad "tcp chosen, yet the mix has nccl flows"
elif ! grep -qF "transport verbs: the best available here" "$tmp/best"; then
    bad "without CUDA the best transport is neither tcp nor verbs: $(grep transport "$tmp/best" | head -3)"
fi

# --json: the document alone, as -o saves it; it loads back through the mix reader (fabtop
# run --mix) and runs.
"$bin" mix --model Llama-3.1-8B --tp 2 --transport tcp --json -o "$tmp/m.json" >"$tmp/stdout" ||
    bad "fabtop mix --json -o failed"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a!=b or a["format"]!="fabtop-mix")' \
    "$tmp/stdout" "$tmp/m.json" || bad "--json and -o differ, or are not a fabtop-mix"
"$bin" run --mix "$tmp/m.json" --duration 0.3 --json >"$tmp/r1.json" 2>"$tmp/err" ||
    bad "fabtop run --mix (the generated mix) failed: $(cat "$tmp/err")"

# fabtop run --model over loopback TCP.
"$bin" run --model Llama-3.1-8B --tp 2 --transport tcp --duration 1 --json >"$tmp/r.json" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || bad "fabtop run --model exited $rc: $(cat "$tmp/err")"
python3 - "$tmp/r.json" <<'PY' || bad "the results document is not what the run was"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "fabtop-results", d["format"]
assert d["mix"]["name"] == "model-Llama-3.1-8B", d["mix"]["name"]
names = [f["name"] for p in d["phases"] for f in p["flows"]]
assert "tp-decode-ring2" in names and "kv-16KiBx32768" in names, names
# The KV flow is one request of the engine's list: 32 layers x K and V x 512 pages of 16 KiB,
# timed per request; whatever completed in the window moved requests x 512 MiB.
kv = next(f for p in d["phases"] for f in p["flows"] if f["name"] == "kv-16KiBx32768")
assert kv["op"] == "kv" and kv["latency_kind"] == "per_request", (kv["op"], kv["latency_kind"])
assert kv["status"] == "ok", kv.get("error")
c = kv["conditions"]["kv"]
assert (c["engine"], c["layout"], c["layers"], c["pages"]) == ("vllm", "flash", 32, 512), c
p = kv["points"][0]
assert p["kv"]["descriptors_per_request_min"] == 32768, p["kv"]
assert p["kv"]["bytes_per_request_min"] == 32768 * 16384, p["kv"]
assert p["payload_bytes"] == p["ops"] * 32768 * 16384, (p["payload_bytes"], p["ops"])
if p["ops"]:
    assert p["latency"]["kind"] == "per_request" and p["latency"]["min"] > 0, p["latency"]
PY

# Refusals: a layout (64), a bad config (65), a missing one (66).
expect 64 "--tp 3 does not divide" "$bin" mix --model Llama-3.1-70B --tp 3
expect 64 "--page takes 1 to 65536" "$bin" mix --model Llama-3.1-70B --page 0
expect 64 "dense" "$bin" mix --model Llama-3.1-8B --ep 2
expect 64 "--mix and --model" "$bin" run --mix api --model Llama-3.1-8B
expect 64 "--model is required" "$bin" mix --tp 8
echo '{"num_hidden_layers": 2, "num_attention_heads": 2, "torch_dtype": "bfloat16"}' >"$tmp/c.json"
expect 65 "hidden_size is missing" "$bin" mix --model "$tmp/c.json"
expect 66 "no-such.json" "$bin" mix --model "$tmp/no-such.json"

[ $fail = 0 ] && echo "PASS: fabtop mix --model and fabtop run --model"
exit $fail
