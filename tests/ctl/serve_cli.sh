#!/bin/sh
# serve_cli: the `fabtop serve` command line: usage errors (64), a missing key (66), key file
# permissions (77), a malformed key (65), --gen-key (mode 0600, never overwrites: 73), a port
# already taken (69), and a clean stop on SIGTERM (0) with its log lines. Loopback only.
set -u
. "$(dirname "$0")/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# expect STATUS NEEDLE -- ARGS...: exit status, stderr containing NEEDLE, nothing on stdout.
expect() {
    want=$1 needle=$2
    shift 3
    "$bin" serve "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    if [ "$got" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$(wc -l <"$tmp/err")" -gt 2 ]; then
        fail "fabtop serve $* -> status $got (want $want), stderr:"
        sed 's/^/    /' "$tmp/err"
        [ -s "$tmp/out" ] && sed 's/^/    stdout: /' "$tmp/out"
    else
        echo "PASS: fabtop serve $* -> $got: $(head -1 "$tmp/err")"
    fi
}

# Keys: --gen-key writes 64 hex digits with mode 0600 and never overwrites.
key=$tmp/key
if "$bin" serve --gen-key "$key" >"$tmp/out" 2>"$tmp/err" && grep -q "Wrote a new key" "$tmp/out" &&
    [ "$(stat -c %a "$key")" = 600 ] && grep -qE '^[0-9a-f]{64}$' "$key"; then
    echo "PASS: --gen-key wrote a 0600 key"
else
    fail "--gen-key: $(cat "$tmp/err")"
fi
expect 73 "already exists; remove it first" -- --gen-key "$key"
expect 64 "--gen-key only writes a key" -- --gen-key "$tmp/k2" --allow 10.0.0.0/8

# Usage errors.
expect 64 "unknown option or missing argument: '--bogus'" -- --bogus
expect 64 "--max-rate takes a number from 0.001 to 100000, not 'fast'" -- --max-rate fast
expect 64 "--max-sessions takes a whole number from 1 to 4096, not '2.5'" -- --max-sessions 2.5
expect 64 "--max-duration takes a number from 0.1 to 86400, not '0'" -- --max-duration 0
expect 64 "unexpected argument 'extra'" -- --key-file "$key" extra
expect 64 "--listen: bad address '[::1': expected [IPv6]:PORT" -- --listen '[::1'
expect 64 "--listen: bad port 'x' in '127.0.0.1:x'" -- --listen 127.0.0.1:x
expect 64 "allowlist entry '10.0.0.0/33': the prefix must be 0 to 32" -- \
    --key-file "$key" --listen 127.0.0.1:0 --allow 10.0.0.0/33
expect 64 "--max-flows takes a whole number from 1 to 64, not '0'" -- --max-flows 0
expect 64 "--allow-nccl=$tmp/other: not one of the --key-file's" -- \
    --key-file "$key" --listen 127.0.0.1:0 --allow-nccl="$tmp/other"
"$bin" serve --gen-key "$tmp/key2" >/dev/null
expect 64 "agent: keys 1 and 2 are the same key" -- --key-file "$key" --key-file "$key" \
    --listen 127.0.0.1:0

# Key files: missing, readable by others, malformed; and no key at all.
expect 66 "$tmp/nokey: no such key file; create one with 'fabtop serve --gen-key" -- \
    --key-file "$tmp/nokey"
cp "$key" "$tmp/open" && chmod 644 "$tmp/open"
expect 77 "$tmp/open: the key file is accessible by group or others (mode 0644); run 'chmod 600" -- \
    --key-file "$tmp/open"
printf '0123456789abcdef\n' >"$tmp/short" && chmod 600 "$tmp/short"
expect 65 "$tmp/short: key too short: 8 bytes" -- --key-file "$tmp/short"
mkdir "$tmp/home"
HOME=$tmp/home XDG_CONFIG_HOME='' FABTOP_KEY='' expect 66 "no key: set FABTOP_KEY, pass --key-file FILE" --
expect 73 "cannot open the log file" -- --key-file "$key" --listen 127.0.0.1:0 --log "$tmp/no/dir/log"

# Serve on an ephemeral loopback port; a second agent on the same port cannot listen.
"$bin" serve --listen 127.0.0.1:0 --key-file "$key" --max-sessions 3 --log "$tmp/log" \
    >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
port=$(serve_port "$tmp/log")
if [ -z "$port" ]; then
    fail "serve did not say where it listens"
    cat "$tmp/serve.err" "$tmp/log" 2>/dev/null
