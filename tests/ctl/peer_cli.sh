#!/bin/sh
# peer_cli: `fabtop run --peer` problems are said once on stderr, before any flow runs, with
# their own status, never as every flow "FAILED" with 2: a port out of range (64), a bad peer
# in the mix (65), a missing key file (66), a key file open to others (77), a key the agent
# does not share (77), an agent whose allowlist leaves this host out (77), a port where no
# agent listens (69). With the right key the same run
# works. A real `fabtop serve` on 127.0.0.1 only.
set -u
. "$(dirname "$0")/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
tmp=$(mktemp -d)
pid=""
pid2=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$pid2" ] && kill "$pid2" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

"$bin" serve --gen-key "$tmp/key" >/dev/null || { echo "FAIL: --gen-key"; exit 1; }
"$bin" serve --gen-key "$tmp/other" >/dev/null || { echo "FAIL: --gen-key"; exit 1; }
cp "$tmp/key" "$tmp/open" && chmod 644 "$tmp/open"

# Two sessions at most: the mix's two flows, right after the check's own session.
"$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --max-sessions 2 --log "$tmp/log" \
    >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
port=$(serve_port "$tmp/log")
[ -n "$port" ] || { echo "FAIL: serve did not say where it listens: $(cat "$tmp/serve.err")"; exit 1; }

# Two loopback flows of 2 s each, so a run that started would take at least 2 s.
cat >"$tmp/mix.json" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "two", "description": "two flows",
 "flows": [{"name": "probe", "transport": "tcp", "op": "pingpong", "size": 64,
            "warmup_s": 0, "duration_s": 2},
           {"name": "bulk", "role": "background", "transport": "tcp", "op": "stream",
            "size": 65536, "rate_gbps": 0.1, "warmup_s": 0}]}
EOF
sed 's/"size": 64,/"size": 64, "peer": "127.0.0.1:70000",/' "$tmp/mix.json" >"$tmp/badpeer.json"

# refused STATUS NEEDLE ARGS...: one line with NEEDLE, that status, at once, no flow shown.
refused() {
    want=$1 needle=$2
    shift 2
    t0=$(date +%s.%N)
    timeout 30 "$bin" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    quick=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a < 1.8) ? 1 : 0 }')
    if [ "$rc" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ "$quick" != 1 ]; then
        fail "run $*: status $rc (want $want), quick=$quick, stderr: $(cat "$tmp/err"), stdout: $(grep -c FAILED "$tmp/out") FAILED lines"
    else
        echo "ok: $want: $(cat "$tmp/err")"
    fi
}

refused 64 "--peer: bad port '70000' in '127.0.0.1:70000'" --mix "$tmp/mix.json" --peer 127.0.0.1:70000 \
    --key-file "$tmp/key"
refused 64 "--peer: '127.0.0.1:0': port 0 is not a port to connect to" --mix "$tmp/mix.json" --peer 127.0.0.1:0 \
    --key-file "$tmp/key"
refused 65 "flow probe: peer: bad port '70000' in '127.0.0.1:70000'" --mix "$tmp/badpeer.json" --key-file "$tmp/key"
refused 66 "$tmp/nokey: no such key file" --mix "$tmp/mix.json" --peer "127.0.0.1:$port" \
    --key-file "$tmp/nokey"
refused 77 "$tmp/open: the key file is accessible by group or others" --mix "$tmp/mix.json" \
    --peer "127.0.0.1:$port" --key-file "$tmp/open"
refused 77 "authentication failed" --mix "$tmp/mix.json" --peer "127.0.0.1:$port" \
    --key-file "$tmp/other"

# The right key: the check's session does not get in the run's way, even when the agent
# allows only the run's own two sessions (three runs back to back).
for i in 1 2 3; do
    if "$bin" run --mix "$tmp/mix.json" --peer "127.0.0.1:$port" --key-file "$tmp/key" \
        >"$tmp/out" 2>"$tmp/err" && ! grep -q FAILED "$tmp/out" && grep -q "probe" "$tmp/out"; then
        echo "ok: with the agent's key the run works ($i)"
    else
        fail "run $i with the right key: $(cat "$tmp/err") $(cat "$tmp/out")"
    fi
done

# An agent that does not allow this host (127.0.0.1 is not in 10.0.0.0/8): 77.
"$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --allow 10.0.0.0/8 --log "$tmp/log2" \
    >/dev/null 2>&1 &
pid2=$!
port2=""
for _ in $(seq 1 100); do
    port2=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\):.*/\1/p' "$tmp/log2" 2>/dev/null)
    [ -n "$port2" ] && break
    sleep 0.05
done
if [ -n "$port2" ]; then
    refused 77 "127.0.0.1:$port2" --mix "$tmp/mix.json" --peer "127.0.0.1:$port2" \
        --key-file "$tmp/key"
else
    fail "the second agent did not say where it listens"
fi
kill -TERM "$pid2"
wait "$pid2"
pid2=""

# No agent on the port any more: connection refused.
kill -TERM "$pid"
wait "$pid"
pid=""
refused 69 "127.0.0.1:$port" --mix "$tmp/mix.json" --peer "127.0.0.1:$port" --key-file "$tmp/key"
grep -q "refused" "$tmp/err" || fail "the message does not say the connection was refused: $(cat "$tmp/err")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS: peer_cli"
