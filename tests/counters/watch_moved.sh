#!/bin/sh
# `fabtop counters --watch` at a terminal (a private tmux server, 80x24) while this test moves
# bytes over loopback: one table of what moved, sorted (error-like first, then by group and by
# rate), fitting the screen (no line wider than 80, no more lines than 24), with lo's rx_bytes
# in it and its rate in B/s; --all at the same terminal lists every counter by object instead.
set -eu
FABTOP=${FABTOP_BIN:?}
command -v tmux >/dev/null || { echo "skip: no tmux"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d)
sock=ftctr$$
load=""
trap '[ -n "$load" ] && kill "$load" 2>/dev/null; tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Loopback traffic for 20 s (127.0.0.1 only).
python3 - <<'PY' &
import socket, threading, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
port = srv.getsockname()[1]
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20):
        pass
threading.Thread(target=sink, daemon=True).start()
s = socket.create_connection(("127.0.0.1", port))
buf = b"x" * (1 << 16)
end = time.time() + 20
while time.time() < end:
    s.sendall(buf)
    time.sleep(0.001)
PY
load=$!
run_watch() { # args...: the screen after a few redraws
    tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 24 \
        "$FABTOP counters --watch 0.3 --count 8 $*; sleep 30"
    sleep 2.2
    tmux -L "$sock" capture-pane -p > "$T/screen"
    tmux -L "$sock" kill-server 2>/dev/null || true
}
run_watch
grep -q "^fabtop counters: [0-9]* of [0-9]* moved" "$T/screen" || { cat "$T/screen"; fail "no moved header"; }
lines=$(grep -c . "$T/screen")
[ "$lines" -le 24 ] || fail "$lines lines on a 24-line screen"
awk 'length > 80 { exit 1 }' "$T/screen" || fail "a line wider than 80 columns"
grep -q "^  lo  *rx_bytes  *[0-9.]* [kMG]*B/s" "$T/screen" || { cat "$T/screen"; fail "lo rx_bytes with a B/s rate not in the table"; }
# Within the traffic group the rates go down the table (bytes before packets by size, same
# object): lo's rx_bytes is above lo's rx_packets.
b=$(grep -n "^  lo  *rx_bytes " "$T/screen" | cut -d: -f1)
p=$(grep -n "^  lo  *rx_packets " "$T/screen" | cut -d: -f1 || true)
[ -z "$p" ] || [ "$b" -lt "$p" ] || fail "rx_packets above rx_bytes: not sorted by rate"
run_watch --all
grep -q "^lo" "$T/screen" || grep -q "^  traffic" "$T/screen" || { cat "$T/screen"; fail "--all is not the full list by object"; }
grep -q " moved (rates" "$T/screen" && fail "--all still shows the moved table"
echo "ok: the moved table fits 80x24 and is sorted; --all gives the list by object"
