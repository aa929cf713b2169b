#!/bin/sh
# e2e_drill: D in the setup view through the real event loop, in tmux at 80x24: tp-decode at
# one size, the Drill field set to peer-kill for 2.5 s once, D; the live view shows the
# repetition running, refuses a run meanwhile, and q asks first; then, with no key pressed
# (the loop's own tick takes the drill's document), the detection, the recovery and the
# agent's count agreeing; w saves the document. Then blackhole (this TCP mix: not started, the
# mix written and the `fabtop drill` line shown, which fabtop drill takes), rank-loss (the
# mix's refusal) and link-down (not started) on the Drill field; q quits cleanly, and the next
# explorer has link-down on the field.
. "$(dirname "$0")/e2e_lib.sh"

start -- --input synth.xml
wait_for "F2 Setup"
keys F2
wait_for "< api >"
press_until Right "< tp-decode >"
# One message size (a sweep cannot be drilled): the 6th field.
keys j j j j j Enter C-u
type_text 4KiB
keys Enter
wait_for "\$ fabtop run --mix tp-decode --size 4KiB"
# The Drill field is the one above Start.
keys G k
press_until Right "< peer-kill, 2 s x 1 >"
keys Enter C-u
type_text "2.5 x 1"
keys Enter
wait_for "< peer-kill, 2.5 s x 1 >"
pass "setup: tp-decode at 4KiB, Drill peer-kill for 2.5 s once"

keys D
wait_for "Repetition 1 of 1: running (fault at 1 s for 2.5 s)" 10
wait_for "drill tp-decode peer-kill: repetition 1/1"
keys F2 S
wait_for "a drill is running: s in the live view stops it (F4 live)"
keys F4
keys q
wait_for "a drill is running (repetition 1 of 1): q again stops it"
pass "drilling: the repetition running, a run refused, q asks first"

# Room for the whole page; from here no key until the drill has ended.
resize 132 43
wait_for "drill finished: 1 drill, 0 broke a bound, 0 never recovered" 30
wait_for "Repetition 1 of 1: peer-kill injected at "
screen | grep -qE "tp-sync \(pingpong, 1 connection\): detected after [0-9.]+ s \(bound 2\.10 s, ok\) by error: " ||
    fail "no detection line with its bound"
screen | grep -qE "recovered after [0-9.]+ s \(deadline 8 s, ok\), [0-9]+ reconnects?; back at the quiet p99 \([0-9.]+ us round trip\) at [0-9.]+ s" ||
    fail "no recovery line with its deadline"
screen | grep -qE "requests: [0-9]+ issued, [0-9]+ completed, [0-9]+ failed, [0-9]+ abandoned at their deadline, 0 hanging" ||
    fail "no requests line"
screen | grep -qE "the agent answered ([0-9]+) requests, the client completed [0-9]+: agree" ||
    fail "no agreement line"
wait_for "Summary of 1 repetition: 1 drill (flow x repetition), 0 broke a bound, 0 never recovered"
pass "the drill's repetition shown: detection, recovery, requests, agreement"

keys w
wait_for "Drill saved to $XDG_DATA_HOME/fabtop/drills/"
set -- "$XDG_DATA_HOME"/fabtop/drills/*-drill-tp-decode.json
[ -s "$1" ] || fail "no drill document in $XDG_DATA_HOME/fabtop/drills"
grep -q '"format":[[:space:]]*"fabtop-drill"' "$1" || fail "$1 is not a fabtop-drill document"
pass "w saved the drill's document"

# The other kinds on the Drill field. A blackhole of this TCP mix needs a network namespace of
# the drill's own: D starts nothing, writes the mix and shows the `fabtop drill` line, which
# the real command takes as it is (up to the namespace, which does not exist here: 66).
keys F2 G k
press_until Right "< blackhole, 2.5 s x 1 >"
wait_for "needs \`fabtop drill\` (below)"
wait_for "a blackhole of tcp traffic needs a network namespace the drill owns"
keys D
wait_for "blackhole not started: the \`fabtop drill\` line below runs it; the mix is in ~/data/fabtop/drills/tp-decode.mix.json"
[ -s "$E2E_DIR/data/fabtop/drills/tp-decode.mix.json" ] || fail "D wrote no mix file"
line=$(screen | sed -n 's/^ \$ \(fabtop drill .*\)$/\1/p')
case "$line" in
*" --fault blackhole --netns NAME --peer HOST --for 2.5") ;;
*) fail "no fabtop drill line for the blackhole: '$line'" ;;
esac
"$FABTOP" serve --gen-key "$XDG_CONFIG_HOME/fabtop/key" >/dev/null 2>&1 ||
    fail "fabtop serve --gen-key"
ns=fabtop-e2e-none-$$
cmd=$(printf '%s\n' "$line" | sed "s/^fabtop //; s/ NAME / $ns /; s/ HOST / 127.0.0.1 /")
(cd "$E2E_DIR" && eval "\"\$FABTOP\" $cmd") >"$E2E_DIR/drill.out" 2>&1
rc=$?
[ "$rc" -eq 66 ] && grep -q "/run/netns/$ns" "$E2E_DIR/drill.out" ||
    fail "the line shown, run: exit $rc: $(cat "$E2E_DIR/drill.out")"
pass "blackhole of TCP: not started, the mix written, its fabtop drill line taken by fabtop drill"

# rank-loss: drill_check_mix_fault's line; link-down: never started, its line.
keys Right
wait_for "< rank-loss, 2.5 s x 1 >"
wait_for "tp-decode: flow tp-sync: a rank-loss drill runs NCCL collectives (foreground) only, not tcp"
keys Right
wait_for "< link-down, 2.5 s x 1 >"
wait_for "--fault link-down --netns NAME --peer HOST --data-peer HOST --for 2.5"
keys D
wait_for "link-down not started: the \`fabtop drill\` line below runs it"
screen | grep -q "Drill of tp-decode" && fail "a link-down was started"
pass "rank-loss refused with its reason; link-down not started, its line shown"
quit_and_check

# The next explorer has link-down on the Drill field (the config).
start -- --input synth.xml
wait_for "F2 Setup"
keys F2
wait_for "< link-down, 2.5 s x 1 >"
pass "the Drill field's link-down remembered"
quit_and_check
echo "PASS: e2e_drill"
