#!/bin/sh
# serve_window: what `fabtop serve`'s rate cap does to a TCP connection. Under a cap of a few
# hundred Mb/s the agent gives its data sockets a small receive buffer (20 ms at the cap), so
# the client's stream is held to the cap by TCP's flow control; under a cap that a locked
# buffer could not express (4 MiB or more of it: above 1.6 Gb/s) the kernel's autotuning is
# left alone, so the connection is the one an uncapped agent (the in-process loopback agent,
# `fabtop sweep`'s ranks) makes: the same MSS, which the sender bounds by half the largest
# window offered (tcp_bound_to_half_wnd, net/ipv4/tcp_output.c). The agent's reads follow
# the rate, not where it came from (about 1 ms of it, 64 KiB to 4 MiB): under a high cap it
# reads 4 MiB at a time as an uncapped agent does, since the read size can move receive work
# between the two ends' CPUs (issue 16's sweep-against-run bandwidth); strace shows the
# recvfrom lengths the agent asks for. Loopback only.
set -u
. "$(dirname "$0")/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
for t in python3 strace; do
    command -v $t >/dev/null || { echo "SKIP: $t"; exit 77; }
done
tmp=$(mktemp -d)
pid=""
spid=""
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
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
# traced_stream: stream against the agent (pid, port) with strace following its threads;
# prints the MSS, the goodput and the largest recvfrom length the agent asked for.
traced_stream() {
    : >"$tmp/strace.err"
    strace -f -e trace=recvfrom -e signal=none -s 0 -o "$tmp/trace" -p "$pid" 2>"$tmp/strace.err" &
    spid=$!
    # Its threads attached ("Process N attached"), the data connections' threads that the
    # stream starts are followed from their creation.
    for _ in $(seq 1 100); do
        grep -q "attached" "$tmp/strace.err" && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.05
    done
    grep -q "attached" "$tmp/strace.err" ||
        { cat "$tmp/strace.err"; fail "strace could not attach to the agent (pid $pid)"; }
    set -- $(stream "$port")
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=""
    reads=$(sed -n 's/.*recvfrom([0-9]*, [^,]*, \([0-9]*\),.*/\1/p' "$tmp/trace" | sort -n | tail -1)
    [ -n "$reads" ] || { head -5 "$tmp/trace"; fail "strace saw no recvfrom by the agent"; }
    echo "$1 $2 $reads"
}
set -- $(stream)
own_mss=$1
echo "in-process agent: MSS $own_mss bytes, $2 Gb/s"
agent 100
set -- $(traced_stream)
reads=${3:-}
echo "fabtop serve --max-rate 100: MSS $1 bytes, $2 Gb/s, reads of up to $reads bytes"
[ "$1" = "$own_mss" ] || fail "a 100 Gb/s cap changed the connection: MSS $1, uncapped $own_mss"
[ "$reads" = 4194304 ] || fail "under a 100 Gb/s cap the agent reads $reads bytes at a time, not 4 MiB as uncapped"
agent 0.2
set -- $(traced_stream)
reads=${3:-}
echo "fabtop serve --max-rate 0.2: MSS $1 bytes, $2 Gb/s, reads of up to $reads bytes"
[ "$reads" = 65536 ] || fail "under a 0.2 Gb/s cap the agent reads $reads bytes at a time, not 64 KiB (about 1 ms of the cap, at least 64 KiB)"
python3 -c 'import sys; g = float(sys.argv[1]); sys.exit(0 if 0.1 < g <= 0.2 * 1.05 else 1)' "$2" ||
    fail "a 0.2 Gb/s cap let $2 Gb/s through (or far less)"
echo "PASS: a high cap leaves the connection and the reads as an uncapped agent's; a low one holds the stream to it"
