#!/bin/sh
# ibsim_counters: switch port counters through PerfMgt MADs. ibsim counts the packets it
# moves and, on a port given an error rate, drops received packets and counts them in
# PortRcvErrors. (1) With traffic dropped on leaf-4 port 1 during fabtop's window, the
# route node01 -> node07 shows that port's errors rising (lint switch-counter-rising).
# (2) Quiet again, the counters fabtop reads equal perfquery's. (3) With every port of a
# spine dropping everything, fabtop still finishes within its MAD timeouts and says so.
. "$(dirname "$0")/ibsim_lib.sh"

need_ibsim
start_ibsim "$NETS/fat-tree.net"
run_opensm

fabtop_fabric "$TMP/f0.json" --window 0 || fail "fabtop: $(cat "$TMP/f0.json.err")"
lid() { json "$TMP/f0.json" "[n['lid'] for n in d['fabric']['ib']['nodes'] if n['desc'] == '$1'][0]"; }
h1=$(lid "node01 HCA-1") h7=$(lid "node07 HCA-1") l4=$(lid "leaf-4")

# (1) Traffic to node07 whose answers leaf-4 port 1 drops half of, during the window.
console 'Error "L4"[1] 50'
# The loop ends by a flag (killing the subshell would leave its perfquery behind), and each
# perfquery is bounded, so that waiting for the loop is; it also ends when $TMP is gone.
(while [ -d "$TMP" ] && [ ! -e "$TMP/stop-traffic" ]; do sim timeout 5 perfquery -t 20 "$h7" 1 >/dev/null 2>&1; done) &
LOOP=$!
fabtop_fabric "$TMP/f1.json" --window 1.5 --route "$h1,$h7" --lint --mad-retries 3
: >"$TMP/stop-traffic"
wait $LOOP 2>/dev/null
console 'Error "L4"[1] 0'
rising=$(json "$TMP/f1.json" "' | '.join(f['object'] + ': ' + f['message'] for f in d['lint'] if f['rule'] == 'switch-counter-rising')")
case $rising in
"leaf-4 port 1: PortRcvErrors (port_rcv_errors) rose by "*) ;;
*) fail "switch-counter-rising findings: $rising" ;;
esac
pass "errors on leaf-4 port 1 rise during the window and are reported: $rising"

# (2) No traffic: what fabtop reads equals what perfquery reads right after.
fabtop_fabric "$TMP/f2.json" --window 0.2 --route "$h1,$h7" || fail "fabtop (quiet)"
sim timeout 20 perfquery "$l4" 1 >"$TMP/pq" 2>&1 || fail "perfquery $l4 1: $(cat "$TMP/pq")"
$CHECK counters "$TMP/f2.json" leaf-4 1 "$TMP/pq" port_rcv_errors || fail "counters differ from perfquery"
sim timeout 60 "$FABTOP" topo --fabric --window 0.2 --route "$h1,$h7" \
    --lldp-socket "$TMP/none.sock" >"$TMP/f2.txt" 2>/dev/null
grep -q "leaf-4: in port [56], out port 1 -> node07 HCA-1 port 1" "$TMP/f2.txt" ||
    { cat "$TMP/f2.txt"; fail "text route lacks leaf-4"; }
grep -q "egress: PortRcvErrors [1-9][0-9]* (+0), other errors and XmitWait 0; data out" \
    "$TMP/f2.txt" || fail "text route lacks leaf-4 port 1's counters"
pass "counters read through PerfMgt MADs equal perfquery's"

# (3) A dead spine: every port of spine-2 drops what it receives.
console 'Error "S2" 100'
t0=$(now)
fabtop_fabric "$TMP/f3.json" --window 0.2 --mad-timeout 100 --mad-retries 1 ||
    fail "fabtop with a dead switch: $(cat "$TMP/f3.json.err")"
took=$(since "$t0")
awk -v t="$took" 'BEGIN { exit !(t < 30) }' || fail "fabtop took $took s with a dead switch"
[ "$(json "$TMP/f3.json" "len([n for n in d['fabric']['ib']['nodes'] if n['desc'] == 'spine-2'])")" = 0 ] ||
    fail "spine-2 answered although it drops everything"
[ "$(json "$TMP/f3.json" "d['fabric']['ib']['mad_timeout_ms']")" = 100 ] || fail "MAD timeout not recorded"
json "$TMP/f3.json" "[r['status'] + ': ' + r['detail'] for r in d['fabric']['ib']['routes'] if r['status'] != 'ok']" >"$TMP/r3"
grep -q "no-answer: leaf-[1-4] forwards LID [0-9]* out of port 6, which is up, but the node behind it did not answer discovery" "$TMP/r3" ||
    fail "routes through the dead spine: $(cat "$TMP/r3")"
console 'Error "S2" 0'
pass "a dead spine costs $took s (MAD timeout 100 ms, 1 retry); routes into it say no-answer"
