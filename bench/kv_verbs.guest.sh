# Runs inside the rxe-vm guest (busybox sh) for bench/kv_verbs.sh: fabtop's kv op over verbs
# against perftest on the same device (rxe0, loopback), alternating ROUNDS times, with the same
# descriptor size and depth: vLLM-style READs of 4 KiB, 16 outstanding on one QP, against
# `ib_read_bw -s 4096 -t 16 -o 16`; SGLang-style WRITEs of 64 KiB (runs of 8 pages of 8 KiB),
# 16 outstanding, against `ib_write_bw -s 65536 -t 16`. Raw outputs go to $OUT.
ROUNDS=${ROUNDS:-5}
key=/tmp/key
G=$RXE_GID_INDEX
fabtop serve --gen-key $key >/dev/null || exit 1
fabtop serve --listen 127.0.0.1:7470 --key-file $key --max-streams 16 >"$OUT/serve.log" 2>&1 &
listening() { netstat -ltn 2>/dev/null | grep -q ":$1 "; }
n=0; until listening 7470; do n=$((n + 1)); [ $n -le 400 ] || exit 1; sleep 0.05; done
# kv NAME SIZE PARAMS: one kv flow over verbs, 2 s measured
kv() {
    cat >/tmp/$1.json <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "flows": [{"name": "$1",
 "transport": "verbs", "op": "kv", "size": $2, "warmup_s": 0.3, "duration_s": 2,
 "params": {"timeout": 18, $3}}]}
J
}
# 32 layers x K and V x 16 pages = 1,024 READs of 4 KiB (4 MiB) a request
kv read4k 4096 '"engine": "vllm", "layers": 32, "pages": 16, "depth": 16, "qps": 1, "doorbell_batch": 16'
# 32 layers x 2 runs of 8 pages of 8 KiB = 64 WRITEs of 64 KiB (4 MiB) a request
kv write64k 8192 '"engine": "sglang", "layers": 32, "pages": 16, "run_pages": 8, "depth": 16, "doorbell_batch": 16'
perf() {
    tool=$1; shift
    $tool -d "$RXE_DEV" -x "$G" -F "$@" >/tmp/srv.out 2>&1 &
    srv=$!
    n=0; until listening 18515; do n=$((n + 1)); [ $n -le 400 ] || break; sleep 0.05; done
    $tool -d "$RXE_DEV" -x "$G" -F "$@" "$RXE_IP" 2>&1
    wait $srv
}
i=1
while [ $i -le "$ROUNDS" ]; do
    for t in read4k write64k; do
        fabtop run --mix /tmp/$t.json --peer 127.0.0.1 --key-file $key --no-pin \
            -o "$OUT/fabtop-$t-$i.json" >/dev/null 2>"$OUT/fabtop-$t-$i.err"
    done
    perf ib_read_bw -s 4096 -t 16 -o 16 -D 2 >"$OUT/perftest-read4k-$i.out"
    perf ib_write_bw -s 65536 -t 16 -D 2 >"$OUT/perftest-write64k-$i.out"
    echo "round $i done"
    i=$((i + 1))
done
exit 0
