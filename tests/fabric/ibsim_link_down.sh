#!/bin/sh
# ibsim_link_down: the fat tree with one spine-leaf cable taken down through ibsim's
# console while the subnet runs. Before: the route node01 -> node07 crosses it. After:
# discovery shows the port without a link, the cabling plan misses the cable, and the route
# walk stops where the (stale) forwarding table sends packets into the dead port, as
# ibtracert does too. After OpenSM sweeps again the route goes around it, as ibtracert says.
. "$(dirname "$0")/ibsim_lib.sh"

need_ibsim
start_ibsim "$NETS/fat-tree.net"
run_opensm

lid() { json "$TMP/f0.json" "[n['lid'] for n in d['fabric']['ib']['nodes'] if n['desc'] == '$1'][0]"; }
fabtop_fabric "$TMP/f0.json" --window 0 || fail "fabtop before: $(cat "$TMP/f0.json.err")"
h1=$(lid "node01 HCA-1") h7=$(lid "node07 HCA-1")
fabtop_fabric "$TMP/r0.json" --window 0 --route "$h1,$h7" || fail "fabtop --route before"
[ "$(json "$TMP/r0.json" "d['fabric']['ib']['routes'][0]['status']")" = ok ] || fail "route before"
# The spine the forwarding tables chose for node07, and the leaf-4 port facing it.
spine=$(json "$TMP/r0.json" "(lambda ib: ib['nodes'][ib['routes'][0]['hops'][1]['node']]['desc'])(d['fabric']['ib'])")
leafport=$(json "$TMP/r0.json" "d['fabric']['ib']['routes'][0]['hops'][2]['in']")
spineport=$(json "$TMP/r0.json" "d['fabric']['ib']['routes'][0]['hops'][1]['out']")
case $spine in spine-1) sid=S1 ;; spine-2) sid=S2 ;; *) fail "route does not cross a spine: $spine" ;; esac
pass "before: node01 -> node07 crosses $spine port $spineport -> leaf-4 port $leafport"

console "Unlink \"L4\"[$leafport]"
fabtop_fabric "$TMP/f1.json" --window 0 --route "$h1,$h7" --lint --cabling "$NETS/fat-tree.net"
rc=$?
[ $rc = 2 ] || fail "fabtop --lint after the unlink: exit $rc, expected 2"
[ "$(json "$TMP/f1.json" "len(d['fabric']['ib']['links'])")" = 15 ] || fail "expected 15 cables"
st=$(json "$TMP/f1.json" "[p['state'] + '/' + p['phys_state'] for p in d['fabric']['ib']['ports'] if d['fabric']['ib']['nodes'][p['node']]['desc'] == 'leaf-4' and p['num'] == $leafport][0]")
[ "$st" = DOWN/Polling ] || fail "leaf-4 port $leafport is $st"
status=$(json "$TMP/f1.json" "d['fabric']['ib']['routes'][0]['status']")
detail=$(json "$TMP/f1.json" "d['fabric']['ib']['routes'][0]['detail']")
[ "$status" = link-down ] || fail "route status $status ($detail)"
case $detail in
"$spine forwards LID $h7 out of port $spineport, which is DOWN/Polling"*) ;;
*) fail "route detail: $detail" ;;
esac
sim timeout 20 ibtracert "$h1" "$h7" >"$TMP/trace1" 2>&1 && fail "ibtracert still finds a way"
grep -q -i "bad\|fail\|unconnected\|down" "$TMP/trace1" || fail "ibtracert: $(cat "$TMP/trace1")"
json "$TMP/f1.json" "[f['rule'] + ': ' + f['message'] for f in d['lint'] if f['rule'] in ('route-broken', 'cabling-plan')]" >"$TMP/l1.txt"
grep -qF "route-broken: link-down: $spine forwards LID $h7" "$TMP/l1.txt" || fail "lint: $(cat "$TMP/l1.txt")"
grep -qF "cabling-plan: plan line" "$TMP/l1.txt" || fail "the plan does not miss the cable"
grep -qF "leaf-4 port $leafport has no link (DOWN/Polling)" "$TMP/l1.txt" ||
    fail "the plan report does not name leaf-4 port $leafport"
pass "after the unlink: port down, cable missing from the plan, route stops at $spine port $spineport (ibtracert fails too)"

run_opensm
fabtop_fabric "$TMP/f2.json" --window 0 --route "$h1,$h7" || fail "fabtop after the sweep"
[ "$(json "$TMP/f2.json" "d['fabric']['ib']['routes'][0]['status']")" = ok ] ||
    fail "route after the sweep: $(json "$TMP/f2.json" "d['fabric']['ib']['routes'][0]['detail']")"
other=$(json "$TMP/f2.json" "(lambda ib: ib['nodes'][ib['routes'][0]['hops'][1]['node']]['desc'])(d['fabric']['ib'])")
[ "$other" != "$spine" ] || fail "the new route still crosses $spine"
sim timeout 20 ibtracert "$h1" "$h7" >"$TMP/trace2" 2>&1 || fail "ibtracert after the sweep"
$CHECK tracert "$TMP/f2.json" 0 "$TMP/trace2" || fail "rerouted path differs from ibtracert"
pass "after OpenSM sweeps again: node01 -> node07 goes through $other, as ibtracert says"
