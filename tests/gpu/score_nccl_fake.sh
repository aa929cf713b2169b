#!/bin/sh
# score_nccl_fake: the scoreboard of a model mix over nccl on the stand-in CUDA/NCCL runtime
# (fake_cudanccl.c): the tp class accounted (per operation, its quiet phase's samples within
# the --slo bound) and the decode step's 64 all-reduces (Llama-3.1-8B: 32 layers x 2) with
# their communication time. Usage: score_nccl_fake.sh PATH/libfake_cudanccl.so
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
fake=${1:?the fake CUDA/NCCL library}
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# No --transport: where CUDA and NCCL load and see GPUs, nccl is the best available.
FABTOP_CUDART="$fake" FABTOP_NCCL="$fake" FAKE_CUDA_DEVICES=2 \
    "$bin" mix --model Llama-3.1-8B --tp 2 >"$tmp/best.out" 2>&1
grep -qF "transport nccl: the best available here (--transport to choose)" "$tmp/best.out" ||
    fail "with the stand-in runtime the best transport is not nccl: $(grep transport "$tmp/best.out" | head -2)"
FABTOP_CUDART="$fake" FABTOP_NCCL="$fake" FAKE_CUDA_DEVICES=2 \
    "$bin" run --model Llama-3.1-8B --tp 2 --prompt 1024 --transport nccl -d 0.3 --slo 'tp:p99<1ms' \
    --step-budget 25ms -o "$tmp/nccl.json" >"$tmp/nccl.out" 2>&1
python3 - "$tmp/nccl.json" <<'EOF' || fail "nccl on the stand-in: the tp class ($(tail -3 "$tmp/nccl.out"))"
import json, sys
sb = json.load(open(sys.argv[1]))["scoreboard"]
tp = [c for c in sb["classes"] if c["class"] == "tp"][0]
assert tp["latency_kind"] == "per_operation", tp
q = tp["quiet"]
assert q["samples"] > 0 and q["p99_us"] > 0 and q["within_slo"] == 1, q
st = sb["step"]
# NCCL runs the all-reduce itself: 64 per step (32 layers x 2).
assert st["terms"] == [{"flow": "tp-decode-allreduce", "per_step": 64}], st["terms"]
assert st["quiet"]["comm_p50_us"] > 0
EOF
grep -q '^  tp-decode-allreduce x 64$' "$tmp/nccl.out" || fail "summary: no step term"
[ "$fails" -eq 0 ] || exit 1
echo "score_nccl_fake: ok"
