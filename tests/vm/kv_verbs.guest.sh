# Runs inside the rxe-vm guest (busybox sh): KV-cache transfers (op kv) over verbs on rxe0, a
# `fabtop serve` agent and `fabtop run` clients in the one guest (rxe loops the packets back).
# One request of a small model's prompt per rank: Llama-3.1-8B at TP 8 (1 KV head of 128 in
# BF16 per rank, 32 layers), 128 tokens in 16-token pages: vLLM pulls 32 x 2 x 8 = 512 RDMA
# READs of 4 KiB over 4 QPs (16 outstanding each: the QP's max_rd_atomic); SGLang pushes the
# 8 pages as one run (K and V together, 8 KiB a page): 32 RDMA WRITEs of 64 KiB. 2 MiB a
# request either way (TCG moves a few MB/s). hw_counters around each run go to $OUT for
# check_kv_verbs.py.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
key=/tmp/key
fabtop serve --gen-key $key >/dev/null || exit 1
fabtop serve --listen 127.0.0.1:7470 --key-file $key --max-duration 600 --max-streams 16 \
    >>"$OUT/serve.log" 2>&1 &
n=0
until netstat -ltn 2>/dev/null | grep -q '127.0.0.1:7470 '; do
    n=$((n + 1)); [ $n -le 400 ] || { echo "fabtop serve never listened"; cat "$OUT/serve.log"; exit 1; }
    sleep 0.05
done
hw() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/$1; }
counters() { echo "$(hw sent_pkts) $(hw rcvd_pkts)"; }
# kv NAME SIZE PARAMS: one kv flow over verbs, its counters before and after.
kv() {
    cat >/tmp/$1.json <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "fail_bound_s": 3,
 "flows": [{"name": "$1", "transport": "verbs", "op": "kv", "size": $2, "warmup_s": 0.3,
            "duration_s": 3, "params": {$3}}]}
J
    c0=$(counters)
    fabtop run --mix /tmp/$1.json --peer 127.0.0.1 --key-file $key --no-pin -o "$OUT/$1.json" \
        >"$OUT/$1.out" 2>&1
    echo $? >"$OUT/$1.rc"
    echo "$c0 $(counters)" >"$OUT/$1.hw"
    echo "--- $1 (exit $(cat "$OUT/$1.rc"))"; tail -6 "$OUT/$1.out"
}
# timeout 18 (1.07 s): under TCG a window of requests can outlast the default ACK timeout.
kv kv-vllm 4096 '"engine": "vllm", "layers": 32, "pages": 8, "depth": 64, "qps": 4, "doorbell_batch": 8, "timeout": 18'
kv kv-sglang 8192 '"engine": "sglang", "layers": 32, "pages": 8, "run_pages": 8, "depth": 16, "doorbell_batch": 4, "timeout": 18'
kv kv-vllm-poisson 4096 '"engine": "vllm", "layers": 32, "pages": 8, "depth": 64, "qps": 4, "timeout": 18, "arrival": {"process": "poisson", "rate_per_s": 2}'
# TensorRT-LLM: pushes all 4 layers of a 64-token page as one block (K and V: 2 x 4 x 2 KiB =
# 16 KiB), requests by the shipped trace (carried to /usr/share/fabtop-test: /tmp is a fresh tmpfs), prefix reuse.
kv kv-trtllm-trace 2048 '"engine": "trtllm", "layout": "flash", "layers": 4, "page_tokens": 64, "depth": 16, "timeout": 18, "arrival": {"process": "trace", "trace": "/usr/share/fabtop-test/kv-small.jsonl"}'
exit 0
