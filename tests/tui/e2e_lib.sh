# e2e_lib: helpers for the explorer's end-to-end tests: the real fabtop in a private tmux
# server (its own socket, no config file) on a fixed-size window, keys sent with send-keys,
# and the screen read with capture-pane, polled every 50 ms until the text shows (no bare
# sleeps). Sourced by e2e_*.sh; $1 of the test is the tui_write_synth program. Exit 77
# when tmux is missing.
set -u

FABTOP=${FABTOP_BIN:?FABTOP_BIN names the fabtop binary}
EXPECTED=${FABTOP_SRC:?FABTOP_SRC names the source tree}/tests/tui/expected
WRITE_SYNTH=${1:?usage: $0 TUI_WRITE_SYNTH}
command -v tmux >/dev/null 2>&1 || {
    echo "SKIP: tmux is not installed"
    exit 77
}

E2E_SOCK=fabtop-e2e-$$
E2E_DIR=$(mktemp -d /tmp/fabtop-e2e.XXXXXX) || exit 1
VERSION=$("$FABTOP" --version | awk '{print $2; exit}')
# A private environment: no user config or themes, no colour wishes from the caller.
export HOME="$E2E_DIR" XDG_CONFIG_HOME="$E2E_DIR/xdg" XDG_DATA_HOME="$E2E_DIR/data"
unset NO_COLOR TMUX

tm() { tmux -L "$E2E_SOCK" -f /dev/null "$@"; }

e2e_cleanup() {
    tm kill-server 2>/dev/null
    rm -rf "$E2E_DIR"
}
trap e2e_cleanup EXIT
trap 'exit 1' INT TERM

# Each start opens a new session (e2e1, e2e2, ...); the earlier ones stay until the end, so
# the server never exits between them.
E2E_N=0
S=e2e0
screen() { tm capture-pane -p -t "$S"; }

fail() {
    echo "FAIL: $*"
    echo "--- the screen:"
    screen 2>/dev/null
    echo "---"
    [ -f "$E2E_DIR/fabtop.err.$S" ] && sed 's/^/stderr: /' "$E2E_DIR/fabtop.err.$S"
    exit 1
}

pass() { echo "ok: $*"; }

# The synthetic topology (2 GPUs, 1 InfiniBand HCA) as synth.xml in the test directory.
"$WRITE_SYNTH" "$E2E_DIR/synth.xml" || exit 1

# start [-e VAR=VALUE]... -- FABTOP-ARGS...: a session of 80x24 running fabtop in the test
# directory inside a shell that records the terminal settings before and after and then
# prints "fabtop exited STATUS", so the test can check how it left the terminal.
start() {
    envs=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        envs="$envs $1"
        shift
    done
    [ $# -gt 0 ] && shift
    E2E_N=$((E2E_N + 1))
    S=e2e$E2E_N
    {
        echo "stty -g >stty.before.$S"
        printf '"%s"' "$FABTOP"
        for a in "$@"; do printf ' "%s"' "$a"; done
        echo " 2>fabtop.err.$S"
        echo 'echo "fabtop exited $?"'
        echo "stty -g >stty.after.$S"
        echo 'exec cat'
    } >"$E2E_DIR/run.$S.sh"
    # shellcheck disable=SC2086
    tm new-session -d -s "$S" -x 80 -y 24 -c "$E2E_DIR" -e TERM=tmux-256color \
        -e LANG=C.UTF-8 -e LC_ALL=C.UTF-8 $envs "sh $E2E_DIR/run.$S.sh" ||
        fail "tmux new-session"
}

# wait_for TEXT [SECONDS]: poll the screen every 50 ms until it shows TEXT (default 15 s).
wait_for() {
    n=$((${2:-15} * 20))
    while [ "$n" -gt 0 ]; do
        screen | grep -qF -- "$1" && return 0
        sleep 0.05
        n=$((n - 1))
    done
    fail "'$1' did not appear"
}

# wait_gone TEXT [SECONDS]: until the screen no longer shows TEXT.
wait_gone() {
    n=$((${2:-15} * 20))
    while [ "$n" -gt 0 ]; do
        screen | grep -qF -- "$1" || return 0
        sleep 0.05
        n=$((n - 1))
    done
    fail "'$1' did not go away"
}

# The screen as the in-process tests dump it: the version in the header as @VERSION@.
normalized_screen() { screen | sed "1s/ $VERSION / @VERSION@ /"; }

# wait_screen NAME [SECONDS]: until the whole screen equals tests/tui/expected/NAME.txt,
# the same file the in-process screen tests compare with.
wait_screen() {
    n=$((${2:-15} * 20))
    while [ "$n" -gt 0 ]; do
        normalized_screen >"$E2E_DIR/screen.txt"
        cmp -s "$E2E_DIR/screen.txt" "$EXPECTED/$1.txt" && return 0
        sleep 0.05
        n=$((n - 1))
    done
    diff -u "$EXPECTED/$1.txt" "$E2E_DIR/screen.txt"
    fail "the screen is not $1"
}

keys() { tm send-keys -t "$S" "$@"; }

# press_until KEY TEXT: press KEY (at most 40 times) until the screen shows TEXT.
press_until() {
    i=0
    while [ $i -lt 40 ]; do
        screen | grep -qF -- "$2" && return 0
        keys "$1"
        sleep 0.1
        i=$((i + 1))
    done
    fail "'$2' never showed after $1"
}
type_text() { tm send-keys -t "$S" -l "$1"; }
resize() { tm resize-window -t "$S" -x "$1" -y "$2"; }
pane() { tm display -p -t "$S" "$1"; }

# quit_and_check: q, then fabtop must have exited 0 and left the terminal as it found it:
# main screen, cursor shown, keypad mode off, the same stty settings.
quit_and_check() {
    keys q
    wait_for "fabtop exited" 5
    screen | grep -qF "fabtop exited 0" || fail "fabtop did not exit 0"
    [ "$(pane '#{alternate_on} #{cursor_flag} #{keypad_flag} #{keypad_cursor_flag}')" = "0 1 0 0" ] ||
        fail "terminal not restored: alternate_on cursor_flag keypad_flag keypad_cursor_flag = $(pane '#{alternate_on} #{cursor_flag} #{keypad_flag} #{keypad_cursor_flag}')"
    n=100
    while [ ! -s "$E2E_DIR/stty.after.$S" ] && [ "$n" -gt 0 ]; do
        sleep 0.05
        n=$((n - 1))
    done
    cmp -s "$E2E_DIR/stty.before.$S" "$E2E_DIR/stty.after.$S" ||
        fail "stty settings changed: $(cat "$E2E_DIR/stty.before.$S") -> $(cat "$E2E_DIR/stty.after.$S")"
    if [ -s "$E2E_DIR/fabtop.err.$S" ]; then
        fail "fabtop wrote to stderr: $(cat "$E2E_DIR/fabtop.err.$S")"
    fi
    pass "q quit with status 0 and restored the terminal"
}
