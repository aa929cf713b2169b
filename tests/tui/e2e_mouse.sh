#!/bin/sh
# e2e_mouse: the real fabtop in tmux driven by the mouse. tmux passes input bytes to the pane,
# so send-keys -l of the terminal's mouse report reaches fabtop as a click: with
# TERM=tmux-256color (kmous \E[M) the X10 form ESC [ M, then button + 32, column + 33 and
# row + 33 (xterm's ctlseqs, "X10 compatibility mode"; ncurses curs_mouse(3X)). A click on
# a tab switches views, on a tree row selects it, on a key of the key line acts as that key;
# the wheel (buttons 64 and 65) scrolls the pane under the pointer; --no-mouse leaves all
# of that off.
. "$(dirname "$0")/e2e_lib.sh"
command -v python3 >/dev/null 2>&1 || {
    echo "SKIP: python3 is not installed"
    exit 77
}

# cell TEXT: "ROW COL" (0-based, in characters) of the first place the screen shows TEXT.
cell() {
    screen | python3 -c '
import sys
want = sys.argv[1]
for y, line in enumerate(sys.stdin.read().split("\n")):
    x = line.find(want)
    if x >= 0:
        print(y, x)
        break
' "$1"
}

# mouse BUTTON ROW COL: a press (and for button 0 its release) at ROW, COL.
mouse() {
    b=$1 r=$2 c=$3
    press=$(printf "\\033[M\\$(printf %o $((b + 32)))\\$(printf %o $((c + 33)))\\$(printf %o $((r + 33)))")
    type_text "$press"
    if [ "$b" -eq 0 ]; then
        release=$(printf "\\033[M\\$(printf %o 35)\\$(printf %o $((c + 33)))\\$(printf %o $((r + 33)))")
        type_text "$release"
    fi
}

# click TEXT: button 1 on the first character of TEXT where the screen shows it.
click() {
    at=$(cell "$1")
    [ -n "$at" ] || fail "'$1' is not on the screen to click"
    # shellcheck disable=SC2086
    mouse 0 $at
}

start -- --input synth.xml
wait_screen topo-tree-80x24
pass "first screen at 80x24"

click "F5 Results"
wait_for "Results: "
pass "a click on the F5 tab opens the results view"
click "F3 Topology"
wait_screen topo-tree-80x24
pass "a click on the F3 tab comes back"

click "GPU0 0000:03:00.0"
wait_screen topo-gpu-80x24
pass "a click on a tree row selects it (the same screen as four j presses)"

click "m matrix"
wait_screen topo-matrix-80x24
pass "a click on 'm matrix' in the key line acts as m"
keys m
wait_screen topo-gpu-80x24

# The wheel over the lint pane: it takes the focus and the selection moves down (to the
# last of the two findings, which the detail pane then shows whole).
at=$(cell "Lint: ")
row=${at% *}
# shellcheck disable=SC2086
mouse 65 $((row + 1)) 10
wait_for "Finding 2 of 2"
mouse 64 $((row + 1)) 10
wait_for "Finding 1 of 2"
pass "the wheel over the lint pane scrolls its selection both ways"
quit_and_check

# --no-mouse: the same click on the F5 tab changes nothing; a key afterwards still works.
start -- --input synth.xml --no-mouse
wait_screen topo-tree-80x24
click "F5 Results"
keys j j j j
wait_screen topo-gpu-80x24
screen | grep -qF "Results: " && fail "--no-mouse: a click opened the results view"
pass "--no-mouse: clicks do nothing, keys still work"
quit_and_check
echo "PASS: e2e_mouse"
