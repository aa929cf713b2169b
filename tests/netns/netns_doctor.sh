#!/bin/sh
# netns_doctor: `fabtop doctor` on real kernel paths between namespaces it creates:
# 1. clean: two ends on one veth, matched -> exit 0;
# 2. an MTU black hole: client -- router -- agent, the router's far link at MTU 1280 and
#    nftables on the router dropping only ICMP "fragmentation needed" -> the black hole named
#    with its size (1280 bytes), exit 2;
# 3. rp_filter strict (set explicitly: new namespaces start at 0) on the agent's interface
#    while its route back to the client leaves by the other link -> named, exit 2;
# 4. two NICs on one subnet at the client (arp_ignore 0) -> ARP flux named, exit 1;
# 5. IPv6: a router to a 1280-byte link, ICMPv6 "packet too big" delivered (exit 1), then
#    dropped by nftables -> the black hole named with its size, exit 2.
. "$(dirname "$0")/lib.sh"
need_netns
command -v nft >/dev/null || skip "nftables (nft) is not installed"
mkkey >/dev/null

doc() { # NS OUT ARGS...: run the doctor in NS, the document to OUT.json; sets RC
    ns=$1 out=$2
    shift 2
    nsx "$ns" "$FABTOP" doctor --key-file "$TMP/key" --json "$@" >"$TMP/$out.json" \
        2>"$TMP/$out.err"
    RC=$?
}
rules() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join(f['rule'] for f in d['findings']))" "$1"; }
finding() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('\n'.join(f['message'] for f in d['findings'] if f['rule']==sys.argv[2]))" "$1" "$2"; }

