#!/bin/sh
# `fabtop run` at a terminal (a private tmux server, 80x24): its progress is one line
# rewritten in place (never a new line per update, never wider than the terminal), and its
# clock never runs past the phase's duration ("[quiet measure] 1.5/1.5 s", not 2.2/1.5).
set -eu
FABTOP=${FABTOP_BIN:?}
command -v tmux >/dev/null || { echo "skip: no tmux"; exit 77; }
T=$(mktemp -d)
sock=ftprog$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 24 \
    "env HOME=$T XDG_CONFIG_HOME=$T/cfg XDG_DATA_HOME=$T/data $FABTOP run --mix quiet-vs-loaded --duration 1.5 -o $T/r.json > $T/out.txt; echo done > $T/done; sleep 60"
seen=0
for _ in $(seq 1 100); do
    [ -f "$T/done" ] && break
    tmux -L "$sock" capture-pane -p > "$T/screen" 2>/dev/null || true
    n=$(grep -c '^\[\(quiet\|loaded\) ' "$T/screen" || true)
    [ "$n" -le 1 ] || { cat "$T/screen"; fail "$n progress lines on the screen at once"; }
    if [ "$n" = 1 ]; then
        seen=$((seen + 1))
        l=$(grep '^\[\(quiet\|loaded\) ' "$T/screen")
        [ ${#l} -le 79 ] || fail "progress wider than the terminal: ${#l} columns"
        echo "$l" | awk '{split($3, a, "/"); if (a[1] + 0 > a[2] + 0) exit 1}' ||
            fail "elapsed past the total: $l"
    fi
    sleep 0.1
done
[ -f "$T/done" ] || fail "the run did not end"
[ "$seen" -ge 3 ] || fail "saw the progress line only $seen times"
grep -q "p99" "$T/out.txt" || fail "no summary"
echo "ok: one progress line, seen $seen times, within 79 columns, never past the duration"
