#!/bin/sh
# fabtop baseline save/list/rm and `fabtop run --baseline`: a loopback TCP stream with one
# connection (a setting the judge names) is judged in the summary, the results JSON and
# `fabtop report`; saved as a baseline under $XDG_DATA_HOME (a temporary directory: never a
# system path), listed, found again by its mix name, compared with an unfair run (another
# concurrency) and removed; bad names, missing files and malformed documents get one line
# and their exit status.
set -u
F=${FABTOP_BIN:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_DATA_HOME="$T/data" HOME="$T/home"
fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}
# expect STATUS WORDS CMD...: the command exits STATUS and its output holds WORDS.
expect() {
    want=$1 words=$2
    shift 2
    "$@" >"$T/out" 2>&1
    got=$?
    [ "$got" = "$want" ] || bad "$* exited $got, expected $want: $(cat "$T/out")"
    grep -qF -- "$words" "$T/out" || bad "$* did not say '$words': $(cat "$T/out")"
}
mix() { # NAME CONCURRENCY
    cat >"$T/$1.json" <<JSON
{"format":"fabtop-mix","version":1,"name":"one-stream","description":"one TCP stream",
 "phases":["loaded"],"flows":[{"name":"bulk","role":"foreground","transport":"tcp",
 "op":"stream","size":"64KiB","concurrency":$2,"warmup_s":0.1,"duration_s":0.5,
 "peer":"loopback"}]}
JSON
}
mix one 1
mix two 2
mkdir -p "$T/work"
cd "$T/work" || exit 1

expect 0 "no baselines" "$F" baseline list
expect 0 "[one-connection] bulk" "$F" run --mix "$T/one.json" -o "$T/work/r1.json"
grep -q '"rule":[[:space:]]*"one-connection"' r1.json || bad "r1.json has no one-connection cause"
grep -q '"causes"' r1.json || bad "r1.json has no causes array"
expect 0 "fix: raise the flow's concurrency" "$F" report r1.json

# save: the newest results file in the current directory by default.
expect 0 "baseline good saved from ./r1.json" "$F" baseline save good
[ -f "$XDG_DATA_HOME/fabtop/baselines/good.json" ] || bad "good.json not under XDG_DATA_HOME"
expect 0 "one-stream" "$F" baseline list
"$F" baseline list --json | grep -q '"name":[[:space:]]*"good"' || bad "list --json lacks good"

# The same mix again: found by its mix name, a ratio per figure, like for like.
expect 0 "against baseline good" "$F" run --mix "$T/one.json"
grep -q "Gb/s x[0-9]" "$T/out" || bad "no goodput ratio: $(cat "$T/out")"
grep -q "unfair:" "$T/out" && bad "a like-for-like run named unfair: $(cat "$T/out")"
# Another concurrency: unfair, named as compare names it.
expect 0 "unfair: flow bulk concurrency: 1 (baseline) vs 2 (this run)" \
    "$F" run --mix "$T/two.json" --baseline good

# Bad input: one line, the documented status, and no run for a missing baseline.
expect 64 "is not 1-64 of" "$F" baseline save ../evil r1.json
expect 64 "is not 1-64 of" "$F" baseline rm .hidden
expect 66 "nosuch.json" "$F" baseline save x nosuch.json
echo '{"format":"fabtop-mix"}' >"$T/junk.json"
expect 65 "not a fabtop results file" "$F" baseline save x "$T/junk.json"
[ -e "$XDG_DATA_HOME/fabtop/baselines/x.json" ] && bad "a refused document was saved"
expect 66 "no baseline nope" "$F" run --mix "$T/one.json" --baseline nope -o "$T/work/r9.json"
[ -e r9.json ] && bad "a run went ahead with a missing baseline"
expect 66 "no such baseline" "$F" baseline rm nope
expect 64 "unknown action" "$F" baseline frob
expect 64 "needs save, list or rm" "$F" baseline
mkdir -p "$T/empty"
(cd "$T/empty" && "$F" baseline save y >"$T/out" 2>&1)
[ $? = 66 ] || bad "save with no results in the directory: not 66"

expect 0 "baseline good removed" "$F" baseline rm good
expect 0 "no baselines" "$F" baseline list
exit $fail
