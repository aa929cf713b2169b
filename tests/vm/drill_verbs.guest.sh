# Runs inside the rxe-vm guest (busybox sh): `fabtop drill --fault peer-kill` of a verbs
# WRITE ping-pong over rxe0 against a `fabtop serve` in the guest (rxe loops the packets
# back; the control channel on 127.0.0.1). The agent ends the drill's sessions and with them
# its queue pairs; the client's queue pair runs out of retries (timeout 14: T_o 67 ms,
# retry_cnt 3), the lane opens new queue pairs once the agent takes sessions again. Then a
# peer-stall (the replies held) of that WRITE ping-pong and of a SEND one (receiver-not-ready),
# and a READ ping-pong under peer-stall, refused. Results
# land in $OUT for drill_verbs.sh on the host.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
key=/tmp/key
fabtop serve --gen-key $key >/dev/null || exit 1
fabtop serve --listen 127.0.0.1:7470 --key-file $key --max-fault 10 >>"$OUT/serve.log" 2>&1 &
n=0
until netstat -ltn 2>/dev/null | grep -q '127.0.0.1:7470 '; do
    n=$((n + 1)); [ $n -le 400 ] || { echo "fabtop serve never listened"; cat "$OUT/serve.log"; exit 1; }
    sleep 0.05
done
cat >/tmp/vpp.json <<'J'
{"format": "fabtop-mix", "version": 1, "name": "verbs-pp", "fail_bound_s": 2,
 "flows": [{"name": "vpp", "transport": "verbs", "op": "pingpong", "size": 64,
            "params": {"verb": "write", "timeout": 14, "retry_cnt": 3},
            "recover": {"attempts": 40, "backoff_ms": [50, 250], "deadline_s": 8}}]}
J
s0=$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/retry_exceeded_err 2>/dev/null || echo -1)
fabtop drill --mix /tmp/vpp.json --fault peer-kill --at 1 --for 1 --repeat 3 \
    --peer 127.0.0.1 --key-file $key -o "$OUT/drill.json" >"$OUT/drill.out" 2>&1
echo $? >"$OUT/drill.rc"
s1=$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/retry_exceeded_err 2>/dev/null || echo -1)
echo "$s0 $s1" >"$OUT/retry_exceeded"
echo "--- drill (exit $(cat "$OUT/drill.rc"))"; cat "$OUT/drill.out"
# A stalled agent: its responder holds the replies for 3 s, longer than a request's 2 s
# deadline; the queue pair sees nothing wrong (the NIC still acknowledges the WRITEs).
fabtop drill --mix /tmp/vpp.json --fault peer-stall --at 1 --for 3 --repeat 2 \
    --peer 127.0.0.1 --key-file $key -o "$OUT/stall.json" >"$OUT/stall.out" 2>&1
echo $? >"$OUT/stall.rc"
echo "--- stall (exit $(cat "$OUT/stall.rc"))"; cat "$OUT/stall.out"
# A SEND ping-pong under the same stall: the agent's stalled responder polls nothing and
# posts no receive, so once the two it posted ahead (depth 2) have taken the request in
# flight and a liveness probe (a zero-byte SEND), the next probe meets receiver-not-ready
# NAKs (rnr_retry 7), until the queue pair fails with retry exceeded (Soft-RoCE; what the
# report says is judged on the host). rxe0's RNR counters, read here before and after:
# rcvd_rnr_err counts the NAKs the requester (the client) received, send_rnr_err those the
# responder (the agent) sent (rdma_rxe: rxe_comp.c check_ack, rxe_resp.c RESPST_ERR_RNR).
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
ls $hw >"$OUT/hw_counters.list" 2>&1
sed 's/"verb": "write"/"verb": "send"/' /tmp/vpp.json >/tmp/vsend.json
r0=$(cat $hw/rcvd_rnr_err 2>/dev/null || echo -1)
n0=$(cat $hw/send_rnr_err 2>/dev/null || echo -1)
fabtop drill --mix /tmp/vsend.json --fault peer-stall --at 1 --for 3 --repeat 2 \
    --peer 127.0.0.1 --key-file $key -o "$OUT/send-stall.json" >"$OUT/send-stall.out" 2>&1
echo $? >"$OUT/send-stall.rc"
r1=$(cat $hw/rcvd_rnr_err 2>/dev/null || echo -1)
n1=$(cat $hw/send_rnr_err 2>/dev/null || echo -1)
echo "$r0 $r1 $n0 $n1" >"$OUT/send_rnr"
echo "--- send stall (exit $(cat "$OUT/send-stall.rc")), rcvd_rnr_err $r0 -> $r1, send_rnr_err $n0 -> $n1"
cat "$OUT/send-stall.out"
# A blackhole by the agent (no namespace here: the guest's one rxe loops back): its queue
# pairs of this client to the error state for 2 s, and new ones as they come.
s2=$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/retry_exceeded_err 2>/dev/null || echo -1)
fabtop drill --mix /tmp/vpp.json --fault blackhole --at 1 --for 2 --repeat 2 \
    --peer 127.0.0.1 --key-file $key -o "$OUT/hole.json" >"$OUT/hole.out" 2>&1
echo $? >"$OUT/hole.rc"
s3=$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/retry_exceeded_err 2>/dev/null || echo -1)
echo "$s2 $s3" >"$OUT/hole_retry_exceeded"
echo "--- hole (exit $(cat "$OUT/hole.rc"))"; cat "$OUT/hole.out"
grep "error state" "$OUT/serve.log" | head -3
# One-sided READ cannot see a stall: refused with the reason.
sed 's/"verb": "write"/"verb": "read"/' /tmp/vpp.json >/tmp/vread.json
fabtop drill --mix /tmp/vread.json --fault peer-stall --peer 127.0.0.1 --key-file $key \
    >"$OUT/read-stall.out" 2>&1
echo $? >"$OUT/read-stall.rc"
exit 0
