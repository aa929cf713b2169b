#!/bin/sh
# serve_window: what `fabtop serve`'s rate cap does to a TCP connection. Under a cap of a few
# hundred Mb/s the agent gives its data sockets a small receive buffer (20 ms at the cap), so
# the client's stream is held to the cap by TCP's flow control; under a cap that a locked
# buffer could not express (4 MiB or more of it: above 1.6 Gb/s) the kernel's autotuning is
# left alone, so the connection is the one an uncapped agent (the in-process loopback agent,
# `fabtop sweep`'s ranks) makes: the same MSS, which the sender bounds by half the largest
# window offered (tcp_bound_to_half_wnd, net/ipv4/tcp_output.c). Loopback only.
set -u
. "$(dirname "$0")/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
command -v python3 >/dev/null || { echo "SKIP: python3"; exit 77; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bin" serve --gen-key "$tmp/key" >/dev/null || fail "gen-key"
cat >"$tmp/stream.json" <<'M'
{"format": "fabtop-mix", "version": 1, "name": "window", "phases": ["loaded"],
 "flows": [{"name": "s", "transport": "tcp", "op": "stream", "direction": "tx",
            "peer": "loopback", "size": 131072, "warmup_s": 0.2, "duration_s": 1}]}
M
# stream [PORT]: runs the mix (against the agent on PORT, else the in-process one); prints
# the client's MSS and its goodput in Gb/s.
stream() {
    peer=""
    [ -n "${1:-}" ] && peer="--peer 127.0.0.1:$1 --key-file $tmp/key"
    # shellcheck disable=SC2086
    "$bin" run --mix "$tmp/stream.json" $peer -o "$tmp/r.json" >"$tmp/r.out" 2>&1 ||
        { cat "$tmp/r.out"; fail "fabtop run ${1:+against port $1}"; }
    python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["phases"][-1]["flows"][0]
print(f["conditions"]["mss_bytes"], f["points"][0]["goodput_gbps"])' "$tmp/r.json"
}
# agent CAP: a fresh `fabtop serve --max-rate CAP`; sets port.
agent() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    : >"$tmp/serve.log"
    "$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --max-rate "$1" --log "$tmp/serve.log" &
    pid=$!
    port=$(serve_port "$tmp/serve.log")
    [ -n "$port" ] || { cat "$tmp/serve.log"; fail "the agent did not start"; }
}
set -- $(stream)
own_mss=$1
echo "in-process agent: MSS $own_mss bytes, $2 Gb/s"
agent 100
set -- $(stream "$port")
echo "fabtop serve --max-rate 100: MSS $1 bytes, $2 Gb/s"
[ "$1" = "$own_mss" ] || fail "a 100 Gb/s cap changed the connection: MSS $1, uncapped $own_mss"
agent 0.2
set -- $(stream "$port")
echo "fabtop serve --max-rate 0.2: MSS $1 bytes, $2 Gb/s"
python3 -c 'import sys; g = float(sys.argv[1]); sys.exit(0 if 0.1 < g <= 0.2 * 1.05 else 1)' "$2" ||
    fail "a 0.2 Gb/s cap let $2 Gb/s through (or far less)"
echo "PASS: a high cap leaves the connection as an uncapped agent's; a low one holds the stream to it"
