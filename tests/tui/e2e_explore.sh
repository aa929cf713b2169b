#!/bin/sh
# e2e_explore: the real fabtop in tmux on the synthetic topology: the first screen, moving in
# the tree (j), the matrix (m), a lint finding (Tab, Enter), help (F1) and back (F3), search
# (/), the layout following the window to 132x43, the too-small message below 80x24 and the
# way back, and q leaving the terminal as it was. Whole screens are compared with the
# expected files of the in-process screen tests.
. "$(dirname "$0")/e2e_lib.sh"

start -- --input synth.xml
wait_screen topo-tree-80x24
pass "first screen at 80x24"

keys j j j j
wait_screen topo-gpu-80x24
pass "j moves to GPU0 and the detail follows"

keys m
wait_screen topo-matrix-80x24
keys m
wait_screen topo-gpu-80x24
pass "m shows the affinity matrix and goes back"

keys Tab Tab Enter
wait_screen topo-jump-80x24
pass "Tab to the findings, Enter jumps to GPU1"

keys F1
wait_screen help-80x24
keys F3
wait_screen topo-jump-80x24
pass "F1 help, F3 back to the topology"

keys /
type_text port
wait_for "/port"
keys Enter
wait_screen topo-port-80x24
pass "/port finds the port"

resize 132 43
wait_screen topo-port-132x43
pass "the layout follows the window to 132x43"

resize 70 20
wait_for "Terminal too small: 70x20."
wait_for "fabtop needs at least 80x24; enlarge the window (q quits)."
resize 80 23
wait_for "Terminal too small: 80x23."
resize 80 24
wait_screen topo-port-80x24
pass "too small below 80x24, and back"

quit_and_check
echo "PASS: e2e_explore"
