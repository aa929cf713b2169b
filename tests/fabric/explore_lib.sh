# explore_lib: the explorer on a saved topology (fabtop --input FILE) in a private tmux server
# at 132x43, for the fabric tests that check what its topology view draws. Sourced after
# $FABTOP, $TMP and fail() are set; every function kills the server before it fails.
# explore_start FILE: start it (tmux is needed: the caller checks for it).
explore_start() {
    esock=fabtop-explore-$$
    tmux -L "$esock" -f /dev/null new-session -d -s d -x 132 -y 43 -e TERM=tmux-256color \
        -e LANG=C.UTF-8 -e HOME="$TMP" -e XDG_CONFIG_HOME="$TMP/xdg" \
        "\"$FABTOP\" --input \"$1\" 2>\"$TMP/explore.err\"; sleep 30"
}
# explore_shot: the screen; explore_detail: its right half (the detail pane, from column 73).
explore_shot() { tmux -L "$esock" capture-pane -p -t d; }
explore_detail() { explore_shot | cut -c73-; }
explore_stop() { tmux -L "$esock" kill-server 2>/dev/null; }
# explore_wait WHAT PATTERN WHY: poll WHAT (explore_shot or explore_detail) every 0.1 s for
# up to 10 s until it matches PATTERN; else fail with WHY and the screen.
explore_wait() {
    n=0
    until $1 | grep -q -- "$2"; do
        n=$((n + 1))
        [ $n -lt 100 ] || {
            s=$(explore_shot)
            explore_stop
            fail "$3: $s"
        }
        sleep 0.1
    done
}
# explore_search TEXT: / TEXT Enter (the tree's first line holding TEXT is selected).
explore_search() {
    tmux -L "$esock" send-keys -t d / && tmux -L "$esock" send-keys -t d -l "$1" &&
        tmux -L "$esock" send-keys -t d Enter
}
