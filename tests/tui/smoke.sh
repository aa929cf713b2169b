#!/bin/sh
# smoke: the real draw path headless (fabtop --iterations draws into /dev/null when there is
# no terminal), on the synthetic topology, with scripted keys through the topology and help
# views, every theme, NO_COLOR, 8 colours, no colours, no TERM, a bad theme and a screen
# too small; scripts/test.sh runs it again in the ASan+UBSan build, where any error fails it.
set -u
FABTOP=${FABTOP_BIN:?}
WRITE_SYNTH=${1:?usage: $0 TUI_WRITE_SYNTH}
dir=$(mktemp -d /tmp/fabtop-smoke.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
export HOME="$dir" XDG_CONFIG_HOME="$dir/xdg" XDG_DATA_HOME="$dir/data"
unset NO_COLOR
"$WRITE_SYNTH" "$dir/synth.xml" || exit 1
printf '{"roles": {"header": {"fg": 300}}}\n' >"$dir/bad.json"
keys="j j j j m m Tab Tab j Enter / G P U Enter n F1 PgDn j / N V Enter Esc F3 t t t t t"
status=0
run() {
    what=$1
    shift
    if "$@" </dev/null >"$dir/out" 2>&1; then
        echo "ok: $what"
    else
        echo "FAIL: $what (status $?)"
        cat "$dir/out"
        status=1
    fi
}
run "20 frames, default" env TERM=xterm-256color "$FABTOP" --iterations 20 --input "$dir/synth.xml"
run "keys, every theme" env TERM=xterm-256color "$FABTOP" --iterations 20 \
    --input "$dir/synth.xml" --keys "$keys"
run "NO_COLOR" env TERM=xterm-256color NO_COLOR=1 "$FABTOP" --iterations 5 \
    --input "$dir/synth.xml" --keys "$keys"
run "8 colours" env TERM=xterm "$FABTOP" --iterations 5 --input "$dir/synth.xml" --keys "$keys"
run "no colours" env TERM=vt100 "$FABTOP" --iterations 5 --input "$dir/synth.xml" --keys "$keys"
run "no TERM" env -u TERM "$FABTOP" --iterations 5 --input "$dir/synth.xml"
run "malformed theme" env TERM=xterm-256color "$FABTOP" --iterations 5 \
    --input "$dir/synth.xml" --theme "$dir/bad.json"
run "too small" env TERM=xterm-256color LINES=20 COLUMNS=60 "$FABTOP" --iterations 5 \
    --input "$dir/synth.xml" --keys "j m F1"
exit $status
