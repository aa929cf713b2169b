#!/bin/sh
# cli_fabric: the fabric options of `fabtop topo` refuse bad input with one line and the
# sysexits status (64 usage, 65 bad data, 66 missing input) and nothing on stdout; a
# snapshot without a fabric says so under --fabric; and on a node without InfiniBand
# management or lldpd the fabric view says what is missing and how to get it (exit 0).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect() {
    want=$1 needle=$2
    shift 3
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$(wc -l <"$tmp/err")" -gt 2 ]; then
        echo "FAIL: fabtop $* -> status $got (want $want), stderr:"
        sed 's/^/    /' "$tmp/err"
        [ -s "$tmp/out" ] && echo "    (and unexpected stdout)"
        fails=$((fails + 1))
    else
        echo "PASS: fabtop $* -> $got: $(head -1 "$tmp/err")"
    fi
}

printf 'Switch 8 "S"\n[1] "H"[1\n' >"$tmp/broken.net"
printf 'Switch 8 leaf-1\n' >"$tmp/noquote.net"
printf '[{"node": "a"}]\n' >"$tmp/plan.json"
expect 64 "--route takes SRC,DST" -- topo --fabric --route 12
expect 64 "--route takes SRC,DST" -- topo --fabric --route ,12
expect 64 "--expect-link-layer takes ib or ethernet, not 'fc'" -- topo --expect-link-layer fc
expect 64 "--mad-timeout takes 1 to 60000, not '0'" -- topo --fabric --mad-timeout 0
expect 64 "--mad-retries takes 0 to 20, not 'x'" -- topo --fabric --mad-retries x
expect 64 "--ca takes NAME or NAME:PORT, not 'mlx5_0:0'" -- topo --fabric --ca mlx5_0:0
expect 66 "$tmp/none.net" -- topo --cabling "$tmp/none.net"
expect 65 "$tmp/noquote.net:1: a node line needs a quoted id" -- topo --cabling "$tmp/noquote.net"
expect 65 "$tmp/plan.json: entry 0 needs" -- topo --cabling "$tmp/plan.json"
# A fabric node with hops but no local they count from: the text view read locals[-1] (out
# of bounds; the release build printed "1 hop from  port 0"). Refused when loaded.
printf '%s\n' '{"format": "fabtop-topology", "version": 1, "fabric": {"ib": {"locals": [],' \
    '"nodes": [{"type": "switch", "guid": "0x0002c90300001000", "sys_guid": "0x0002c90300001000",' \
    '"desc": "leaf-1", "nports": 8, "hops": 1, "local": null}], "ports": []}}}' >"$tmp/hops.json"
expect 65 "$tmp/hops.json: fabric nodes[0].local must name a locals entry when hops is given" -- \
    topo --input "$tmp/hops.json" --fabric
# A device id out of its 16 bits: named with its range (the conversion was undefined).
sed 's/"nports": 8, "hops": 1, "local": null/"nports": 8, "vendor_id": 713, "device_id": 1e300/' \
    "$tmp/hops.json" >"$tmp/devid.json"
expect 65 "$tmp/devid.json: fabric nodes[0].device_id = 1e+300 is out of range 0-65535" -- \
    topo --input "$tmp/devid.json" --fabric

# A snapshot taken without --fabric has no fabric; --fabric on it says so, and saves none.
"$bin" topo -o "$tmp/snap.json" >/dev/null 2>&1 || { echo "FAIL: fabtop topo -o"; exit 1; }
"$bin" topo --input "$tmp/snap.json" --fabric >"$tmp/f.txt" 2>&1
if grep -qF "not discovered (fabtop topo --fabric on a live system" "$tmp/f.txt" &&
    ! grep -q '"fabric"' "$tmp/snap.json"; then
    echo "PASS: a snapshot without a fabric says it was not discovered"
else
    echo "FAIL: snapshot without a fabric:"
    sed 's/^/    /' "$tmp/f.txt"
    fails=$((fails + 1))
fi

# This node: no umad device (unless it has one) and no lldpd at a socket nobody serves.
"$bin" topo --fabric --json --window 0 --lldp-socket "$tmp/lldpd.sock" >"$tmp/live.json" \
    2>"$tmp/live.err"
rc=$?
status=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['fabric']['ib']['status']); print(d['fabric']['lldp']['status'])" "$tmp/live.json" 2>&1)
if [ $rc -ne 0 ]; then
    echo "FAIL: fabtop topo --fabric on this node exits $rc: $(cat "$tmp/live.err")"
    fails=$((fails + 1))
elif ! echo "$status" | grep -qF "lldpd is not running (no control socket at $tmp/lldpd.sock): start it with 'systemctl start lldpd'"; then
    echo "FAIL: LLDP status: $status"
    fails=$((fails + 1))
elif [ ! -d /sys/class/infiniband_mad ] &&
    ! echo "$status" | grep -qF "no InfiniBand management device: no IB HCA, or the ib_umad module is not loaded"; then
    echo "FAIL: InfiniBand status without umad devices: $status"
    fails=$((fails + 1))
else
    echo "PASS: this node's fabric view says what is missing: $(echo "$status" | tr '\n' '|')"
fi
[ $fails -eq 0 ] || exit 1
