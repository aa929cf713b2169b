#!/bin/sh
# e2e_sweep: the sweep view of the real fabtop in tmux at 80x24. fabtop --results on the
# 8-rank document data/sweep-8.json (rk-h5 at a quarter of the rack's bandwidth, the pair
# rk-h1 - rk-h3 failed, a rank verdict): the matrix with rk-h5's row and column marked, the
# cursor's pair with its figures and units, Tab + Enter on a verdict jumping to its cell, the
# latency metric (l). Then fabtop --attach FILE while the test publishes FILE the way
# fabtop sweep --publish does (a temporary file, then mv): missing, 3 rounds of 7 done, 7 of
# 7, malformed (the last good document stays), the cursor kept throughout.
. "$(dirname "$0")/e2e_lib.sh"

DOC=$FABTOP_SRC/tests/tui/data/sweep-8.json
cp "$DOC" "$E2E_DIR/sweep-8.json" || fail "cannot copy $DOC"

start -- --input synth.xml --results sweep-8.json
wait_screen sweep-80x24
wait_for "8 ranks  pairs  failed  round 7 of 7"
wait_for "  5!rk-h5  .  .  .  .  .     .  ."
wait_for "  0 rk-h0     #  #  #  #  .  #  #"
wait_for "  1 rk-h1  #     #  X  #  .  #  #"
pass "the matrix: rk-h5's row and column marked, the failed pair X"

keys Right Right
wait_for "Pair 0 -> 1 ─"
wait_for "│rk-h0 -> rk-h1 "
wait_for "  0 rk-h0    [#] #"
wait_for "bw 0->1 94.2 Gb/s"
wait_for "lat p50 63.0 us  p99 92.0 us"
wait_for "p50/p99/p99.9 1.5/1.5/1.5 us"
keys Down Down Down Down Down
wait_for "Pair 5 -> 1 ─"
wait_for "bandwidth 0.25x the median"
wait_for "bw 5->1 23.4 Gb/s"
pass "the cursor's pair: its figures with units, its tests"

keys Left Left
wait_for "rank 5  rk-h5"
wait_for "median bandwidth 23.4 Gb/s (0.25x)"
pass "the row header: the rank's figures"

keys Tab Enter
wait_for "  5!rk-h5 [.] .  ."
wait_for "Pair 5 -> 0 ─"
keys Tab Down Enter
wait_for "  1 rk-h1  #     # [X]"
wait_for "failed: rk-h1 -> rk-h3: no"
pass "Tab, Enter on a verdict jumps to its cell"

keys l
wait_for "Sweep: latency p50 (b l p)"
wait_for "median 63.0 us #<1.1 +<1.3 -<2 . X fail"
wait_for "  5!rk-h5  -  -  -  -  -     -  -"
keys b
wait_for "Sweep: bandwidth a->b (b l p)"
pass "l shows latency p50, b bandwidth again"
quit_and_check

# The same pairs over verbs too, rk-h2 slow over verbs only: t switches to the verbs matrix
# (its own median and shades), a verbs verdict's Enter brings it back from TCP's.
python3 - "$DOC" "$E2E_DIR/two.json" <<'PY' || fail "cannot make the two-transport document"
import copy, json, sys
d = json.load(open(sys.argv[1]))
tcp = d["pairs"]
verbs = []
for p in tcp:
    q = copy.deepcopy(p)
    q["transport"] = "verbs"
    q["failed"] = False
    q["error"] = None
    f = 0.3 if 2 in (p["a"], p["b"]) else 1.0
    q["bw_ab_gbps"] = q["bw_ba_gbps"] = 380.0 * f
    verbs.append(q)
d["pairs"] = tcp + verbs
d["verdicts"].append({"kind": "rank", "metric": "bandwidth", "state": "named", "rank": 2,
                      "peer": None, "rail": 0, "transport": "verbs",
                      "message": "verbs: rk-h2 rail 0: 0.30x the rack's median bandwidth"})
json.dump(d, open(sys.argv[2], "w"))
PY
start -- --input synth.xml --results two.json
wait_for "Sweep: tcp bandwidth a->b (b l p t)"
wait_for "  5!rk-h5  .  .  .  .  .     .  ."
keys t
wait_for "Sweep: verbs bandwidth a->b (b l p t)"
wait_for "median 380.0 Gb/s"
wait_for "  2!rk-h2  .  .     .  .  .  .  ."
wait_for "  5!rk-h5  #  #  .  #  #     #  #"
keys t
wait_for "Sweep: tcp bandwidth a->b (b l p t)"
wait_for "t transport  Tab verdicts  r re-read  F10 quit"
pass "t switches between the TCP and the verbs matrices"
keys Tab End Enter
wait_for "Sweep: verbs bandwidth a->b (b l p t)"
pass "Enter on a verbs verdict shows the verbs matrix"
quit_and_check

# --attach: the document as rank 0 publishes it, replaced whole by mv.
sed -e 's/"rounds_done": 7/"rounds_done": 3/' -e 's/"status": "failed"/"status": "running"/' \
    -e 's/"ended_at": "[^"]*"/"ended_at": null/' -e 's/"duration_s": 42/"duration_s": 18/' \
    "$DOC" >"$E2E_DIR/three.json"
publish() {
    cp "$1" "$E2E_DIR/live.json.tmp" && mv "$E2E_DIR/live.json.tmp" "$E2E_DIR/live.json"
}

start -- --input synth.xml --attach live.json
wait_for "live.json: No such file or directory"
pass "a missing file is named, with what to do"

publish "$E2E_DIR/three.json"
wait_for "8 ranks  pairs  running  round 3 of 7" 5
wait_for "18 s elapsed, about 24 s left"
keys Down Right Right Right
wait_for "Pair 1 -> 2 ─"
pass "the published document shows, with the time left"

publish "$DOC"
wait_for "8 ranks  pairs  failed  round 7 of 7" 5
wait_gone "round 3 of 7" 1
wait_for "Pair 1 -> 2 ─" 1
pass "re-read when it changed: round 3 of 7 to round 7 of 7, the cursor kept"

printf '{"format": "fabtop-sweep",\n' >"$E2E_DIR/bad.json"
publish "$E2E_DIR/bad.json"
wait_for "live.json:2:1: malformed JSON" 5
wait_for "8 ranks  pairs  failed  round 7 of 7" 1
pass "a malformed file is named; the last good document stays"

quit_and_check
echo "PASS: e2e_sweep"
