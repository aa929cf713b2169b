#!/bin/sh
# busy_cpu: a TCP stream on 127.0.0.1 (its in-process agent receiving) with the whole fabtop
# process and a busy loop of this test's own on one CPU (taskset): the workers' scheduler
# times land in the flow's conditions ("cpu", from /proc/thread-self/schedstat), each worker's
# time on a CPU plus its run-queue wait within its wall time, the wait well above the rule's
# 25%, and the likely causes name busy-cpu with that evidence, in the document and the text.
# The quiet side of the rule is test_judge_rules' (a loaded CI machine makes it unfair here).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
command -v taskset >/dev/null || { echo "SKIP: taskset is not installed"; exit 77; }
[ -r /proc/thread-self/schedstat ] || { echo "SKIP: no /proc/thread-self/schedstat here"; exit 77; }
tmp=$(mktemp -d)
hog=""
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
cat >"$tmp/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "busy",
 "flows": [{"name": "s", "op": "stream", "size": "64KiB", "warmup_s": 0.3, "duration_s": 2,
            "concurrency": 2}]}
J
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
taskset -c "$cpu" "$bin" run --mix "$tmp/mix.json" -o "$tmp/res.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
kill "$hog"
hog=""
[ "$rc" -eq 0 ] || { echo "FAIL: fabtop run exited $rc: $(cat "$tmp/err")"; exit 1; }
jq -c '.phases[0].flows[0].conditions.cpu' "$tmp/res.json"
ok=$(jq '.phases[0].flows[0].conditions.cpu as $c |
        ($c.workers == 2 and $c.run_s > 0 and $c.run_s + $c.runqueue_wait_s <= $c.wall_s + 0.01
         and $c.runqueue_wait_pct >= 40)' "$tmp/res.json")
[ "$ok" = true ] || { echo "FAIL: the workers' CPU times are not what one busy CPU makes"; exit 1; }
cause=$(jq -c '[.causes[] | select(.rule == "busy-cpu" and .flow == "s")][0] |
        [.evidence[] | select(.name == "run-queue wait of runnable time") | .unit]' "$tmp/res.json")
[ "$cause" = '["%"]' ] ||
    { echo "FAIL: no busy-cpu cause with its evidence: $(jq -c '.causes' "$tmp/res.json")"; exit 1; }
grep -q "\[busy-cpu\] s" "$tmp/out" || { echo "FAIL: the summary does not name busy-cpu"; cat "$tmp/out"; exit 1; }
grep -A3 "\[busy-cpu\]" "$tmp/out"
echo "PASS: one busy CPU under the workers is named busy-cpu"
