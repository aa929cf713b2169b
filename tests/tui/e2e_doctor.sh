#!/bin/sh
# e2e_doctor: C in the setup view through the real event loop, in tmux at 80x24: without a
# peer it says to set one; with the Peer and Key file fields set to a `fabtop serve` of this
# test's own on 127.0.0.1 it runs the handshake doctor in the background, and the panel shows
# both ends side by side, the findings and their count as `fabtop doctor` prints them (the
# same lines); it scrolls, Esc brings the form back and q quits cleanly.
. "$(dirname "$0")/e2e_lib.sh"
. "$(dirname "$0")/../ctl/serve_lib.sh"
SPID=""
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; e2e_cleanup' EXIT
"$FABTOP" serve --gen-key "$E2E_DIR/key" >/dev/null || fail "no key"
"$FABTOP" serve --listen 127.0.0.1:0 --key-file "$E2E_DIR/key" --log "$E2E_DIR/serve.log" &
SPID=$!
port=$(serve_port "$E2E_DIR/serve.log")
[ -n "$port" ] || fail "the agent did not start: $(cat "$E2E_DIR/serve.log")"

start -- --input synth.xml
wait_for "F2 Setup"
keys F2
wait_for "< api >"
keys C
wait_for "doctor: the doctor compares this end with a \`fabtop serve\` elsewhere"
pass "C without a peer: one line saying what to set"

# The Peer field is the third, the Key file the fourth.
keys g j j Enter C-u
type_text "127.0.0.1:$port"
keys Enter j Enter C-u
type_text "$E2E_DIR/key"
keys Enter
wait_for "127.0.0.1:$port"
keys C
wait_for "Doctor: this end and 127.0.0.1:$port"
wait_for "C shows it again, Esc the form" 30
screen | grep -qE "^.. +this end +peer" || fail "no side-by-side head"
screen | grep -qE "netdev MTU \(bytes\)" || fail "no netdev MTU row"
# The same report `fabtop doctor` prints: its count line is on the panel.
"$FABTOP" doctor --peer "127.0.0.1:$port" --key-file "$E2E_DIR/key" >"$E2E_DIR/cli.txt" 2>/dev/null
count=$(tail -1 "$E2E_DIR/cli.txt")
case $count in *"error(s),"*) ;; *) fail "fabtop doctor printed no count: $count" ;; esac
screen | grep -qE "doctor: (clean|warnings|errors) with 127\.0\.0\.1:$port \([0-9]+ findings?\)" ||
    fail "no status line of the doctor's end"
keys G
wait_for "$count"
pass "the doctor's panel: both ends, the count ($count) as fabtop doctor prints it"

keys g
wait_for "this end"
keys Escape
wait_for "Test setup"
pass "Esc: back to the form"
quit_and_check
echo "PASS: e2e_doctor"
