#!/bin/sh
# lldp_netns: two network namespaces joined by a veth pair, lldpd in each with its own
# control socket and pid file. The "switch" side has a system name, a port description
# and a 1 s transmit interval. fabtop topo --fabric in the host namespace must report the
# switch as the neighbour of its interface (name, port id and description, management
# address); pointed at a socket where no lldpd runs, it must say so and how to start it.
. "$(dirname "$0")/../netns/lib.sh"

need_netns
command -v lldpd >/dev/null 2>&1 || {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lldpd \
            >/dev/null 2>&1
}
command -v lldpd >/dev/null 2>&1 && command -v lldpcli >/dev/null 2>&1 ||
    skip "lldpd cannot be installed"

mkns host
mkns sw
link host eth-h sw swp7
addr sw swp7 10.77.0.2/24
addr host eth-h 10.77.0.1/24

# lldpd NS IFACE: in the foreground (-d), so that its pid is ours to stop (SIGTERM, then
# wait: lldpd's privilege-separated child leaves with it).
# lldpd drops privileges (user _lldpd) before it opens its socket, so the sockets live in
# a directory that user can enter ($TMP is private to root).
LLDPDS=""
SOCKS=$(mktemp -d /tmp/fabtop-lldp.XXXXXX)
chmod 755 "$SOCKS"
lldpd_in() {
    ip netns exec "$NSP-$1" lldpd -d -u "$SOCKS/$1.sock" -p "$SOCKS/$1.pid" -I "$2" \
        >"$TMP/$1.lldpd.log" 2>&1 &
    LLDPDS="$LLDPDS $!"
    wait_for "lldpd in $1" "lldpcli -u '$SOCKS/$1.sock' show configuration"
}
stop_lldpds() {
    for p in $LLDPDS; do kill "$p" 2>/dev/null; done
    for p in $LLDPDS; do wait "$p" 2>/dev/null; done
    LLDPDS=""
    rm -rf "$SOCKS"
}
trap 'stop_lldpds; cleanup' EXIT
lldpd_in sw swp7
lldpd_in host eth-h
lldpcli -u "$SOCKS/sw.sock" configure system hostname leaf-sw-7 >/dev/null
lldpcli -u "$SOCKS/sw.sock" configure ports swp7 lldp portdescription "Ethernet1/7 to gpu-node-3" >/dev/null
lldpcli -u "$SOCKS/sw.sock" configure lldp tx-interval 1 >/dev/null
lldpcli -u "$SOCKS/host.sock" configure lldp tx-interval 1 >/dev/null
wait_for "the switch to be seen" \
    "nsx host '$FABTOP' topo --fabric --json --lldp-socket '$SOCKS/host.sock' | grep -q '\"sysname\":[^,]*leaf-sw-7'" 20

nsx host "$FABTOP" topo --fabric --json --lldp-socket "$SOCKS/host.sock" >"$TMP/f.json" 2>"$TMP/f.err" ||
    fail "fabtop topo --fabric: $(cat "$TMP/f.err")"
nb="r['fabric']['lldp']['neighbours']"
[ "$(json "$TMP/f.json" "len($nb)")" = 1 ] || fail "neighbours: $(json "$TMP/f.json" "$nb")"
[ "$(json "$TMP/f.json" "$nb[0]['ifname']")" = eth-h ] || fail "wrong interface"
[ "$(json "$TMP/f.json" "$nb[0]['sysname']")" = leaf-sw-7 ] || fail "system name"
[ "$(json "$TMP/f.json" "$nb[0]['port_desc']")" = "Ethernet1/7 to gpu-node-3" ] || fail "port description"
[ "$(json "$TMP/f.json" "$nb[0]['mgmt_addr']")" = 10.77.0.2 ] || fail "management address: $(json "$TMP/f.json" "$nb[0]['mgmt_addr']")"
mac=$(nsx sw cat /sys/class/net/swp7/address)
[ "$(json "$TMP/f.json" "$nb[0]['port_id']")" = "$mac" ] || fail "port id: $(json "$TMP/f.json" "$nb[0]['port_id']") vs $mac"
[ "$(json "$TMP/f.json" "$nb[0]['port_id_type']")" = mac ] || fail "port id type"
[ "$(json "$TMP/f.json" "$nb[0]['protocol']")" = LLDP ] || fail "protocol"
[ "$(json "$TMP/f.json" "$nb[0]['vlan']")" = None ] || fail "a VLAN appeared from nowhere"
case $(json "$TMP/f.json" "r['fabric']['lldp']['status']") in
"1 neighbour on the 1 interface lldpd watches ($SOCKS/host.sock)") ;;
*) fail "status: $(json "$TMP/f.json" "r['fabric']['lldp']['status']")" ;;
esac
pass "lldpd's neighbour: leaf-sw-7 port $mac \"Ethernet1/7 to gpu-node-3\", mgmt 10.77.0.2"

nsx host "$FABTOP" topo --fabric --lldp-socket "$SOCKS/host.sock" >"$TMP/f.txt" 2>&1 || fail "text"
grep -qF "eth-h: leaf-sw-7 port $mac (mac) \"Ethernet1/7 to gpu-node-3\", mgmt 10.77.0.2, VLAN n/a" \
    "$TMP/f.txt" || { cat "$TMP/f.txt"; fail "text lacks the neighbour line"; }
pass "text view shows the neighbour"

# The snapshot keeps the neighbour; loading it back shows it again, unchanged.
nsx host "$FABTOP" topo --fabric --lldp-socket "$SOCKS/host.sock" -o "$TMP/snap.json" >/dev/null 2>&1 ||
    fail "fabtop -o"
"$FABTOP" topo --input "$TMP/snap.json" --fabric >"$TMP/again.txt" 2>&1 || fail "reload"
grep -qF "eth-h: leaf-sw-7 port $mac" "$TMP/again.txt" || fail "the snapshot lost the neighbour"
pass "the snapshot carries the neighbour"

# The explorer draws the neighbour (issue 21): the snapshot in tmux, the LLDP line selected:
# leaf-sw-7 above this node in the detail pane, a "+" for the interface that hears it.
if command -v tmux >/dev/null 2>&1; then
    . "$(dirname "$0")/explore_lib.sh"
    explore_start "$TMP/snap.json"
    explore_wait explore_shot "LLDP eth-h" "the explorer lists no LLDP line"
    explore_search "LLDP eth-h"
    explore_wait explore_detail "leaf-sw-7 .*+" "no drawing of the neighbour"
    explore_detail >"$TMP/drawn.txt"
    explore_stop
    sw=$(grep -n "leaf-sw-7 .*+" "$TMP/drawn.txt" | head -1 | cut -d: -f1)
    me=$(sed -n "$((sw + 1)),$((sw + 3))p" "$TMP/drawn.txt" | grep -n " +" | head -1 | cut -d: -f1)
    [ -n "$me" ] || fail "no row for this node under leaf-sw-7: $(cat "$TMP/drawn.txt")"
    pass "the explorer draws leaf-sw-7 above this node"
fi

# No lldpd at that socket: say so, and how to start it.
nsx host "$FABTOP" topo --fabric --json --lldp-socket "$TMP/none.sock" >"$TMP/n.json" 2>/dev/null ||
    fail "fabtop without lldpd must still succeed"
case $(json "$TMP/n.json" "r['fabric']['lldp']['status']") in
"lldpd is not running (no control socket at $TMP/none.sock): start it with 'systemctl start lldpd'"*) ;;
*) fail "status without lldpd: $(json "$TMP/n.json" "r['fabric']['lldp']['status']")" ;;
esac
pass "without lldpd the fabric view says it is not running and how to start it"
