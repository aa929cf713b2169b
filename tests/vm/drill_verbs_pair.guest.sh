# Runs in both guests of an rxe-vm pair with two wires (--wires 2, busybox sh): eth0 is the
# control wire (a 10.0.0.1, b 10.0.0.2), eth1 the data wire (10.0.1.1, 10.0.1.2) with rxe0
# on it. b serves on its control address; a drills a verbs WRITE ping-pong over rxe0 against
# it: first `--device eth0 --owned` (the control connection's netdev: refused) and a veth of
# its own that rxe0 does not use (refused), then link-down of eth1 (a's data NIC) twice, then
# a peer-kill and the agent's blackhole (its queue pairs to the error state). While the link-down drill runs a
# sampler records rxe0's port state, the GID the lane uses, eth0's and eth1's state and the
# route to b's data address, so that the host can see what rdma_rxe did. rxe0's hw_counters
# before and after each drill, dmesg and every drill's document and exit status go to $OUT
# for drill_verbs_pair.sh on the host.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
[ "$RXE_WIRES" = 2 ] || { echo "needs rxe-vm.sh --wires 2 (RXE_WIRES=$RXE_WIRES)"; exit 1; }
cp /usr/share/fabtop-test/key /tmp/key && chmod 600 /tmp/key
ulimit -l unlimited
port=/sys/class/infiniband/rxe0/ports/1
if [ "$RXE_ROLE" = b ]; then
    fabtop serve --listen "$RXE_CTL_IP:7470" --key-file /tmp/key --max-fault 10 \
        >"$OUT/serve.log" 2>&1 &
    srv=$!
    nc -l -p 7471 >/dev/null 2>&1 # until a is done
    kill $srv
    exit 0
fi
n=0
until nc -w 1 "$RXE_CTL_PEER" 7470 </dev/null >/dev/null 2>&1; do
    n=$((n + 1)); [ $n -le 120 ] || { echo "b's agent never answered"; exit 1; }
    sleep 0.5
done
# counters NAME: every rxe0 hw_counter as "name value" lines into $OUT/NAME.counters
counters() {
    for c in $port/hw_counters/*; do echo "${c##*/} $(cat "$c")"; done >"$OUT/$1.counters"
}
cat >/tmp/vpp.json <<'J'
{"format": "fabtop-mix", "version": 1, "name": "verbs-pp", "fail_bound_s": 2,
 "flows": [{"name": "vpp", "transport": "verbs", "op": "pingpong", "size": 64,
            "params": {"verb": "write", "timeout": 14, "retry_cnt": 3},
            "recover": {"attempts": 60, "backoff_ms": [50, 250], "deadline_s": 8}}]}
J
echo "$RXE_DATA_NETDEV $RXE_DATA_IP $RXE_DATA_PEER $RXE_GID_INDEX $RXE_CTL_NETDEV $RXE_CTL_IP $RXE_CTL_PEER" >"$OUT/env"
# The control connection's netdev: refused before any traffic.
fabtop drill --mix /tmp/vpp.json --fault link-down --device "$RXE_CTL_NETDEV" --owned \
    --peer "$RXE_CTL_PEER" --key-file /tmp/key >"$OUT/refuse.out" 2>&1
echo $? >"$OUT/refuse.rc"
echo "--- refusal (exit $(cat "$OUT/refuse.rc"))"; cat "$OUT/refuse.out"
# A netdev that is up but not rxe0's (a veth pair of its own): refused once the lane's queue
# pair says which netdev its GID is on, before any fault.
$IP link add vx0 type veth peer name vx1 && $IP addr add 10.0.9.1/24 dev vx0 &&
    $IP link set vx1 up && $IP link set vx0 up
fabtop drill --mix /tmp/vpp.json --fault link-down --device vx0 --owned \
    --peer "$RXE_CTL_PEER" --key-file /tmp/key >"$OUT/other.out" 2>&1
echo $? >"$OUT/other.rc"
$IP -o link show vx0 >"$OUT/other.link"
echo "--- not rxe0's netdev (exit $(cat "$OUT/other.rc"))"; cat "$OUT/other.out"
# The sampler: uptime, rxe0's port state, the lane's GID entry, eth0's and eth1's operstate,
# the routes through the data netdev.
sample() {
    while [ ! -e /tmp/stop-sampler ]; do
        echo "$(cut -d' ' -f1 /proc/uptime) port=$(tr -d ' ' <$port/state)" \
            "gid=$(cat $port/gids/"$RXE_GID_INDEX" 2>/dev/null || echo none)" \
            "ctl=$(cat /sys/class/net/"$RXE_CTL_NETDEV"/operstate)" \
            "data=$(cat /sys/class/net/"$RXE_DATA_NETDEV"/operstate)" \
            "routes=$($IP -4 route show dev "$RXE_DATA_NETDEV" 2>/dev/null | wc -l)"
        sleep 0.1
    done >"$OUT/samples"
}
# rdma_rxe's own word on a packet it cannot route (dynamic debug, rxe_dbg_qp: nothing else of
# it): the route's absence is what fails the queue pair on a downed link.
mount -t debugfs none /sys/kernel/debug 2>/dev/null
for f in "no route" "Host not"; do
    echo "module rdma_rxe format \"$f\" +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null &&
        echo "$f" >>"$OUT/dyndbg"
done
counters down0
sample &
smp=$!
t0=$(cut -d' ' -f1 /proc/uptime)
fabtop drill --mix /tmp/vpp.json --fault link-down --device "$RXE_DATA_NETDEV" --owned \
    --at 1 --for 2 --repeat 2 --peer "$RXE_CTL_PEER" --key-file /tmp/key \
    -o "$OUT/down.json" >"$OUT/down.out" 2>&1
echo $? >"$OUT/down.rc"
t1=$(cut -d' ' -f1 /proc/uptime)
touch /tmp/stop-sampler
wait $smp
echo "$t0 $t1" >"$OUT/down.uptime"
counters down1
echo "--- link-down (exit $(cat "$OUT/down.rc"))"; cat "$OUT/down.out"
counters kill0
fabtop drill --mix /tmp/vpp.json --fault peer-kill --at 1 --for 1 --repeat 1 \
    --peer "$RXE_CTL_PEER" --key-file /tmp/key -o "$OUT/kill.json" >"$OUT/kill.out" 2>&1
echo $? >"$OUT/kill.rc"
counters kill1
echo "--- peer-kill (exit $(cat "$OUT/kill.rc"))"; cat "$OUT/kill.out"
# The agent's blackhole: b moves this client's queue pairs (and new ones) to the error state
# for 2 s; a's requests go unanswered over the data wire until retry exceeded.
counters hole0
fabtop drill --mix /tmp/vpp.json --fault blackhole --at 1 --for 2 --repeat 1 \
    --peer "$RXE_CTL_PEER" --key-file /tmp/key -o "$OUT/hole.json" >"$OUT/hole.out" 2>&1
echo $? >"$OUT/hole.rc"
counters hole1
echo "--- blackhole (exit $(cat "$OUT/hole.rc"))"; cat "$OUT/hole.out"
cat /sys/class/net/"$RXE_DATA_NETDEV"/operstate >"$OUT/data.after"
dmesg >"$OUT/dmesg" 2>&1
echo finished | nc -w 2 "$RXE_CTL_PEER" 7471 >/dev/null 2>&1
exit 0
