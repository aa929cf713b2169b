#!/bin/sh
# ibsim_one_switch: one switch with four HCAs (one of them dual-ported) under ibsim and
# OpenSM. fabtop's discovery must match the file exactly (nodes, GUIDs, port counts,
# every cable, widths, hop counts), say which switch port the local HCA is cabled to, and
# its routes to the other HCAs must be the ones ibtracert walks.
. "$(dirname "$0")/ibsim_lib.sh"

need_ibsim
start_ibsim "$NETS/one-switch.net"
run_opensm

fabtop_fabric "$TMP/f.json" --window 0.2 || fail "fabtop topo --fabric: $(cat "$TMP/f.json.err")"
$CHECK graph "$NETS/one-switch.net" "$TMP/f.json" || fail "discovered graph differs from the file"
[ "$(json "$TMP/f.json" "d['fabric']['ib']['locals'][0]['ca']")" = ibsim0 ] ||
    fail "the local CA is not ibsim0"
peer=$(json "$TMP/f.json" "(lambda ib: (lambda p: ib['nodes'][ib['ports'][p]['node']]['desc'] + ' port ' + str(ib['ports'][p]['num']))(ib['ports'][ib['locals'][0]['fport']]['remote']))(d['fabric']['ib'])")
[ "$peer" = "tor-1 port 1" ] || fail "local port cabled to '$peer', not tor-1 port 1"
pass "graph matches one-switch.net; gpu-node-1 is cabled to $peer"

# Default routes: from the local port to every other CA (3 of them; the dual-port HCA once).
n=$(json "$TMP/f.json" "len(d['fabric']['ib']['routes'])")
[ "$n" = 3 ] || fail "$n default routes, expected 3"
i=0
while [ $i -lt 3 ]; do
    dst=$(json "$TMP/f.json" "d['fabric']['ib']['routes'][$i]['dst_lid']")
    src=$(json "$TMP/f.json" "d['fabric']['ib']['routes'][$i]['src_lid']")
    sim timeout 20 ibtracert "$src" "$dst" >"$TMP/trace$i" 2>&1 || fail "ibtracert $src $dst"
    $CHECK tracert "$TMP/f.json" $i "$TMP/trace$i" || fail "route $i differs from ibtracert"
    i=$((i + 1))
done

# The text view: switch, its cabled ports, the dual-port HCA's two cables.
sim timeout 60 "$FABTOP" topo --fabric --window 0 --lldp-socket "$TMP/none.sock" \
    >"$TMP/f.txt" 2>"$TMP/f.txt.err" || fail "fabtop topo --fabric (text)"
for want in "switch tor-1, 0x0000000000200000, LID" "port 7   -> storage-1 mlx5_0 port 1, 4X" \
    "port 8   -> storage-1 mlx5_0 port 2, 4X" "ibsim0 port 1 (LID" "-> tor-1 port 1, 4X SDR" \
    "storage-1 mlx5_0, 0x0000000000100006" "lldpd is not running"; do
    grep -qF -e "$want" "$TMP/f.txt" || { cat "$TMP/f.txt"; fail "text lacks '$want'"; }
done
pass "routes follow the forwarding tables; text view shows the switch and its cables"
