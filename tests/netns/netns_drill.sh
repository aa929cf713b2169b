#!/bin/sh
# netns_drill: `fabtop drill` across two network namespaces joined by veth pairs, the agent
# (`fabtop serve --max-fault 5`) in one, the drill in the other: peer-stall and peer-kill
# with the rr mix, --repeat 3 (DRILL_REPEAT=20 for the issue's 20): every detection within
# its bound, every recovery within the policy's deadline, every request accounted for, the
# agent's count equal to the client's, nothing left in the drill process; a blackhole
# (nftables in the agent's namespace) the same way, lifted when the drill is interrupted, and
# its refusals; a link-down of the data path's own veth (--data-peer on a second link, the
# control connection on the first) the same way, the link up again afterwards, and its
# refusals. Root only (77 otherwise); lib.sh removes the namespaces and ends the agent it
# started on every exit.
. "$(dirname "$0")/lib.sh"
need_netns
command -v jq >/dev/null || skip "jq is not installed"
src=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
REPEAT=${DRILL_REPEAT:-3}
mkns a
mkns b
link a va b vb
addr a va 10.91.0.1/24
addr b vb 10.91.0.2/24
link a da b db # the data path of the link-down drill
addr a da 10.91.1.1/24
addr b db 10.91.1.2/24
key=$(mkkey)
NSP_PATH_A=/run/netns/$NSP-a
serve b 10.91.0.2 "$TMP/serve.log" --max-fault 5 --max-sessions 64
for fault in peer-stall peer-kill; do
    out="$TMP/$fault.json"
    nsx a timeout 120 "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault "$fault" \
        --at 0.3 --for 0.6 --repeat "$REPEAT" --expect 'detect<0.6s,recover<8s' \
        --peer 10.91.0.2:7470 --key-file "$key" -o "$out" >"$TMP/text" 2>"$TMP/err" ||
        fail "$fault: status $?: $(cat "$TMP/err" "$TMP/text")"
    bad=$(jq '[.repetitions[] | .agent.agree as $a | .flows[] |
            select((.detect_ok and .recover_ok and $a and .requests.hanging == 0 and
                    .requests.issued == .requests.completed + .requests.failed +
                      .requests.abandoned) | not)] | length' "$out")
    leak=$(jq '.process | (.fds_after - .fds_before) + (.threads_after - .threads_before)' "$out")
    [ "$bad" = 0 ] && [ "$leak" = 0 ] && [ "$(jq '.repetitions | length' "$out")" = "$REPEAT" ] ||
        fail "$fault: $bad bad drills, leak $leak: $(cat "$TMP/text")"
    pass "$fault across namespaces: $(grep -E '^(detect|recover):' "$TMP/text" | tr '\n' ';')"
done
grep -q "fault: peer-kill for 0.6 s on 3 sessions of 10.91.0.1" "$TMP/serve.log" ||
    fail "the agent did not log the kill: $(grep fault "$TMP/serve.log" | head -3)"
pass "the agent logged each fault"

# A blackhole: nftables in b (the agent's namespace, which this test owns) drops the data
# connections' traffic for 0.6 s and leaves the control port; the drill in a detects it at the
# request deadline, reconnects once it is lifted, and the table is gone afterwards. The agent
# may have answered the request in flight into the hole: at most one per connection.
out="$TMP/blackhole.json"
nsx a timeout 120 "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault blackhole \
    --netns "$NSP-b" --at 0.3 --for 0.6 --repeat "$REPEAT" --expect 'detect<0.6s,recover<8s' \
    --peer 10.91.0.2:7470 --key-file "$key" -o "$out" >"$TMP/text" 2>"$TMP/err" ||
    fail "blackhole: status $?: $(cat "$TMP/err" "$TMP/text")"
bad=$(jq '[.repetitions[] | .agent as $a | .flows[] |
        select((.detect_ok and .recover_ok and $a.agree and .reconnects >= 1 and
                .requests.hanging == 0 and .requests.abandoned >= 1 and
                .requests.issued == .requests.completed + .requests.failed +
                  .requests.abandoned) | not)] | length' "$out")
lost=$(jq '[.repetitions[].agent | .answered - .client_completed] | max' "$out")
conns=$(jq '[.repetitions[0].flows[].connections] | add' "$out")
[ "$bad" = 0 ] && [ "$lost" -ge 0 ] && [ "$lost" -le "$conns" ] &&
    [ "$(jq -r '.fault.kind' "$out")" = blackhole ] ||
    fail "blackhole: $bad bad drills, $lost answers lost of $conns connections: $(cat "$TMP/text")"
nsx b nft list tables | grep -q fabtop_drill && fail "blackhole: the table outlived the drill"
pass "blackhole in $NSP-b: $(grep -E '^(detect|recover):' "$TMP/text" | tr '\n' ';') answers lost at most $lost"

# Ctrl-C during the hole: the guardian lifts it when the drill's pipe closes.
nsx a "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault blackhole \
    --netns "$NSP-b" --at 0.3 --for 20 --peer 10.91.0.2:7470 --key-file "$key" \
    >/dev/null 2>&1 &
