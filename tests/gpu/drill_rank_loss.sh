#!/bin/sh
# drill_rank_loss: `fabtop drill --fault rank-loss` on the stand-in CUDA/NCCL (fake_cudanccl.c):
# an NCCL all-reduce over this process's two GPUs and the two of a victim agent (a `fabtop
# serve` the drill starts: a process of its own, as the stand-in's id log shows), the victim
# killed (SIGKILL) mid-run; the survivors detect it within the operation deadline (the mix's
# fail_bound_s), shrink their communicators to themselves (ncclCommShrink with
# NCCL_SHRINK_ABORT) and go on: every repetition's operations accounted for (one lost, the one
# in flight), 4 ranks before and 2 after, nothing left behind (descriptors, threads, the victim
# process, its key directory). With the stand-in built as an NCCL before 2.27 (no
# ncclCommShrink), the lane reconnects to the victim restarted after --for and builds a new
# communicator of 4 ranks. Then the refusals: --peer, a TCP mix, no recover policy (exit 2);
# a SIGTERM mid-drill (the repetitions done kept, nothing left) and a SIGKILL of the drill
# (its victim stops by itself).
# Usage: drill_rank_loss.sh PATH/libfake_cudanccl.so PATH/libfake_cudanccl_noshrink.so
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
lib=${1:?the fake CUDA/NCCL library}
noshrink=${2:?the fake CUDA/NCCL library without ncclCommShrink}
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t"
export TMPDIR="$tmp/t" FAKE_CUDA_DEVICES=2 FAKE_NCCL_ID_LOG="$tmp/ids.log"
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# mix NAME RECOVER: an all-reduce of 1 KiB bfloat16 over 2 communicator sets, GPUs 0 and 1
# here and on the victim; fail_bound_s 1 (the operation deadline).
mix() {
    printf '{"format": "fabtop-mix", "version": 1, "name": "%s", "fail_bound_s": 1, "progress_deadline_s": 1, "flows": [{"name": "tp", "transport": "nccl", "op": "collective", "size": "1KiB", "concurrency": 2, "params": {"collective": "all_reduce", "dtype": "bf16", "gpus": [0, 1], "peer_gpus": [0, 1]} %s}]}\n' \
        "$1" "$2" >"$tmp/$1.json"
    echo "$tmp/$1.json"
}
POLICY=', "recover": {"attempts": 40, "backoff_ms": [50, 200], "deadline_s": 5}'
m=$(mix rl "$POLICY")

# check FILE WANT-REBUILT WANT-AFTER MIN-S: every repetition's flow, recovered at least MIN-S
# after the injection.
check() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want, after, min_rec = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
bad = []
if d["transport"] != "nccl" or d["fault"]["kind"] != "rank-loss" or d["complete"] is not True:
    bad.append("head: %s %s complete %s" % (d["transport"], d["fault"]["kind"], d["complete"]))
if len(d["repetitions"]) != d["fault"]["repeat"]:
    bad.append("%d repetitions of %d" % (len(d["repetitions"]), d["fault"]["repeat"]))
for r in d["repetitions"]:
    f = r["flows"][0]
    q = f["requests"]
    i = r["index"]
    if "agent" in r:
        bad.append("rep %d: an agent count from a killed agent" % i)
    if not (f["detect_ok"] and f["detect_s"] <= f["detect_bound_s"] and f["detect_bound_s"] == 1.1):
        bad.append("rep %d: detected after %s s (bound %s)" % (i, f["detect_s"], f["detect_bound_s"]))
    since = (f["recovered_at_s"] or 0) - r["injected_at_s"]
    if not f["recovered"] or not f["recover_ok"] or since < min_rec:
        bad.append("rep %d: recovered %s %s s after the injection (at least %s)" % (i, f["recovered"], since, min_rec))
    if not (f["rebuilt"] or "").startswith(want):
        bad.append("rep %d: rebuilt by %r, not %s" % (i, f["rebuilt"], want))
    if f["ranks_before"] != 4 or f["ranks_after"] != after:
        bad.append("rep %d: ranks %s -> %s" % (i, f["ranks_before"], f["ranks_after"]))
    if not (f["detection"].startswith("timeout:") or "control channel" in f["detection"]):
        bad.append("rep %d: detection %r" % (i, f["detection"]))
    lost = q["failed"] + q["abandoned"]
    if q["hanging"] != 0 or q["issued"] != q["completed"] + lost or lost != 1:
        bad.append("rep %d: requests %s" % (i, q))
    if q["completed"] < 100:
        bad.append("rep %d: only %d operations" % (i, q["completed"]))
    if f["returned_at_s"] is None or f["returned_at_s"] < f["recovered_at_s"]:
        bad.append("rep %d: back at the quiet p99 at %s" % (i, f["returned_at_s"]))
p = d["process"]
if p["fds_after"] > p["fds_before"] or p["threads_after"] > p["threads_before"]:
    bad.append("left behind: %s" % p)
s = d["summary"]
if s["drills"] != d["fault"]["repeat"] or s["never_recovered"] or s["broke_bound"]:
    bad.append("summary %s" % s)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

# Nothing of the victim is left: no process with its key directory, no directory.
leftovers() {
    for p in /proc/[0-9]*; do
        tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "$tmp/t/fabtop-drill" && echo "process ${p#/proc/}"
    done
    ls "$tmp/t"
}

