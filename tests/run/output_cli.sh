#!/bin/sh
# output_cli: where `fabtop run -o FILE` writes and how it ends. Only regular files are
# written: a device node and a FIFO (made here) are refused with one line before the run
# starts, without blocking on the FIFO; a symlink is written through (the link stays); an
# existing file keeps its mode, a new one gets 0666 less the umask; a missing directory or a
# directory as the target is refused before any traffic runs; a full file system (a 64 KiB
# tmpfs mounted here, root only) passes the check but fails the final write: the results land
# in a named fallback file and the status is still 73. SIGINT and SIGTERM save valid partial
# results ("interrupted": true), then the process dies by that signal (130 / 143 in sh).
# `fabtop topo -o` and `fabtop counters -o` refuse a FIFO before their work, too.
# Loopback TCP only.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN is not set}
command -v jq >/dev/null 2>&1 || { echo "jq is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
mnt=""
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
ok() {
    echo "ok: $*"
}

# A loopback ping-pong of DUR seconds.
mix() {
    cat >"$tmp/mix$1.json" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "short", "description": "a short ping-pong",
 "flows": [{"name": "probe", "transport": "tcp", "op": "pingpong", "size": 64,
            "warmup_s": 0, "duration_s": $1}]}
EOF
}
mix 1
mix 3
mix 60

now() { date +%s.%N; }
# refused WHAT NEEDLE PATH: a 3 s run with -o PATH exits 73 at once (before the run: well
# under its 3 s) with one line on stderr containing NEEDLE and nothing on stdout.
refused() {
    what=$1 needle=$2 path=$3
    t0=$(now)
    timeout 20 "$bin" run --mix "$tmp/mix3.json" -o "$path" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    t1=$(now)
    quick=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 2.0) ? 1 : 0 }')
    if [ "$rc" -ne 73 ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ "$quick" != 1 ]; then
        fail "$what: status $rc (want 73), quick=$quick, stderr: $(cat "$tmp/err"), stdout: $(head -3 "$tmp/out")"
    else
        ok "$what refused before the run: $(cat "$tmp/err")"
    fi
}

# Devices, FIFOs, directories, missing directories.
if mknod "$tmp/null" c 1 3 2>/dev/null; then
    refused "a character device" "is a character device, not a regular file" "$tmp/null"
    [ -c "$tmp/null" ] || fail "the device node was replaced"
    ln -s null "$tmp/to-null"
    refused "a symlink to a device" "is a character device" "$tmp/to-null"
    [ -L "$tmp/to-null" ] && [ -c "$tmp/null" ] || fail "the link or the device was replaced"
else
    echo "not root: the device node case is skipped"
fi
mkfifo "$tmp/fifo"
refused "a FIFO" "is a FIFO, not a regular file" "$tmp/fifo"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
# The other commands whose -o comes after work (discovery, a sampling interval) check first too.
for cmd in topo counters; do
    timeout 20 "$bin" $cmd -o "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 73 ] && grep -q "is a FIFO" "$tmp/err" && [ -p "$tmp/fifo" ] &&
        [ ! -s "$tmp/out" ]; then
        ok "fabtop $cmd -o FIFO refused"
    else
        fail "fabtop $cmd -o FIFO: status $rc, $(cat "$tmp/err")"
    fi
done
refused "a missing directory" "$tmp/no/such: no such directory" "$tmp/no/such/r.json"
mkdir "$tmp/adir"
refused "a directory" "$tmp/adir: is a directory" "$tmp/adir"
refused "a trailing slash" "names a directory" "$tmp/adir/"
[ -z "$(ls -A "$tmp/adir")" ] || fail "something was left in $tmp/adir: $(ls -A "$tmp/adir")"

# valid FILE: a results document.
valid() {
    jq -e '.format == "fabtop-results" and (.phases | length) > 0' "$1" >/dev/null 2>&1
}

# A symlink is written through; the link stays a link.
mkdir "$tmp/real"
echo old >"$tmp/real/target.json"
ln -s real/target.json "$tmp/link.json"
if "$bin" run --mix "$tmp/mix1.json" -o "$tmp/link.json" >"$tmp/out" 2>"$tmp/err" &&
    [ -L "$tmp/link.json" ] && valid "$tmp/real/target.json"; then
    ok "a symlink is written through to its target"