dpid=$!
k=0
until nsx b nft list tables | grep -q fabtop_drill; do
    k=$((k + 1))
    [ $k -lt 100 ] || { kill "$dpid"; fail "blackhole: no table in $NSP-b within 5 s"; }
    sleep 0.05
done
kill -INT "$dpid"
wait "$dpid"
k=0
while nsx b nft list tables | grep -q fabtop_drill; do
    k=$((k + 1))
    [ $k -lt 40 ] || fail "blackhole: the table stayed 2 s after the drill was interrupted"
    sleep 0.05
done
pass "an interrupted blackhole drill leaves no table behind"

# Refusals: this test's own namespace (the host's: PID 1's, or one with a default route), one
# that does not exist, --fault blackhole alone.
if [ -r /proc/1/ns/net ] || [ -n "$(ip route show default)" ]; then
    "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault blackhole \
        --netns /proc/self/ns/net >"$TMP/text" 2>"$TMP/err"
    rc=$?
    [ $rc = 77 ] && grep -Eq "is the host's network namespace|has a default route" "$TMP/err" &&
        [ "$(wc -l <"$TMP/err")" = 1 ] || fail "host namespace: status $rc: $(cat "$TMP/err")"
else
    echo "note: the host's namespace here has no default route and PID 1's is not readable"
fi
"$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault blackhole --netns "$NSP-none" \
    >"$TMP/text" 2>"$TMP/err"
rc=$?
[ $rc = 66 ] && grep -q "netns $NSP-none: No such file" "$TMP/err" ||
    fail "no namespace: status $rc: $(cat "$TMP/err")"
"$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault blackhole >"$TMP/text" 2>"$TMP/err"
rc=$?
[ $rc = 64 ] && grep -q "needs --netns NAME" "$TMP/err" || fail "no --netns: status $rc: $(cat "$TMP/err")"
pass "blackhole refusals: the host's namespace (77), no such namespace (66), no --netns (64)"

# link-down: the data connections go to the agent's 10.91.1.2 (--data-peer, the second veth),
# the control connection to 10.91.0.2; the drill takes da (the netdev that routes there in a)
# down for 0.6 s: detected at the request deadline, reconnected once it is up, and up again
# afterwards. The data went over da: its counters carry it.
rx0=$(nsx a cat /sys/class/net/da/statistics/rx_bytes)
out="$TMP/link-down.json"
nsx a timeout 120 "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault link-down \
    --netns "$NSP-a" --data-peer 10.91.1.2 --at 0.3 --for 0.6 --repeat "$REPEAT" \
    --expect 'detect<0.6s,recover<8s' --peer 10.91.0.2:7470 --key-file "$key" -o "$out" \
    >"$TMP/text" 2>"$TMP/err" || fail "link-down: status $?: $(cat "$TMP/err" "$TMP/text")"
rx1=$(nsx a cat /sys/class/net/da/statistics/rx_bytes)
bad=$(jq '[.repetitions[] | .agent as $a | .flows[] |
        select((.detect_ok and .recover_ok and $a.agree and .reconnects >= 1 and
                .requests.hanging == 0 and .requests.abandoned + .requests.failed >= 1 and
                .requests.issued == .requests.completed + .requests.failed +
                  .requests.abandoned) | not)] | length' "$out")
leak=$(jq '.process | (.fds_after - .fds_before) + (.threads_after - .threads_before)' "$out")
lost=$(jq '[.repetitions[].agent | .answered - .client_completed] | max' "$out")
completed=$(jq '[.repetitions[].flows[].requests.completed] | add' "$out")
[ "$bad" = 0 ] && [ "$leak" = 0 ] && [ "$(jq -r '.fault.device' "$out")" = da ] &&
    [ "$(jq -r '.data_peer' "$out")" = 10.91.1.2 ] && [ "$lost" -le "$conns" ] ||
    fail "link-down: $bad bad drills, leak $leak, lost $lost: $(cat "$TMP/text")"
nsx a ip link show da | grep -q "[<,]UP[,>]" || fail "link-down: da is not up after the drill"
[ $((rx1 - rx0)) -ge $((completed * 4096)) ] ||
    fail "link-down: da received $((rx1 - rx0)) B for $completed responses of 4096 B"
pass "link-down of da in $NSP-a: $(grep -E '^(detect|recover):' "$TMP/text" | tr '\n' ';') da received $((rx1 - rx0)) B"

# The same link-down under load: quiet-vs-loaded's two bulk neighbours stream over da beside
# the probe; they carry data before the fault, next to nothing while da is down, and again
# once it is up; the probe detects and recovers as without them.
jq '.fail_bound_s = 0.5' "$src/engine/mixes/quiet-vs-loaded.json" >"$TMP/qvl.json"
out="$TMP/link-down-loaded.json"
nsx a timeout 120 "$FABTOP" drill --mix "$TMP/qvl.json" --fault link-down --netns "$NSP-a" \
    --data-peer 10.91.1.2 --at 0.5 --for 0.6 --repeat "$REPEAT" \
    --expect 'detect<0.6s,recover<10s' --peer 10.91.0.2:7470 --key-file "$key" -o "$out" \
    >"$TMP/text" 2>"$TMP/err" || fail "link-down loaded: status $?: $(cat "$TMP/err" "$TMP/text")"