else
    if grep -q "at most 3 sessions, 10 Gb/s per client key, 60 s per test, 8 connections per flow, 4 flows per session, faults up to 30 s; clients: any with the key; key fingerprint [0-9a-f]\{16\}; NCCL: off (--allow-nccl)" "$tmp/log" &&
        ! grep -q "$(cut -c1-16 "$key")" "$tmp/log"; then
        echo "PASS: listening on 127.0.0.1:$port with its caps, no key material in the log"
    else
        fail "start line: $(cat "$tmp/log")"
    fi
    expect 69 "cannot listen on 127.0.0.1:$port: Address already in use" -- \
        --listen "127.0.0.1:$port" --key-file "$key"
    kill -TERM "$pid"
    wait "$pid"
    st=$?
    pid=""
    if [ "$st" -eq 0 ] && grep -q "SIGTERM: stopping (0 sessions active)" "$tmp/log" &&
        grep -q "fabtop serve: stopped$" "$tmp/log" && [ ! -s "$tmp/serve.out" ] &&
        [ ! -s "$tmp/serve.err" ]; then
        echo "PASS: SIGTERM stops it cleanly (status 0)"
    else
        fail "stop: status $st; log:"
        sed 's/^/    /' "$tmp/log"
    fi
fi

# Two keys, NCCL for the second only: both fingerprints and which one may use NCCL.
"$bin" serve --listen 127.0.0.1:0 --key-file "$key" --key-file "$tmp/key2" \
    --allow-nccl="$tmp/key2" --log "$tmp/log2" >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$tmp/log2" 2>/dev/null && break
    sleep 0.05
done
fp2=$(sed -n 's/.*key fingerprints [0-9a-f]\{16\}, \([0-9a-f]\{16\}\); NCCL: \([0-9a-f]*\)$/\1 \2/p' "$tmp/log2")
if [ -n "$fp2" ] && [ "${fp2% *}" = "${fp2#* }" ]; then
    echo "PASS: two keys, NCCL for the second ($fp2)"
else
    fail "two keys: $(cat "$tmp/log2")"
fi
kill -TERM "$pid"
wait "$pid"
pid=""

# As a systemd service: the key from $CREDENTIALS_DIRECTORY/key (LoadCredential=; a readable
# one refused like any key file), and lines without a timestamp when stderr is the journal's
# stream (JOURNAL_STREAM=DEVICE:INODE of stderr, systemd.exec(5)).
mkdir -m 700 "$tmp/creds"
cp "$key" "$tmp/creds/key" && chmod 400 "$tmp/creds/key"
: >"$tmp/journal"
js=$(stat -c '%d:%i' "$tmp/journal")
HOME=$tmp/home XDG_CONFIG_HOME='' FABTOP_KEY='' CREDENTIALS_DIRECTORY=$tmp/creds JOURNAL_STREAM=$js \
    "$bin" serve --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/journal" &
pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$tmp/journal" 2>/dev/null && break
    sleep 0.05
done
fp=$(sed -n 's/.*key fingerprint \([0-9a-f]\{16\}\);.*/\1/p' "$tmp/journal")
kill -TERM "$pid"
wait "$pid"
pid=""
if [ -n "$fp" ] && grep -q "^listening on 127.0.0.1:" "$tmp/journal" &&
    ! grep -q "^[0-9]\{4\}-" "$tmp/journal" && grep -qx "stopped" "$tmp/journal"; then
    echo "PASS: the credential's key, journal lines without timestamps"
else
    fail "credential/journal: $(cat "$tmp/journal")"
fi
# The same run with stderr elsewhere keeps the timestamps.
HOME=$tmp/home XDG_CONFIG_HOME='' FABTOP_KEY='' CREDENTIALS_DIRECTORY=$tmp/creds JOURNAL_STREAM=$js \
    "$bin" serve --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/plain" &
pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$tmp/plain" 2>/dev/null && break
    sleep 0.05
done
kill -TERM "$pid"
wait "$pid"
pid=""
grep -q "^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T.* fabtop serve: listening on" "$tmp/plain" ||
    fail "not the journal, no timestamp: $(cat "$tmp/plain")"
chmod 444 "$tmp/creds/key"
HOME=$tmp/home XDG_CONFIG_HOME='' FABTOP_KEY='' CREDENTIALS_DIRECTORY=$tmp/creds \
    expect 77 "$tmp/creds/key: the key file is accessible by group or others" -- --listen 127.0.0.1:0

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