else
    fail "symlink: link=$( [ -L "$tmp/link.json" ] && echo kept || echo replaced), $(cat "$tmp/err")"
fi

# Modes: an existing file keeps its own; a new one gets 0666 & ~umask.
echo old >"$tmp/secret.json"
chmod 600 "$tmp/secret.json"
"$bin" run --mix "$tmp/mix1.json" -o "$tmp/secret.json" >/dev/null 2>"$tmp/err" ||
    fail "run -o secret.json: $(cat "$tmp/err")"
m=$(stat -c %a "$tmp/secret.json")
if [ "$m" = 600 ] && valid "$tmp/secret.json"; then ok "an existing 0600 file stays 0600"; else
    fail "an existing 0600 file became $m"; fi
(umask 027 && "$bin" run --mix "$tmp/mix1.json" -o "$tmp/new.json" >/dev/null 2>"$tmp/err") ||
    fail "run -o new.json: $(cat "$tmp/err")"
m=$(stat -c %a "$tmp/new.json")
if [ "$m" = 640 ]; then ok "a new file under umask 027 is 0640"; else
    fail "a new file under umask 027 is $m (want 640)"; fi
ls -A "$tmp" "$tmp/real" | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls -A "$tmp")"

# A full file system: the check passes (there is room for a file), the results do not fit.
if [ "$(id -u)" = 0 ] && mkdir "$tmp/full" && mount -t tmpfs -o size=64k fabtop-test "$tmp/full" 2>/dev/null; then
    mnt=$tmp/full
    # Leave about 16 KiB: less than the results (some 40 KiB), more than nothing.
    dd if=/dev/zero of="$mnt/filler" bs=1024 count=48 2>/dev/null
    mkdir "$tmp/cwd" "$tmp/tmpdir"
    (cd "$tmp/cwd" && TMPDIR=$tmp/tmpdir "$bin" run --mix "$tmp/mix1.json" -o "$mnt/r.json" \
        >"$tmp/out" 2>"$tmp/err")
    rc=$?
    set -- "$tmp"/cwd/fabtop-results-*.json
    if [ "$rc" -eq 73 ] && [ -f "$1" ] && valid "$1" && grep -qF "$1" "$tmp/err" &&
        grep -q "No space left on device" "$tmp/err" && [ ! -e "$mnt/r.json" ] &&
        ! ls -A "$mnt" | grep -q '\.tmp\.'; then
        ok "a full file system: status 73, the results saved to $(basename "$1"): $(tr '\n' ' ' <"$tmp/err")"
    else
        fail "full file system: status $rc (want 73), fallback '$1', stderr: $(cat "$tmp/err")"
    fi
    # The same when the current directory cannot take it either: $TMPDIR.
    rm -f "$tmp"/cwd/fabtop-results-*.json
    (cd "$mnt" && TMPDIR=$tmp/tmpdir "$bin" run --mix "$tmp/mix1.json" -o "$mnt/r.json" \
        >"$tmp/out" 2>"$tmp/err")
    rc=$?
    set -- "$tmp"/tmpdir/fabtop-results-*.json
    if [ "$rc" -eq 73 ] && [ -f "$1" ] && valid "$1" && grep -qF "$1" "$tmp/err"; then
        ok "a full current directory too: the results saved in \$TMPDIR"
    else
        fail "fallback to \$TMPDIR: status $rc, '$1', stderr: $(cat "$tmp/err")"
    fi
    umount "$mnt" && mnt=""
else
    echo "not root or no tmpfs: the full file system case is skipped"
fi

# Signals: partial results saved, then death by the signal.
for sig in INT TERM; do
    want=$([ $sig = INT ] && echo 130 || echo 143)
    rm -f "$tmp/sig.json"
    "$bin" run --mix "$tmp/mix60.json" -o "$tmp/sig.json" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    sleep 2
    kill -s $sig "$pid"
    wait "$pid"
    rc=$?
    pid=""
    if [ "$rc" -eq "$want" ] && jq -e '.interrupted == true
        and (.phases[0].flows[0].points[0].ops > 0)' "$tmp/sig.json" >/dev/null 2>&1; then
        ok "SIG$sig: partial results saved, status $rc"
    else
        fail "SIG$sig: status $rc (want $want), results: $(jq -c '{interrupted}' "$tmp/sig.json" 2>&1), stderr: $(cat "$tmp/err")"
    fi
done

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "PASS: output_cli"
