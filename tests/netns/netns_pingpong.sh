#!/bin/sh
# netns_pingpong: a ping-pong across two network namespaces through a real veth pair, with
# `fabtop serve` in one and `fabtop run --peer` in the other, authenticated by a key file.
. "$(dirname "$0")/lib.sh"
need_netns
mkns a
mkns b
link a va b vb
addr a va 10.77.0.1/24
addr b vb 10.77.0.2/24
mkkey >/dev/null
serve b 10.77.0.2 "$TMP/serve.log"
cat >"$TMP/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "pp",
 "flows": [{"name": "pp", "op": "pingpong", "size": 1024, "warmup_s": 0.3, "duration_s": 2}]}
J
nsx a "$FABTOP" run --mix "$TMP/mix.json" --peer 10.77.0.2 --key-file "$TMP/key" \
    -o "$TMP/res.json" --expect 'p99<50ms' >"$TMP/run.out" 2>&1
rc=$?
cat "$TMP/run.out"
[ "$rc" -eq 0 ] || fail "fabtop run exited $rc"
f='r["phases"][0]["flows"][0]'
[ "$(json "$TMP/res.json" "$f['status']")" = ok ] || fail "flow status"
n=$(json "$TMP/res.json" "$f['points'][0]['latency']['count']")
[ "$n" -gt 1000 ] || fail "only $n samples"
ok=$(json "$TMP/res.json" "0 < $f['points'][0]['latency']['p50'] < 5000 and $f['latency_kind'] == 'half_round_trip'")
[ "$ok" = True ] || fail "p50 or latency kind"
[ "$(json "$TMP/res.json" "$f['conditions']['local_address']")" = 10.77.0.1 ] || fail "local address"
[ "$(json "$TMP/res.json" "$f['conditions']['peer_address']")" = 10.77.0.2 ] || fail "peer address"
grep -q "session" "$TMP/serve.log" || fail "the agent logged no session"
pass "ping-pong across namespaces: $n samples, p50 $(json "$TMP/res.json" "$f['points'][0]['latency']['p50']") us"
