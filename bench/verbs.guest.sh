# Runs inside the rxe-vm guest (busybox sh) for bench/verbs.sh: fabtop's verbs transport and
# perftest on the same device (rxe0, loopback) alternating ROUNDS times. Raw outputs go to
# $OUT; bench/verbs_report.py computes the ratios on the host.
ROUNDS=${ROUNDS:-11}
key=/tmp/key
G=$RXE_GID_INDEX
fabtop serve --gen-key $key >/dev/null || exit 1
fabtop serve --listen 127.0.0.1:7470 --key-file $key --max-rate 1000 >"$OUT/serve.log" 2>&1 &
listening() { netstat -ltn 2>/dev/null | grep -q ":$1 "; }
n=0; until listening 7470; do n=$((n + 1)); [ $n -le 400 ] || exit 1; sleep 0.05; done
# mix NAME OP SIZE PARAMS-JSON: one verbs flow, fabtop headless
mix() {
    cat >/tmp/$1.json <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "flows": [{"name": "$1",
 "transport": "verbs", "op": "$2", "size": $3, "warmup_s": 0.3, "duration_s": 2,
 "params": {"verb": "write"$4}}]}
J
}
mix lat2 pingpong 2 ''
mix lat4k pingpong 4096 ''
# ib_write_bw keeps 128 requests outstanding by default: the same depth for fabtop
mix bw64k stream 65536 ', "depth": 128'
# perf TOOL ARGS...: server in the background, then the client against it
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
    for t in lat2 lat4k bw64k; do
        fabtop run --mix /tmp/$t.json --peer 127.0.0.1 --key-file $key --no-pin \
            -o "$OUT/fabtop-$t-$i.json" >/dev/null 2>"$OUT/fabtop-$t-$i.err"
    done
    perf ib_write_lat -s 2 -n 5000 >"$OUT/perftest-lat2-$i.out"
    perf ib_write_lat -s 4096 -n 5000 >"$OUT/perftest-lat4k-$i.out"
    perf ib_write_bw -s 65536 -D 2 >"$OUT/perftest-bw64k-$i.out"
    echo "round $i done"
    i=$((i + 1))
done
exit 0
