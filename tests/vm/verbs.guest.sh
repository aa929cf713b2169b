# Runs inside the rxe-vm guest (busybox sh): fabtop's verbs transport over rxe0. A
# `fabtop serve` agent and `fabtop run` clients share the guest (rxe loops the packets
# back), talking over the authenticated control channel on 127.0.0.1. Results land in $OUT
# for check_verbs.py on the host; this script fails only when it cannot run fabtop at all.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
key=/tmp/key
fabtop serve --gen-key $key >/dev/null || exit 1
serve() {
    fabtop serve --listen 127.0.0.1:7470 --key-file $key --max-rate 1000 --max-duration 600 \
        --max-streams 16 >>"$OUT/serve.log" 2>&1 &
    SERVE=$!
    n=0
    until netstat -ltn 2>/dev/null | grep -q '127.0.0.1:7470 '; do
        n=$((n + 1)); [ $n -le 400 ] || { echo "fabtop serve never listened"; cat "$OUT/serve.log"; exit 1; }
        sleep 0.05
    done
}
# mix NAME OP VERB SIZE [EXTRA-FLOW-JSON] [CONCURRENCY] [DIRECTION]
mix() {
    cat >/tmp/$1.json <<J
{"format": "fabtop-mix", "version": 1, "name": "$1", "fail_bound_s": 3,
 "flows": [{"name": "$1", "transport": "verbs", "op": "$2", "size": $4,
            "concurrency": ${6:-1}, "direction": "${7:-tx}", "warmup_s": 0.2,
            "duration_s": ${DUR:-1}, "params": {"verb": "$3"${5:+, $5}}}]}
J
}
run() { # NAME: run the mix, keep results and output
    fabtop run --mix /tmp/$1.json --peer 127.0.0.1 --key-file $key --no-pin -o "$OUT/$1.json" \
        >"$OUT/$1.out" 2>&1
    echo $? >"$OUT/$1.rc"
    echo "--- $1 (exit $(cat "$OUT/$1.rc"))"; tail -4 "$OUT/$1.out"
}
hw() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/$1; }
serve
mix write-lat-2 pingpong write 2;          run write-lat-2
mix write-lat-4k pingpong write 4096;      run write-lat-4k
mix send-lat-2 pingpong send 2;            run send-lat-2
mix read-lat-2 pingpong read 2;            run read-lat-2
mix write-comp-2 pingpong write 2 '"latency": "completion"'; run write-comp-2
mix write-imm-2 pingpong write 2 '"latency": "imm"';         run write-imm-2
mix write-sweep pingpong write '{"sweep": {"from": 2, "to": 4096, "factor": 32}}'; run write-sweep
# Bandwidth. Under TCG a 64-deep window of 64 KiB WRITEs can take longer than the default
# local ACK timeout (14: 67 ms) to drain, and every expiry resends the whole window; a
# timeout of 18 (1.07 s) keeps the runs out of that go-back-N storm. The hw_counters deltas
# of the WRITE run are checked against what it sent.
BW='"timeout": 18'
s0=$(hw sent_pkts); r0=$(hw rcvd_pkts)
mix write-bw-64k stream write 65536 "$BW";       run write-bw-64k
echo "$s0 $(hw sent_pkts) $r0 $(hw rcvd_pkts)" >"$OUT/write-bw-64k.hw"
mix send-bw-64k stream send 65536 "$BW";         run send-bw-64k
# READ responses come back through the responder's limited read resources: 16 outstanding keep
# the window small enough to drain under TCG.
mix read-bw-64k stream read 65536 "$BW"', "depth": 16';         run read-bw-64k
mix write-bw-4qp stream write 65536 "$BW, \"depth\": 16" 4; run write-bw-4qp
mix send-rx-64k stream send 65536 "$BW" 1 rx; run send-rx-64k
mix write-bidir stream write 65536 "$BW" 1 bidir; run write-bidir
# Fan-in: three flows, one QP each, into the one receiver at once.
cat >/tmp/fanin.json <<J
{"format": "fabtop-mix", "version": 1, "name": "fanin", "fail_bound_s": 3, "flows": [
 {"name": "in1", "transport": "verbs", "op": "stream", "size": 65536, "warmup_s": 0.2, "duration_s": 1, "params": {"verb": "write", "timeout": 18}},
 {"name": "in2", "role": "background", "transport": "verbs", "op": "stream", "size": 65536, "warmup_s": 0.1, "params": {"verb": "write", "timeout": 18}},
 {"name": "in3", "role": "background", "transport": "verbs", "op": "stream", "size": 65536, "warmup_s": 0.1, "params": {"verb": "write", "timeout": 18}}]}
J
run fanin
# librdmacm instead of the control channel for the QP connection.
mix write-lat-cm pingpong write 2 '"connect": "rdmacm"'; run write-lat-cm
mix write-bw-cm stream write 65536 "$BW"', "connect": "rdmacm", "depth": 16' 2; run write-bw-cm
# Wrong GID index: the error lists the GIDs that exist and the one used.
mix bad-gid pingpong write 2 '"gid_index": 77'; run bad-gid
# RLIMIT_MEMLOCK too low for an unprivileged user: one message saying how to raise it.
chmod 666 /dev/infiniband/uverbs* 2>/dev/null # as rdma-core's udev rules leave them
cp $key /tmp/key.nobody && chown 65534:65534 /tmp/key.nobody && chmod 600 /tmp/key.nobody
mix memlock stream write 1048576
(ulimit -l 64 && exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    fabtop run --mix /tmp/memlock.json --peer 127.0.0.1 --key-file /tmp/key.nobody --no-pin) \
    >"$OUT/memlock.out" 2>&1