# ---- 1. clean ----
mkns c
mkns s
link c c0 s s0
addr c c0 10.91.0.1/24
addr s s0 10.91.0.2/24
for n in c s; do nsx $n sysctl -qw net.ipv4.conf.all.rp_filter=0; done
serve s 10.91.0.2 "$TMP/serve1.log"
doc c clean --peer 10.91.0.2
[ "$RC" = 0 ] || { cat "$TMP/clean.json" "$TMP/clean.err"; fail "clean path: exit $RC, not 0"; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['probe']; assert p['largest_ok_bytes']==1500==p['tried_bytes'], p; assert d['remote']['addr_dev']=='s0', d['remote']" \
    "$TMP/clean.json" || fail "clean path: the probe or the peer's facts are wrong"
pass "clean path: exit 0, 1500 bytes probed end to end"
kill -9 "$SERVE_PID" 2>/dev/null

# ---- 2. MTU black hole ----
mkns r
mkns a
link c c1 r r0
link r r1 a a0
addr c c1 10.92.0.1/24
addr r r0 10.92.0.254/24
addr r r1 10.93.0.254/24
addr a a0 10.93.0.2/24
ip -n "$NSP-r" link set r1 mtu 1280
ip -n "$NSP-a" link set a0 mtu 1280
nsx r sysctl -qw net.ipv4.ip_forward=1
ip -n "$NSP-c" route add 10.93.0.0/24 via 10.92.0.254
ip -n "$NSP-a" route add 10.92.0.0/24 via 10.93.0.254
serve a 10.93.0.2 "$TMP/serve2.log"
# Before the filter: the router's ICMP reaches the client, discovery works (a warning).
doc c icmp --peer 10.93.0.2
[ "$RC" = 1 ] || { cat "$TMP/icmp.json" "$TMP/icmp.err"; fail "ICMP path: exit $RC, not 1"; }
rules "$TMP/icmp.json" | grep -q pmtu-smaller || fail "ICMP path: no pmtu-smaller: $(rules "$TMP/icmp.json")"
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['probe']; assert p['largest_ok_bytes']==1280 and p['icmp_mtu_bytes']==1280, p" \
    "$TMP/icmp.json" || fail "ICMP path: the probe did not find 1280 bytes with ICMP"
pass "ICMP delivered: path MTU 1280 found, discovery works (exit 1)"
nsx r nft -f - <<'N' || fail "nft ruleset on the router"
table inet fabtop_doctor {
    chain local_out {
        type filter hook output priority 0; policy accept;
        icmp type destination-unreachable icmp code frag-needed drop
    }
    chain forwarded {
        type filter hook forward priority 0; policy accept;
        icmp type destination-unreachable icmp code frag-needed drop
    }
}
N
doc c hole --peer 10.93.0.2
[ "$RC" = 2 ] || { cat "$TMP/hole.json" "$TMP/hole.err"; fail "black hole: exit $RC, not 2"; }
msg=$(finding "$TMP/hole.json" pmtu-blackhole)
echo "$msg"
echo "$msg" | grep -q "packets above 1280 bytes vanish" || fail "black hole not named with its size: $(rules "$TMP/hole.json")"
pass "MTU black hole named: packets above 1280 bytes vanish (exit 2)"
kill -9 "$SERVE_PID" 2>/dev/null

# ---- 3. rp_filter strict on an asymmetric route ----
# Agent v: v0 10.94.0.2 (the data path, --to), v1 10.95.0.2 (the control channel).
# Its route back to the client's data address 10.94.0.1 leaves by v1.
mkns u
mkns v
link u u0 v v0
link u u1 v v1
addr u u0 10.94.0.1/24
addr u u1 10.95.0.1/24
addr v v0 10.94.0.2/24
addr v v1 10.95.0.2/24
ip -n "$NSP-v" route add 10.94.0.1/32 via 10.95.0.1 dev v1
nsx v sysctl -qw net.ipv4.conf.all.rp_filter=0
nsx v sysctl -qw net.ipv4.conf.v0.rp_filter=1
nsx u sysctl -qw net.ipv4.conf.all.rp_filter=0
serve v 10.95.0.2 "$TMP/serve3.log"
doc u rp --peer 10.95.0.2 --to 10.94.0.2
[ "$RC" = 2 ] || { cat "$TMP/rp.json" "$TMP/rp.err"; fail "rp_filter: exit $RC, not 2"; }
msg=$(finding "$TMP/rp.json" rp-filter)
echo "$msg"
echo "$msg" | grep -q "rp_filter is strict (1) on v0" || fail "rp_filter not named: $(rules "$TMP/rp.json")"
echo "$msg" | grep -q "leaves by v1" || fail "rp_filter: the other interface not named"
pass "strict rp_filter on an asymmetric route named (exit 2)"
# The same path with loose rp_filter (2): no rp-filter finding.
nsx v sysctl -qw net.ipv4.conf.v0.rp_filter=2
doc u rp2 --peer 10.95.0.2 --to 10.94.0.2 --no-probe
rules "$TMP/rp2.json" | grep -q rp-filter && fail "loose rp_filter still flagged"
pass "loose rp_filter on the same route: not flagged"
kill -9 "$SERVE_PID" 2>/dev/null

# ---- 4. two NICs on one subnet (ARP flux) ----
# (a veth into the agent's namespace, no address at that end: this kernel has no dummy)
link c cd s sd
addr c cd 10.91.0.11/24
serve s 10.91.0.2 "$TMP/serve4.log"
doc c flux --peer 10.91.0.2
[ "$RC" = 1 ] || { cat "$TMP/flux.json" "$TMP/flux.err"; fail "ARP flux: exit $RC, not 1"; }
msg=$(finding "$TMP/flux.json" arp-flux)
echo "$msg"
echo "$msg" | grep -q "ARP flux" || fail "ARP flux not named: $(rules "$TMP/flux.json")"
echo "$msg" | grep -q "c0 and cd" || fail "ARP flux: the two NICs not named"
nsx c sysctl -qw net.ipv4.conf.all.arp_ignore=1
doc c flux2 --peer 10.91.0.2
[ "$RC" = 0 ] || { cat "$TMP/flux2.json"; fail "arp_ignore=1: exit $RC, not 0"; }
pass "ARP flux named (exit 1); clean again with arp_ignore=1 (exit 0)"
kill -9 "$SERVE_PID" 2>/dev/null

# ---- 5. IPv6: a clean path, then an MTU black hole ----
# p -- q -- w on unique-local prefixes, q's far link and w at 1280 (IPv6's minimum), nodad so
# the addresses are usable at once. IPv6 routers never fragment: they answer ICMPv6 "packet
# too big" (RFC 8201), which nftables on q then drops.
[ -e /proc/net/if_inet6 ] || skip "this kernel has no IPv6"
mkns p
mkns q
mkns w
link p p0 q q0
link q q1 w w0
ip -n "$NSP-p" addr add fd00:96::1/64 dev p0 nodad
ip -n "$NSP-q" addr add fd00:96::fe/64 dev q0 nodad
ip -n "$NSP-q" addr add fd00:97::fe/64 dev q1 nodad
ip -n "$NSP-w" addr add fd00:97::2/64 dev w0 nodad
ip -n "$NSP-q" link set q1 mtu 1280
ip -n "$NSP-w" link set w0 mtu 1280
nsx q sysctl -qw net.ipv6.conf.all.forwarding=1
ip -n "$NSP-p" -6 route add fd00:97::/64 via fd00:96::fe
ip -n "$NSP-w" -6 route add fd00:96::/64 via fd00:97::fe
serve w "[fd00:97::2]" "$TMP/serve5.log"
doc p v6icmp --peer "[fd00:97::2]"
[ "$RC" = 1 ] || { cat "$TMP/v6icmp.json" "$TMP/v6icmp.err"; fail "IPv6 ICMP path: exit $RC, not 1"; }
rules "$TMP/v6icmp.json" | grep -q pmtu-smaller || fail "IPv6 ICMP path: no pmtu-smaller: $(rules "$TMP/v6icmp.json")"
python3 - "$TMP/v6icmp.json" <<'PY' || fail "IPv6 ICMP path: the probe or the facts are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
p, l, r = d["probe"], d["local"], d["remote"]
assert p["largest_ok_bytes"] == 1280 and p["icmp_mtu_bytes"] == 1280, p
assert l["local_addr"] == "fd00:96::1" and l["subnet"] == "fd00:96::/64", l
assert l["route_via"] == "fd00:96::fe" and l["route_dev"] == "p0", l
assert r["addr_dev"] == "w0" and r["subnet"] == "fd00:97::/64", r
# rp_filter and arp_ignore are IPv4's: not read for an IPv6 path
assert l["rp_filter_all"] is None and l["arp_ignore_all"] is None, l
PY
pass "IPv6 with ICMPv6 delivered: path MTU 1280 found over a router, the facts of both ends (exit 1)"
nsx q nft -f - <<'N' || fail "nft ruleset on the IPv6 router"
table inet fabtop_doctor6 {
    chain local_out {
        type filter hook output priority 0; policy accept;
        icmpv6 type packet-too-big drop
    }
    chain forwarded {
        type filter hook forward priority 0; policy accept;
        icmpv6 type packet-too-big drop
    }
}
N
doc p v6hole --peer "[fd00:97::2]"
[ "$RC" = 2 ] || { cat "$TMP/v6hole.json" "$TMP/v6hole.err"; fail "IPv6 black hole: exit $RC, not 2"; }
msg=$(finding "$TMP/v6hole.json" pmtu-blackhole)
echo "$msg"
echo "$msg" | grep -q "packets above 1280 bytes vanish" || fail "IPv6 black hole not named with its size: $(rules "$TMP/v6hole.json")"
echo "$msg" | grep -q "no ICMPv6 \"packet too big\" came back" || fail "IPv6 black hole: not named as ICMPv6's"
pass "IPv6 MTU black hole named: packets above 1280 bytes vanish (exit 2)"
