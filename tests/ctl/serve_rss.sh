#!/bin/sh
# serve_rss: `fabtop serve`'s resident memory over 12 legitimate runs (three TCP flows each,
# 4 MiB buffers, on loopback) must level off: it grew by about 4 MiB a run (to 80-90 MB)
# while glibc kept freed buffers in per-thread arenas. VmRSS from /proc after each run.
set -u
. "$(dirname "$0")/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
# AddressSanitizer's allocator keeps freed memory in quarantine: RSS says nothing there.
if grep -q __asan_init "$bin" 2>/dev/null; then
    echo "SKIP: resident memory is not meaningful in an AddressSanitizer build"
    exit 77
fi
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$bin" serve --gen-key "$tmp/key" >/dev/null || exit 1
"$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --max-rate 100 --log "$tmp/log" &
pid=$!
port=$(serve_port "$tmp/log")
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$tmp/log")"; exit 1; }
peer="\"peer\": \"127.0.0.1:$port\""
cat >"$tmp/mix.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "rss", "fail_bound_s": 3,
 "flows": [{"name": "rx", "transport": "tcp", "op": "stream", "size": 1048576, "concurrency": 4,
            "direction": "rx", "warmup_s": 0.1, "duration_s": 0.4, $peer},
           {"name": "pp", "transport": "tcp", "op": "pingpong", "size": 64,
            "warmup_s": 0.1, "duration_s": 0.4, $peer},
           {"name": "bidir", "transport": "tcp", "op": "stream", "size": 4194304, "concurrency": 4,
            "direction": "bidir", "warmup_s": 0.1, "duration_s": 0.4, $peer}]}
J
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status"; }
sessions() { grep -c ": ended after" "$tmp/log"; }
echo "start: $(rss) kB"
list=""
for i in $(seq 1 12); do
    "$bin" run --mix "$tmp/mix.json" --key-file "$tmp/key" -o "$tmp/res.json" >"$tmp/run.log" 2>&1 ||
        { echo "FAIL: run $i: $(tail -3 "$tmp/run.log")"; exit 1; }
    n=0 # the agent ends a session when the client says bye: wait for all three
    while [ "$(sessions)" -lt $((3 * i)) ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.05; done
    list="$list $(rss)"
done
echo "VmRSS after each run (kB):$list"
set -- $list
third=$3
shift 11
last=$1
if [ "$last" -gt 20000 ] || [ $((last - third)) -gt 2048 ]; then
    echo "FAIL: VmRSS $last kB after 12 runs, $((last - third)) kB more than after run 3"
    exit 1
fi
echo "PASS: VmRSS levels off: $third kB after run 3, $last kB after run 12"
