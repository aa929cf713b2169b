#!/bin/sh
# peer_cpu: a TCP stream to a `fabtop serve` of its own on 127.0.0.1 whose process shares one
# CPU with a busy loop of this test's own (taskset), the client alone on another CPU: the
# agent's data-connection threads' scheduler times come back over the control channel
# (tcp.cpu) into conditions.peer_cpu, their run-queue wait well above busy-cpu's 25% while
# this side's stays under it, and the likely causes name peer-bottleneck with both sides'
# evidence, in the document and the text. The rule's quiet side is test_judge_rules'.
# The agent's cap is set far above what the path carries, so that the busy CPU, not the
# cap's pacing, is what holds the stream back (under the default 10 Gb/s cap the stream ran
# at the cap, and the run-queue wait came only from the agent waking for each small read).
set -u
. "$(dirname "$0")/../ctl/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
command -v taskset >/dev/null || { echo "SKIP: taskset is not installed"; exit 77; }
[ -r /proc/thread-self/schedstat ] || { echo "SKIP: no /proc/thread-self/schedstat here"; exit 77; }
cpus=$(taskset -pc $$ | sed 's/.*: //')
a=$(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0] if len(c) > 1 else "")')
b=$(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[1] if len(c) > 1 else "")')
[ -n "$a" ] && [ -n "$b" ] || { echo "SKIP: one CPU only ($cpus)"; exit 77; }
tmp=$(mktemp -d)
hog="" spid=""
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$bin" serve --gen-key "$tmp/key" >/dev/null || exit 1
taskset -c "$a" "$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --max-rate 100000 \
    --log "$tmp/serve.log" &
spid=$!
port=$(serve_port "$tmp/serve.log")
[ -n "$port" ] || { echo "FAIL: the agent did not start: $(cat "$tmp/serve.log")"; exit 1; }
cat >"$tmp/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "peer-busy",
 "flows": [{"name": "s", "op": "stream", "size": "64KiB", "warmup_s": 0.3, "duration_s": 2}]}
J
taskset -c "$a" sh -c 'while :; do :; done' &
hog=$!
taskset -c "$b" "$bin" run --mix "$tmp/mix.json" --peer "127.0.0.1:$port" --key-file "$tmp/key" \
    -o "$tmp/res.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
kill "$hog"
hog=""
[ "$rc" -eq 0 ] || { echo "FAIL: fabtop run exited $rc: $(cat "$tmp/err")"; exit 1; }
jq -c '.phases[0].flows[0].conditions | {cpu, peer_cpu}' "$tmp/res.json"
jq -c '.phases[0].flows[0].points[0] | {goodput_gbps}' "$tmp/res.json"
ok=$(jq '.phases[0].flows[0].conditions.peer_cpu as $c |
        ($c.workers >= 1 and $c.run_s > 0 and $c.run_s + $c.runqueue_wait_s <= $c.wall_s + 0.01
         and $c.runqueue_wait_pct >= 40 and $c.busiest_run_pct > 0 and $c.busiest_run_pct <= 100)' \
    "$tmp/res.json")
[ "$ok" = true ] || { echo "FAIL: the peer's CPU times are not what one busy CPU makes"; exit 1; }
ev=$(jq -c '[.causes[] | select(.rule == "peer-bottleneck" and .flow == "s")][0] |
        [.evidence[] | select(.name == "the peer'"'"'s run-queue wait" or
                              .name == "this side'"'"'s run-queue wait") | .unit]' "$tmp/res.json")
[ "$ev" = '["%","%"]' ] ||
    { echo "FAIL: no peer-bottleneck cause with both sides: $(jq -c '.causes' "$tmp/res.json")"; exit 1; }
grep -q "\[peer-bottleneck\] s" "$tmp/out" ||
    { echo "FAIL: the summary does not name peer-bottleneck"; cat "$tmp/out"; exit 1; }
grep -A4 "\[peer-bottleneck\]" "$tmp/out"
echo "PASS: a busy CPU under the peer's threads is named peer-bottleneck"
