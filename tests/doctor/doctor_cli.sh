#!/bin/sh
# doctor_cli: `fabtop doctor` against a real `fabtop serve` on 127.0.0.1 (no root): the
# clean loopback path (exit 0, both ends' facts, the DF probe at lo's 65535-byte limit),
# an RDMA device this host lacks (exit 2, named), no agent (69), usage errors (64).
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
