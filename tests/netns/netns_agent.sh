#!/bin/sh
# netns_agent: `fabtop serve` under load from another namespace, through a real veth pair:
# the rate cap of one client key held on the wire by a run of five flows (five sessions);
# twelve legitimate runs while 200 hostile connections without the key (idle, slowloris,
# garbage, wrong proof, spinning) come from nine addresses on the client's veth, one of them
# the client's own; the agent's log stays small and summarises the refusals.
. "$(dirname "$0")/lib.sh"
need_netns
mkns a
mkns b
link a va b vb
addr a va 10.81.0.1/24
for i in 1 2 3 4 5 6 7 8; do addr a va "10.81.0.1$i/24"; done
addr b vb 10.81.0.2/24
mkkey >/dev/null
serve b 10.81.0.2 "$TMP/serve.log" --max-rate 0.2

# 1. Five rx stream flows of one run (one key) share 0.2 Gb/s, counted on the agent's veth.
cat >"$TMP/five.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "five", "flows": [
J
for i in 1 2 3 4 5; do
    [ $i -gt 1 ] && echo "," >>"$TMP/five.json"
    printf '{"name": "rx%d", "role": "%s", "op": "stream", "direction": "rx", "size": 65536, "warmup_s": 0.2, "duration_s": 4}' \
        $i "$([ $i = 1 ] && echo foreground || echo background)" >>"$TMP/five.json"
done
echo ']}' >>"$TMP/five.json"
txb() { nsx b cat /sys/class/net/vb/statistics/tx_bytes 2>/dev/null ||
    ip -n "$NSP-b" -s link show vb | awk '/TX:/ {getline; print $1}'; }
nsx a "$FABTOP" run --mix "$TMP/five.json" --peer 10.81.0.2 --key-file "$TMP/key" \
    -o "$TMP/five.out.json" >"$TMP/five.out" 2>&1 &
rp=$!
sleep 1.5
b0=$(txb)
t0=$(now)
sleep 2
b1=$(txb)
t1=$(now)
wait $rp || { cat "$TMP/five.out"; fail "the five-flow run failed"; }
gbps=$(python3 -c "print('%.3f' % (($b1 - $b0) * 8 / ($t1 - $t0) / 1e9))")
[ "$(python3 -c "print($gbps <= 0.21 and $gbps > 0.12)")" = True ] ||
    fail "five flows at --max-rate 0.2: $gbps Gb/s on the agent's veth"
pass "five flows of one key at --max-rate 0.2: $gbps Gb/s on the agent's veth"

# 2. A flood without the key while twelve legitimate runs go on.
cat >"$TMP/pp.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "pp",
 "flows": [{"name": "pp", "op": "pingpong", "size": 64, "warmup_s": 0.1, "duration_s": 0.3}]}
J
log0=$(wc -c <"$TMP/serve.log")
nsx a python3 "$(dirname "$0")/flood.py" 10.81.0.2 7470 30 200 10.81.0.11 10.81.0.12 \
    10.81.0.13 10.81.0.14 10.81.0.15 10.81.0.16 10.81.0.17 10.81.0.18 10.81.0.1 \
    >"$TMP/flood.out" 2>&1 &
fp=$!
PIDS="$PIDS $fp"
sleep 1
worst=0
for i in $(seq 1 12); do
    s=$(date +%s%N)
    nsx a "$FABTOP" run --mix "$TMP/pp.json" --peer 10.81.0.2 --key-file "$TMP/key" \
        -o "$TMP/pp.out.json" >"$TMP/pp.out" 2>&1 || { cat "$TMP/pp.out"; fail "legitimate run $i of 12 under the flood"; }
    ms=$((($(date +%s%N) - s) / 1000000))
    [ $ms -gt $worst ] && worst=$ms
done
wait $fp
made=$(cat "$TMP/flood.out")
pass "12 of 12 legitimate runs under a flood of 200 connections without the key ($made made), the slowest $worst ms"
sleep 10.5 # the summaries of the last window
bytes=$(($(wc -c <"$TMP/serve.log") - log0))
grep -q "refused [0-9]* more connections from 10.81.0.1[1-8] in the last [0-9]* s: " "$TMP/serve.log" ||
    fail "no per-address summary in the log"
[ $bytes -lt 40000 ] || fail "the flood wrote $bytes bytes of log"
pass "the flood's $made connections wrote $bytes bytes to the agent's log, e.g. $(grep -m1 'more connections from' "$TMP/serve.log" | cut -c1-160)"
