#!/bin/sh
# e2e_run: the whole explorer round in tmux: F2 setup, a loopback TCP mix (api, 1 s) started
# with S, the live view's histogram filling and its percentiles appearing, w saving the
# results, a second run, F5 results with both marked (Space) and compared (c), q quitting
# with the terminal restored. Loopback TCP needs no privileges.
. "$(dirname "$0")/e2e_lib.sh"

# wait_for_re REGEX [SECONDS]: like wait_for, for an extended regular expression.
wait_for_re() {
    n=$((${2:-15} * 20))
    while [ "$n" -gt 0 ]; do
        screen | grep -qE -- "$1" && return 0
        sleep 0.05
        n=$((n - 1))
    done
    fail "nothing matched /$1/"
}

# One run from the setup form, watched to its end, then saved with w.
run_and_save() {
    keys F2
    wait_for "Test setup"
    wait_for "< api >"
    keys S
    wait_for "round trip us"
    wait_for "Percentiles per flow"
    # The histogram fills (block characters in its pane) and the percentiles get numbers.
    wait_for_re "^│.*█.*││" 10
    wait_for_re "│p50 +[0-9]" 10
    wait_for_re "│p99 +[0-9]" 10
    wait_for_re "│p99\.9 +[0-9]" 10
    wait_for_re "▲p50 [0-9.]+ ▲p99 [0-9.]+" 10
    wait_for "test finished: w saves the results" 20
    keys w
    wait_for "Results saved to $XDG_DATA_HOME/fabtop/results/"
}

start -- --input synth.xml
wait_screen topo-tree-80x24

# A shorter run than the preset's 5 s: Duration is the 8th field.
keys F2
wait_for "Test setup"
keys j j j j j j j Enter
type_text 1
keys Enter
wait_for_re "Duration +1 s"
pass "setup: api over loopback TCP, 1 s"

run_and_save
pass "first run: histogram, percentiles, saved"
run_and_save
pass "second run saved"
set -- "$XDG_DATA_HOME"/fabtop/results/*.json
[ $# = 2 ] && [ -s "$1" ] && [ -s "$2" ] || fail "not two results in $XDG_DATA_HOME/fabtop/results"

keys F5
wait_for "Results: 2 saved, 0 marked"
keys Space
wait_for "Results: 2 saved, 1 marked"
keys j
keys Space
wait_for "Results: 2 saved, 2 marked"
keys c
wait_for "Outcome A|B"
wait_for_re "p99 us +[0-9.]+ +[0-9.]+ +x[0-9.]+"
pass "results: both marked and compared"

quit_and_check
echo "PASS: e2e_run"
