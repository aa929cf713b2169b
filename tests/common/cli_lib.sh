# cli_lib: what the command-line tests that count their failures share. Sourced after $bin
# (the fabtop binary) is set: a scratch directory $tmp removed on exit, $fails and fail()
# (which counts and goes on), and run STATUS ARGS... (fabtop's status must be STATUS; its
# stdout in $tmp/out, stderr in $tmp/err, at 80 columns).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
run() {
    want=$1
    shift
    COLUMNS=80 "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "fabtop $* -> status $got (want $want): $(head -5 "$tmp/err")"
        return 1
    fi
    echo "PASS: fabtop $* -> $got"
}