# 1. ncclCommShrink: three repetitions.
FABTOP_CUDART=$lib FABTOP_NCCL=$lib "$bin" drill --mix "$m" --fault rank-loss --at 0.5 --for 1 \
    --repeat 3 --expect 'detect<=1.1s,recover<2s,failed<=1' -o "$tmp/shrink.json" >"$tmp/shrink.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "shrink: exit $rc: $(tail -3 "$tmp/shrink.txt")"
check "$tmp/shrink.json" ncclCommShrink 2 0 || fail "shrink: the document (above)"
grep -q "ranks: 4 before, 2 after; rebuilt by ncclCommShrink" "$tmp/shrink.txt" ||
    fail "shrink: no ranks line: $(cat "$tmp/shrink.txt")"
left=$(leftovers)
[ -z "$left" ] || fail "shrink: left behind: $left"
# The victim's ranks (2 and 3) joined from another process than the drill's (0 and 1).
python3 - "$tmp/ids.log" <<'PY' || fail "shrink: the victim's ranks were not in a process of their own"
import sys, collections
pids = collections.defaultdict(set)
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "init":
        pids[w[1]].add((int(w[3]), w[5]))
ok = any(len({p for r, p in v if r < 2} & {p for r, p in v if r >= 2}) == 0 and len(v) == 4
         for v in pids.values())
sys.exit(0 if ok else 1)
PY

# 2. An NCCL without ncclCommShrink: a new communicator with the restarted victim.
FABTOP_CUDART=$noshrink FABTOP_NCCL=$noshrink "$bin" drill --mix "$m" --fault rank-loss --at 0.5 \
    --for 1 --repeat 2 -o "$tmp/restart.json" >"$tmp/restart.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "restart: exit $rc: $(tail -3 "$tmp/restart.txt")"
# Not before the victim is back, --for (1 s) after the injection.
check "$tmp/restart.json" "new communicator (no shrink: NCCL 2.26.5 has no ncclCommShrink" 4 1.0 ||
    fail "restart: the document (above)"
left=$(leftovers)
[ -z "$left" ] || fail "restart: left behind: $left"

# 3. Refusals, each one line with its status.
export FABTOP_CUDART=$lib FABTOP_NCCL=$lib
"$bin" drill --mix "$m" --fault rank-loss --peer 127.0.0.1:1 >"$tmp/o" 2>&1
rc=$?
[ "$rc" -eq 64 ] && grep -q "no --peer" "$tmp/o" || fail "--peer: exit $rc: $(cat "$tmp/o")"
"$bin" drill --mix api --fault rank-loss >"$tmp/o" 2>&1
rc=$?
[ "$rc" -eq 65 ] && grep -q "NCCL collectives" "$tmp/o" || fail "TCP mix: exit $rc: $(cat "$tmp/o")"
"$bin" drill --mix "$m" --fault peer-kill >"$tmp/o" 2>&1
rc=$?
[ "$rc" -eq 65 ] && grep -q "rank-loss" "$tmp/o" || fail "NCCL peer-kill: exit $rc: $(cat "$tmp/o")"
# No recover policy: the failure ends the flow, as in a run; exit 2, the document kept.
m2=$(mix nopolicy "")
"$bin" drill --mix "$m2" --fault rank-loss --at 0.5 --for 0.5 -o "$tmp/np.json" >"$tmp/o" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "no policy: exit $rc: $(tail -3 "$tmp/o")"
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["repetitions"][0]["flows"][0]; sys.exit(0 if f["detect_ok"] and not f["recovered"] and f["rebuilt"] is None else 1)' \
    "$tmp/np.json" || fail "no policy: the document $(cat "$tmp/np.json")"
left=$(leftovers)
[ -z "$left" ] || fail "no policy: left behind: $left"

# 4. SIGTERM during the second of three repetitions: the drill stops, the first repetition
# stays in the file, the victim and its directory are gone, and fabtop ends by the signal.
"$bin" drill --mix "$m" --fault rank-loss --at 1 --for 1 --repeat 3 -o "$tmp/int.json" \
    >"$tmp/o" 2>&1 &
dpid=$!
i=0
until [ -s "$tmp/int.json" ] || [ $i -ge 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
sleep 0.5
kill -TERM "$dpid"
wait "$dpid"
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc: $(tail -3 "$tmp/o")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["repetitions"]) == 1 and d["complete"] is False else 1)' \
    "$tmp/int.json" || fail "SIGTERM: the file $(cat "$tmp/int.json")"
left=$(leftovers)
[ -z "$left" ] || fail "SIGTERM: left behind: $left"
# 5. The drill killed outright (no clean-up of its own): the victim stops by itself
# (fabtop serve --exit-with-parent); only the key directory is left, for the caller.
"$bin" drill --mix "$m" --fault rank-loss --at 5 --for 1 >"$tmp/o" 2>&1 &
dpid=$!
sleep 2
kill -KILL "$dpid"
wait "$dpid" 2>/dev/null
i=0
while leftovers | grep -q process && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
leftovers | grep process && fail "the victim outlived its drill"
rm -rf "$tmp/t"/fabtop-drill-*

[ "$fails" -eq 0 ] || exit 1
echo "drill_rank_loss: all passed"
