#!/bin/sh
# sweep_missing: `fabtop sweep` on a node without fabtop-sweep (neither beside fabtop nor in
# PATH) says in one line which packages to install and exits 69, while every other command
# and --help still work: fabtop itself never links MPI.
set -u
bin=${FABTOP_BIN:?}
tmp=$(mktemp -d /tmp/fabtop-sweepmiss.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

PATH=/usr/bin:/bin command -v fabtop-sweep >/dev/null &&
    { echo "SKIP: a fabtop-sweep is installed in /usr/bin or /bin"; exit 77; }
cp "$bin" "$tmp/fabtop"
if ldd "$tmp/fabtop" | grep -q libmpi; then fail "fabtop links libmpi: $(ldd "$tmp/fabtop" | grep libmpi)"; fi
PATH=/usr/bin:/bin "$tmp/fabtop" sweep --pattern pairs >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 69 ] || { cat "$tmp/err"; fail "fabtop sweep without fabtop-sweep exited $rc, expected 69"; }
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "expected one line on stderr"; }
grep -q "fabtop-sweep is neither beside fabtop nor in PATH.*openmpi-bin and libopenmpi-dev" \
    "$tmp/err" || { cat "$tmp/err"; fail "the line does not name fabtop-sweep and the packages"; }
[ ! -s "$tmp/out" ] || fail "stdout is not empty"
# --help needs no fabtop-sweep (the same option table).
PATH=/usr/bin:/bin "$tmp/fabtop" sweep --help >"$tmp/help" 2>&1 ||
    fail "fabtop sweep --help without fabtop-sweep exited $?"
grep -q -- "--on-failure continue|stop" "$tmp/help" || { cat "$tmp/help"; fail "--help lacks --on-failure"; }
PATH=/usr/bin:/bin "$tmp/fabtop" --help | grep -q "^  sweep " || fail "fabtop --help does not list sweep"
echo "PASS: fabtop sweep without fabtop-sweep: one line naming the packages, exit 69; --help works"