echo $? >"$OUT/memlock.rc"
echo "--- memlock (exit $(cat "$OUT/memlock.rc"))"; tail -3 "$OUT/memlock.out"
# The test's own QPs on an RDMA counter: every run above asked (rdma_rxe refuses: ENOMEM);
# unprivileged, the kernel refuses first (EPERM: binding needs CAP_NET_ADMIN). Either way
# the run goes on and the results say why.
mix qpc-nobody pingpong write 2
(ulimit -l unlimited && exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups \
    --inh-caps=-all fabtop run --mix /tmp/qpc-nobody.json --peer 127.0.0.1 \
    --key-file /tmp/key.nobody --no-pin -o /tmp/qpc-nobody.json.out) >"$OUT/qpc-nobody.out" 2>&1
echo $? >"$OUT/qpc-nobody.rc"
cp /tmp/qpc-nobody.json.out "$OUT/qpc-nobody.json" 2>/dev/null
echo "--- qpc-nobody (exit $(cat "$OUT/qpc-nobody.rc"))"; tail -3 "$OUT/qpc-nobody.out"
/usr/bin/rdma -j statistic qp show link "$RXE_DEV/1" >"$OUT/qp-counters-after.json" 2>&1
# Return routability: a client that never echoes the agent's nonce, one that echoes it
# wrong, and one that points the agent's QP at a QP number nobody owns. The agent's QPs
# (`rdma res show qp` names the creating thread, so by command name: the only fabtop
# process now is the agent) are counted while the first waits.
agent_qps() { /usr/bin/rdma res show qp 2>/dev/null | grep -c ' type RC .* comm fabtop'; }
vb_rr_client 127.0.0.1:7470 $key noecho >"$OUT/rr-noecho.out" 2>&1 &
rr=$!
sleep 0.7
echo "during $(agent_qps)" >"$OUT/rr-qps.out"
wait $rr
echo "after $(agent_qps)" >>"$OUT/rr-qps.out"
vb_rr_client 127.0.0.1:7470 $key wrongecho >"$OUT/rr-wrongecho.out" 2>&1
vb_rr_client 127.0.0.1:7470 $key redirect >"$OUT/rr-redirect.out" 2>&1
echo "end $(agent_qps)" >>"$OUT/rr-qps.out"
echo "--- return routability"; cat "$OUT"/rr-*.out
# Port down mid-run: the asynchronous event appears in the run's events. Mid-run means
# measuring: the port goes down once the agent has the client's echo of its nonces (the end
# of the flow's setup, which under TCG and a loaded host can take over 2 s), after the
# 0.2 s warmup.
DUR=4 mix port-down pingpong write 2 '"timeout": 12, "retry_cnt": 6'
echoed=$(grep -c 'echoed the nonces' "$OUT/serve.log")
fabtop run --mix /tmp/port-down.json --peer 127.0.0.1 --key-file $key --no-pin \
    -o "$OUT/port-down.json" >"$OUT/port-down.out" 2>&1 &
client=$!
n=0
until [ "$(grep -c 'echoed the nonces' "$OUT/serve.log")" -gt "$echoed" ]; do
    n=$((n + 1)); [ $n -le 600 ] || break; sleep 0.05
done
sleep 0.8
$IP link set "$RXE_NETDEV" down
sleep 1
$IP link set "$RXE_NETDEV" up
wait $client
echo $? >"$OUT/port-down.rc"
echo "--- port-down (exit $(cat "$OUT/port-down.rc"))"; tail -4 "$OUT/port-down.out"
n=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state; do
    n=$((n + 1)); [ $n -le 100 ] || break; sleep 0.1
done
# Fault: the agent killed mid-run; timeout 14 (T_o 67 ms) so neither the kernel tick nor
# TCG's scheduling noise dominates, and retry_cnt 3 because rdma_rxe treats 7 as "retry
# forever".
seen=$(grep -c 'verbs: pingpong' "$OUT/serve.log")
DUR=30 mix fault-kill pingpong write 2 '"timeout": 14, "retry_cnt": 3'
fabtop run --mix /tmp/fault-kill.json --peer 127.0.0.1 --key-file $key --no-pin \
    -o "$OUT/fault-kill.json" >"$OUT/fault-kill.out" 2>&1 &
client=$!
n=0
until [ "$(grep -c 'verbs: pingpong' "$OUT/serve.log")" -gt "$seen" ]; do
    n=$((n + 1)); [ $n -le 600 ] || break; sleep 0.05
done
sleep 2
kill -9 $SERVE
wait $client
echo $? >"$OUT/fault-kill.rc"
echo "--- fault-kill (exit $(cat "$OUT/fault-kill.rc"))"; tail -6 "$OUT/fault-kill.out"
exit 0
