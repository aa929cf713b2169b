#!/bin/sh
# doctor_cli: `fabtop doctor` against a real `fabtop serve` on 127.0.0.1 (no root): the
# clean loopback path (exit 0, both ends' facts, the DF probe at lo's 65535-byte limit),
# an RDMA device this host lacks (exit 2, named), no agent (69), usage errors (64), addresses
# it cannot check (65), and the same clean path over IPv6's loopback.
set -u
FABTOP=${FABTOP_BIN:?}
TMP=$(mktemp -d /tmp/fabtop-doctor.XXXXXX)
SP=""
cleanup() { [ -n "$SP" ] && kill "$SP" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3"; exit 77; }
"$FABTOP" serve --gen-key "$TMP/key" >/dev/null || fail "gen-key"
port=$((20000 + $$ % 20000))
"$FABTOP" serve --listen "127.0.0.1:$port" --key-file "$TMP/key" >"$TMP/serve.log" 2>&1 &
SP=$!
i=0
until "$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$TMP/key" --no-probe >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt 100 ] && { cat "$TMP/serve.log"; fail "the agent never answered"; }
    sleep 0.05
done
"$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$TMP/key" --json >"$TMP/clean.json"
rc=$?
[ $rc = 0 ] || { cat "$TMP/clean.json"; fail "loopback: exit $rc, not 0"; }
python3 - "$TMP/clean.json" <<'PY' || fail "loopback document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "fabtop-doctor" and d["status"] == "clean", d["status"]
for side in ("local", "remote"):
    f = d[side]
    assert f["addr_dev"] == "lo" and f["route_dev"] == "lo", f
    assert f["local_addr"] == "127.0.0.1" and f["mtu"] == 65536, f
p = d["probe"]
assert p["tried_bytes"] == 65535 and p["largest_ok_bytes"] == 65535, p
assert d["findings"] == []
PY
grep -q "doctor: UDP echo on port" "$TMP/serve.log" || fail "the agent did not log its echo"
echo "PASS: loopback clean, probe 65535 bytes"
"$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$TMP/key" --device nosuch9 --no-probe \
    >"$TMP/dev.out" 2>&1
rc=$?
[ $rc = 2 ] || { cat "$TMP/dev.out"; fail "missing device: exit $rc, not 2"; }
grep -q "error: rdma-port: no RDMA port nosuch9 1 at" "$TMP/dev.out" || { cat "$TMP/dev.out"; fail "missing device not named"; }
echo "PASS: a missing RDMA device named (exit 2)"
"$FABTOP" doctor --peer "127.0.0.1:$((port + 1))" --key-file "$TMP/key" >/dev/null 2>&1
rc=$?
[ $rc = 69 ] || fail "no agent: exit $rc, not 69"
"$FABTOP" doctor --key-file "$TMP/key" >/dev/null 2>&1
rc=$?
[ $rc = 64 ] || fail "no --peer: exit $rc, not 64"
"$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$TMP/key" --gid-index 1 >/dev/null 2>&1
rc=$?
[ $rc = 64 ] || fail "--gid-index without --device: exit $rc, not 64"
echo "PASS: exit statuses 69 and 64"
# An address the doctor cannot check (a link-local IPv6 address without its zone), and one of
# the other family than the path's: one line each, naming the address.
"$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$TMP/key" --to fe80::1 --no-probe \
    >"$TMP/ll.out" 2>&1
rc=$?
[ $rc = 65 ] || { cat "$TMP/ll.out"; fail "--to fe80::1: exit $rc, not 65"; }
grep -q "no route to fe80::1" "$TMP/ll.out" || { cat "$TMP/ll.out"; fail "a zoneless link-local address not named"; }
"$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$TMP/key" --to 'fe80::1%lo' --no-probe \
    >"$TMP/zone.out" 2>&1
rc=$?
[ $rc = 65 ] || { cat "$TMP/zone.out"; fail "--to fe80::1%lo: exit $rc, not 65"; }
grep -q "'fe80::1%lo' is not an IPv4 or IPv6 address" "$TMP/zone.out" || { cat "$TMP/zone.out"; fail "a zoned address not named"; }
[ "$(wc -l <"$TMP/zone.out")" = 1 ] || { cat "$TMP/zone.out"; fail "more than one line for a bad --to"; }
echo "PASS: addresses the doctor cannot check refused with one line (65)"
# IPv6 loopback: the agent on [::1], the probe over IPv6 to lo's limit.
if [ -e /proc/net/if_inet6 ] && ip -6 addr show dev lo 2>/dev/null | grep -q "::1/128"; then
    "$FABTOP" serve --listen "[::1]:$((port + 2))" --key-file "$TMP/key" >"$TMP/serve6.log" 2>&1 &
    SP6=$!
    i=0
    until "$FABTOP" doctor --peer "[::1]:$((port + 2))" --key-file "$TMP/key" --json \
        >"$TMP/v6.json" 2>"$TMP/v6.err"; do
        i=$((i + 1))
        [ $i -gt 100 ] && { kill $SP6; cat "$TMP/v6.err" "$TMP/serve6.log"; fail "IPv6 loopback doctor"; }
        sleep 0.05
    done
    kill $SP6
    python3 - "$TMP/v6.json" <<'PY' || fail "IPv6 loopback document"
import json, sys
d = json.load(open(sys.argv[1]))
for side in ("local", "remote"):
    f = d[side]
    assert f["local_addr"] == "::1" and f["addr_dev"] == "lo" and f["subnet"] == "::1/128", f
p = d["probe"]
assert p["tried_bytes"] == 65535 and p["largest_ok_bytes"] == 65535, p
assert d["status"] == "clean", d["findings"]
PY
    echo "PASS: IPv6 loopback clean, probe 65535 bytes over ::1"
else
    echo "no IPv6 loopback here: the IPv6 case is left to netns_doctor"
fi