bad=$(jq '[.repetitions[] | .agent.agree as $a | .flows[] |
        select((.detect_ok and .recover_ok and $a and .requests.hanging == 0) | not)] |
        length' "$out")
load=$(jq '[.repetitions[].load[] | select((.before_gbps > 0.05 and
        .during_gbps < .before_gbps / 3 and .after_gbps > 0.05) | not)] | length' "$out")
[ "$bad" = 0 ] && [ "$load" = 0 ] ||
    fail "link-down loaded: $bad bad drills, $load bad load figures: $(cat "$TMP/text")"
pass "link-down under load: $(grep -E '^  load' "$TMP/text" | head -2 | tr '\n' ';')"

# Ctrl-C while it is down: the guardian sets it up again when the drill's pipe closes.
nsx a "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault link-down \
    --netns "$NSP-a" --data-peer 10.91.1.2 --at 0.3 --for 20 --peer 10.91.0.2:7470 \
    --key-file "$key" >/dev/null 2>&1 &
dpid=$!
k=0
while nsx a ip link show da | grep -q "[<,]UP[,>]"; do
    k=$((k + 1))
    [ $k -lt 100 ] || { kill "$dpid"; fail "link-down: da not down within 5 s"; }
    sleep 0.05
done
kill -INT "$dpid"
wait "$dpid"
k=0
until nsx a ip link show da | grep -q "[<,]UP[,>]"; do
    k=$((k + 1))
    [ $k -lt 40 ] || fail "link-down: da stayed down 2 s after the drill was interrupted"
    sleep 0.05
done
pass "an interrupted link-down drill leaves the link up"

# Refusals, each one line: the control connection's netdev (no --data-peer: the data path is
# va), a netdev that carries a default route, no such netdev, a link down already, a data
# address that is not the agent's (the usage refusals: ctl/drill_cli.sh).
# ldrefused STATUS NEEDLE ARGS...
ldrefused() {
    want=$1 needle=$2
    shift 2
    nsx a timeout 60 "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --at 0.3 \
        --for 0.3 --peer 10.91.0.2:7470 --key-file "$key" "$@" >"$TMP/text" 2>"$TMP/err"
    rc=$?
    [ $rc = "$want" ] && grep -qF -- "$needle" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ] ||
        fail "link-down refusal '$needle': status $rc (want $want): $(cat "$TMP/err")"
}
ldrefused 77 "va in $NSP_PATH_A carries the control connection to 10.91.0.2" \
    --fault link-down --netns "$NSP-a"
nsx a ip route add default via 10.91.1.2 dev da
ldrefused 77 "da in $NSP_PATH_A carries a default route" --fault link-down --netns "$NSP-a" \
    --data-peer 10.91.1.2
nsx a ip route del default via 10.91.1.2 dev da
ldrefused 69 "--device nope0: no such netdev in $NSP_PATH_A" --fault link-down \
    --netns "$NSP-a" --data-peer 10.91.1.2 --device nope0
nsx a ip link set da down
ldrefused 69 "da in $NSP_PATH_A is down already" --fault link-down --netns "$NSP-a" \
    --data-peer 10.91.1.2 --device da
nsx a ip link set da up
ldrefused 69 "cannot listen at data_addr 10.91.1.99: Cannot assign requested address (not an address of this agent)" \
    --fault peer-kill --data-peer 10.91.1.99
pass "link-down refusals: the control connection's netdev and a default route's (77), no such netdev and a link down already (69), not the agent's address (69)"

# --device DEV --owned: the drill takes down a netdev of its own namespace (as in a VM, its
# data NIC), here the drill's process in a with da; no namespace is named in the document,
# the refusals still hold (va carries the control connection).
out="$TMP/owned.json"
nsx a timeout 60 "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault link-down \
    --device da --owned --data-peer 10.91.1.2 --at 0.3 --for 0.6 \
    --expect 'detect<0.6s,recover<8s' --peer 10.91.0.2:7470 --key-file "$key" -o "$out" \
    >"$TMP/text" 2>"$TMP/err" || fail "--owned: status $?: $(cat "$TMP/err" "$TMP/text")"
[ "$(jq -r '.fault.device + " " + (.fault.netns // "none") + " " +
        ([.repetitions[].flows[] | select(.recovered | not)] | length | tostring)' "$out")" = \
    "da none 0" ] || fail "--owned: $(jq -c '.fault' "$out") $(cat "$TMP/text")"
nsx a ip link show da | grep -q "[<,]UP[,>]" || fail "--owned: da is not up after the drill"
ldrefused 77 "va in this process's namespace carries the control connection to 10.91.0.2" \
    --fault link-down --device va --owned
pass "link-down of an owned netdev in the drill's own namespace, and its refusal"
