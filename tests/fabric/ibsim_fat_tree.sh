#!/bin/sh
# ibsim_fat_tree: a two-level fat tree (2 spines, 4 leaves, 8 HCAs) under ibsim and
# OpenSM. The discovered graph must match the file exactly; routes between HCAs (also
# between two HCAs that are not this node) must follow the forwarding tables OpenSM
# programmed, hop for hop as ibtracert walks them; a cabling plan equal to the file must
# be clean, and plans that differ from the cabling must be reported.
. "$(dirname "$0")/ibsim_lib.sh"

need_ibsim
start_ibsim "$NETS/fat-tree.net"
run_opensm

lid() { json "$TMP/f.json" "[n['lid'] for n in d['fabric']['ib']['nodes'] if n['desc'] == '$1'][0]"; }

fabtop_fabric "$TMP/f.json" --window 0.2 || fail "fabtop topo --fabric: $(cat "$TMP/f.json.err")"
$CHECK graph "$NETS/fat-tree.net" "$TMP/f.json" || fail "discovered graph differs from the file"
pass "graph matches fat-tree.net (6 switches, 8 HCAs, 16 cables, hop counts)"

# Routes between pairs, two of them not involving this node, named three ways.
h1=$(lid "node01 HCA-1") h3=$(lid "node03 HCA-1") h5=$(lid "node05 HCA-1")
h7=$(lid "node07 HCA-1") h8=$(lid "node08 HCA-1")
fabtop_fabric "$TMP/r.json" --window 0.2 --route "$h1,$h7" --route "node03 HCA-1,node08" \
    --route "0x0000000000100008,$h3" --route "$h7,$h1" --route "node02,node01 HCA-1" ||
    fail "fabtop --route: $(cat "$TMP/r.json.err")"
pairs="$h1:$h7 $h3:$h8 $h5:$h3 $h7:$h1 $(lid "node02 HCA-1"):$h1"
i=0
for p in $pairs; do
    sim timeout 20 ibtracert "${p%%:*}" "${p##*:}" >"$TMP/trace$i" 2>&1 ||
        fail "ibtracert ${p%%:*} ${p##*:}: $(cat "$TMP/trace$i")"
    $CHECK tracert "$TMP/r.json" $i "$TMP/trace$i" || fail "route $p differs from ibtracert"
    i=$((i + 1))
done
[ "$(json "$TMP/r.json" "len(d['fabric']['ib']['routes'][0]['hops'])")" = 3 ] ||
    fail "leaf -> spine -> leaf should be 3 switches"
[ "$(json "$TMP/r.json" "len(d['fabric']['ib']['routes'][4]['hops'])")" = 1 ] ||
    fail "two HCAs on one leaf should be 1 switch apart"
pass "5 routes follow the forwarding tables OpenSM programmed (ibtracert agrees hop by hop)"

# The explorer draws the subnet (issue 21): fabtop --input r.json in tmux, the first route
# selected: spines above leaves above the HCAs, and the route's ports marked '*': the
# source HCA's port and the port each of its three switches forwards on.
if command -v tmux >/dev/null 2>&1; then
    . "$(dirname "$0")/explore_lib.sh"
    explore_start "$TMP/r.json"
    explore_wait explore_shot "Fabric: 6 switches" "the explorer did not show the fabric"
    explore_search "route "
    explore_wait explore_detail "spine-1" "no drawing for the route"
    explore_detail >"$TMP/drawn.txt"
    explore_stop
    sp=$(grep -n "spine-1" "$TMP/drawn.txt" | head -1 | cut -d: -f1)
    lf=$(grep -n "leaf-1" "$TMP/drawn.txt" | head -1 | cut -d: -f1)
    hc=$(grep -n "node01" "$TMP/drawn.txt" | grep -v route | head -1 | cut -d: -f1)
    [ -n "$sp" ] && [ -n "$lf" ] && [ -n "$hc" ] && [ "$sp" -lt "$lf" ] && [ "$lf" -lt "$hc" ] ||
        fail "the drawing's tiers are out of order (spine $sp, leaf $lf, HCAs $hc): $(cat "$TMP/drawn.txt")"
    grep "spine-2" "$TMP/drawn.txt" | grep -q "leaf-1" && fail "spines and leaves share a row"
    stars=$(sed -n "${sp},${hc}p" "$TMP/drawn.txt" | tr -cd '*' | wc -c)
    [ "$stars" -eq 4 ] || fail "the route's ports: $stars marked, expected 4: $(cat "$TMP/drawn.txt")"
    pass "the explorer draws the subnet in tiers with route 1's four ports marked"
fi

# The file itself as the plan: clean. Then two plans that differ.
sim timeout 60 "$FABTOP" topo --fabric --json --window 0 --cabling "$NETS/fat-tree.net" \
    --lldp-socket "$TMP/none.sock" >"$TMP/p0.json" 2>/dev/null
