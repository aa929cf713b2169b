#!/bin/sh
# e2e_theme: themes in the real fabtop under tmux: a malformed theme file gives one message
# and the default colours; t cycles themes, says which, and the next start remembers it;
# NO_COLOR draws without any colour; quitting restores the terminal each time.
. "$(dirname "$0")/e2e_lib.sh"

# The SGR numbers tmux reports for the header cell (capture-pane -e), e.g. "1 97 44".
header_sgr() {
    tm capture-pane -p -e -t "$S" | head -1 | sed 's/ fabtop.*//' |
        sed 's/\x1b\[\([0-9;]*\)m/\1 /g; s/;/ /g' | tr -s ' ' | sed 's/^ //; s/ $//'
}

# The same file as the in-process test writes: a comma missing on line 4.
printf '{\n  "name": "bad",\n  "roles": {\n    "header": {"fg": "red" "bg": "blue"}\n  }\n}\n' \
    >"$E2E_DIR/bad.json"
start -- --input synth.xml --theme ./bad.json
# The message stays 4 s.
wait_for "using the default theme: ./bad.json:4:28: malformed JSON"
wait_screen topo-badtheme-80x24
# The default theme's header: bold bright white on blue.
[ "$(header_sgr)" = "1 97 44" ] || fail "header colours $(header_sgr), want the default's 1 97 44"
pass "a malformed theme: one message, the default theme"
quit_and_check

start -- --input synth.xml
wait_screen topo-tree-80x24
keys t
wait_for "theme high-contrast (t: next)"
# High contrast: bold black on bright yellow.
[ "$(header_sgr)" = "1 30 103" ] || fail "header colours $(header_sgr), want 1 30 103"
grep -q '"theme":[[:space:]]*"high-contrast"' "$XDG_CONFIG_HOME/fabtop/config.json" ||
    fail "the theme is not in $XDG_CONFIG_HOME/fabtop/config.json"
keys t
wait_for "theme light (t: next)"
keys t
wait_for "theme monochrome (t: next)"
pass "t cycles the themes and remembers the choice"
quit_and_check

start -- --input synth.xml
wait_screen topo-tree-80x24
[ "$(header_sgr)" = "1 7" ] || fail "monochrome header $(header_sgr), want bold reverse"
pass "the next start uses the remembered theme"
quit_and_check

rm -f "$XDG_CONFIG_HOME/fabtop/config.json"
start -e NO_COLOR=1 -- --input synth.xml
wait_screen topo-tree-80x24
# No SGR colour at all: only attributes (bold 1, dim 2, underline 4, reverse 7) and the
# resets to the default colours (0, 39, 49).
colours=$(tm capture-pane -p -e -t "$S" | grep -o "$(printf '\033')\[[0-9;]*m" |
    sed 's/^.\[//; s/m$//' | tr ';' '\n' | sort -u | grep -vxE '0|1|2|4|7|22|24|27|39|49|')
[ -z "$colours" ] || fail "NO_COLOR screen has colour codes: $(echo "$colours" | tr '\n' ' ')"
[ "$(header_sgr)" = "1 7" ] || fail "NO_COLOR header $(header_sgr), want bold reverse"
pass "NO_COLOR: attributes only"
quit_and_check
echo "PASS: e2e_theme"
