# Runs in both guests of an rxe-vm pair (busybox sh; a 10.0.0.1, b 10.0.0.2, one virtio wire):
# b serves, a runs KV transfers over verbs to b's agent across the wire, so the bytes cross a
# netdev: vLLM pulls 512 READs of 4 KiB over 4 QPs (a receives the responses), SGLang pushes
# 32 WRITEs of 64 KiB (a sends). a leaves the results and eth0's and rxe0's counters around each
# run in $OUT for check_kv_verbs_pair.py, then tells b (port 7471) to stop.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
cp /usr/share/fabtop-test/key /tmp/key && chmod 600 /tmp/key
if [ "$RXE_ROLE" = b ]; then
    fabtop serve --listen "$RXE_IP:7470" --key-file /tmp/key --max-duration 600 \
        --max-streams 16 >"$OUT/serve.log" 2>&1 &
    srv=$!
    nc -l -p 7471 >/dev/null 2>&1 # until a is done
    kill $srv
    exit 0
fi
n=0
until nc -w 1 "$RXE_PEER" 7470 </dev/null >/dev/null 2>&1; do
    n=$((n + 1)); [ $n -le 120 ] || { echo "b's agent never answered"; exit 1; }
    sleep 0.5
done
c() { cat /sys/class/net/eth0/statistics/$1; }
hw() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/$1; }
counters() { echo "$(c rx_bytes) $(c tx_bytes) $(hw rcvd_pkts) $(hw sent_pkts)"; }
kv() {
    cat >/tmp/$1.json <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "fail_bound_s": 3,
 "flows": [{"name": "$1", "transport": "verbs", "op": "kv", "size": $2, "warmup_s": 0.3,
            "duration_s": 3, "params": {$3}}]}
J
    c0=$(counters)
    fabtop run --mix /tmp/$1.json --peer "$RXE_PEER" --key-file /tmp/key --no-pin \
        -o "$OUT/$1.json" >"$OUT/$1.out" 2>&1
    echo $? >"$OUT/$1.rc"
    echo "$c0 $(counters)" >"$OUT/$1.hw"
    echo "--- $1 (exit $(cat "$OUT/$1.rc"))"; tail -4 "$OUT/$1.out"
}
kv kv-vllm 4096 '"engine": "vllm", "layers": 32, "pages": 8, "depth": 64, "qps": 4, "doorbell_batch": 8, "timeout": 18'
kv kv-sglang 8192 '"engine": "sglang", "layers": 32, "pages": 8, "run_pages": 8, "depth": 16, "doorbell_batch": 4, "timeout": 18'
echo done | nc -w 2 "$RXE_PEER" 7471 >/dev/null 2>&1
exit 0
