# Runs inside the rxe-vm guest (busybox sh): a ring all-reduce's message pattern over verbs on
# rxe0, a `fabtop serve` agent and a `fabtop run` client in the one guest (rxe loops the
# packets back). S = 64 KiB over 4 ranks: 6 steps of 16 KiB each way per all-reduce, as SENDs;
# then 65,537 B over 3 ranks (a remainder: 4 steps of 21,846 B); then a model's mix over verbs
# (`fabtop run --model --transport verbs`). hw_counters around each run
# go to $OUT for check_ring_verbs.py. Short: TCG moves a few MB/s.
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
# ring NAME SIZE RANKS: one emulated all-reduce flow over verbs, its counters before and after.
ring() {
    cat >/tmp/$1.json <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "fail_bound_s": 3, "phases": ["loaded"],
 "flows": [{"name": "$1", "transport": "verbs", "op": "collective", "size": $2, "warmup_s": 0.3,
            "duration_s": 2, "params": {"collective": "all_reduce", "ranks": $3, "timeout": 18}}]}
J
    c0=$(counters)
    fabtop run --mix /tmp/$1.json --peer 127.0.0.1 --key-file $key --no-pin -o "$OUT/$1.json" \
        >"$OUT/$1.out" 2>&1
    echo $? >"$OUT/$1.rc"
    echo "$c0 $(counters)" >"$OUT/$1.hw"
    echo "--- $1 (exit $(cat "$OUT/$1.rc"))"; tail -6 "$OUT/$1.out"
}
ring ring4 65536 4
ring ring3 65537 3
# A model's mix over verbs: Llama-3.1-8B at TP 2, batch 1 (S = 8 KiB: 2 steps of 4 KiB), a
# 16-token prompt (the kv flow moves 1 MiB a request) to keep TCG's time short.
# The preset is carried as its config file (/tmp is a fresh tmpfs; no presets installed).
fabtop run --model /usr/share/fabtop-test/Llama-3.1-8B.json --tp 2 --batch 1 --prompt 16 --transport verbs --duration 1 \
    --peer 127.0.0.1 --key-file $key --no-pin -o "$OUT/model.json" >"$OUT/model.out" 2>&1
echo $? >"$OUT/model.rc"
echo "--- model (exit $(cat "$OUT/model.rc"))"; tail -12 "$OUT/model.out"
exit 0