[ "$(json "$TMP/p0.json" "len([f for f in d['lint'] if f['rule'] == 'cabling-plan'])")" = 0 ] ||
    fail "the file as plan reports differences: $(json "$TMP/p0.json" "[f['message'] for f in d['lint'] if f['rule'] == 'cabling-plan']")"
# The plan swaps node05 and node06 on leaf-3, and moves leaf-4's uplink to spine-1 port 8.
sed -e 's/^\[1\] "H5"\[1\]/[1] "H6"[1]/' -e 's/^\[2\] "H6"\[1\]/[2] "H5"[1]/' \
    -e '/^Hca 1 "H5"/{n;s/"L3"\[1\]/"L3"[2]/}' -e '/^Hca 1 "H6"/{n;s/"L3"\[2\]/"L3"[1]/}' \
    -e 's/^\[4\] "L4"\[5\]/[8] "L4"[5]/' -e 's/^\[5\] "S1"\[4\]/[5] "S1"[8]/' \
    "$NETS/fat-tree.net" >"$TMP/plan.net"
cmp -s "$TMP/plan.net" "$NETS/fat-tree.net" && fail "the plan was not changed"
sim timeout 60 "$FABTOP" topo --fabric --json --window 0 --cabling "$TMP/plan.net" \
    --lldp-socket "$TMP/none.sock" >"$TMP/p1.json" 2>/dev/null
rc=$?
[ $rc = 2 ] || fail "a plan that differs gives exit $rc, expected 2 (lint errors)"
json "$TMP/p1.json" "'\n'.join(f['severity'] + ' ' + f['message'] for f in d['lint'] if f['rule'] == 'cabling-plan')" >"$TMP/p1.txt"
for want in "leaf-3 port 1 is cabled to node05 HCA-1 port 1" \
    "node06 HCA-1 port 1 is cabled to leaf-3 port 2" "spine-1 port 8 has no link" \
    "leaf-4 port 5 is cabled to spine-1 port 4"; do
    grep -qF -e "$want" "$TMP/p1.txt" || { cat "$TMP/p1.txt"; fail "plan report lacks '$want'"; }
done
[ "$(wc -l <"$TMP/p1.txt")" = 3 ] || { cat "$TMP/p1.txt"; fail "expected 3 differences"; }
# The JSON form: node08 should be on leaf-4 port 3.
printf '[{"node": "node08 HCA-1", "switch": "leaf-4", "switch_port": 3},\n %s]\n' \
    '{"node": "node07 HCA-1", "port": 1, "switch": "leaf-4", "switch_port": 1}' >"$TMP/plan.json"
sim timeout 60 "$FABTOP" topo --fabric --json --window 0 --cabling "$TMP/plan.json" \
    --lldp-socket "$TMP/none.sock" >"$TMP/p2.json" 2>/dev/null
[ "$(json "$TMP/p2.json" "[f['message'] for f in d['lint'] if f['rule'] == 'cabling-plan']")" = \
  "['plan line 1 wants node08 HCA-1 port 1 <-> leaf-4 port 3, but node08 HCA-1 port 1 is cabled to leaf-4 port 2; leaf-4 port 3 has no link (DOWN/Polling)']" ] ||
    fail "JSON plan: $(json "$TMP/p2.json" "[f['message'] for f in d['lint'] if f['rule'] == 'cabling-plan']")"
pass "cabling plans that differ from the cabling are reported (ibnetdiscover and JSON forms)"

# The explorer, on the snapshot: a Fabric section in the topology tree, the selected
# switch's cabled ports in the detail pane (tmux; polled, never slept).
command -v tmux >/dev/null 2>&1 || { echo "tmux is not installed: explorer check skipped"; exit 0; }
sim timeout 60 "$FABTOP" topo --fabric --window 0 -o "$TMP/snap.json" \
    --lldp-socket "$TMP/none.sock" >/dev/null 2>&1 || fail "fabtop topo --fabric -o"
TMUXS=fabtop-fabric$$
tmx() { tmux -L "$TMUXS" -f /dev/null "$@"; }
trap 'tmx kill-server 2>/dev/null; cleanup' EXIT
tmx new-session -d -x 100 -y 30 \
    "env HOME=$TMP XDG_CONFIG_HOME=$TMP/xdg NO_COLOR=1 $FABTOP --input $TMP/snap.json"
wait_for "the explorer's Fabric section" \
    "tmx capture-pane -p | grep -qF 'Fabric: 6 switches, 8 CAs, 16 links, 0 neighbours'"
tmx send-keys / s p i n e - 2 Enter
wait_for "spine-2's detail" \
    "tmx capture-pane -p | grep -qF 'switch spine-2, 0x0000000000200001, LID'" ||
    fail "explorer: $(tmx capture-pane -p)"
tmx capture-pane -p | grep -qF "port 4   -> leaf-4 port 6, 4X SDR" ||
    fail "explorer detail lacks spine-2 port 4: $(tmx capture-pane -p)"
tmx send-keys F10
pass "the explorer lists the fabric beside the node tree and shows a switch's cabled ports"
