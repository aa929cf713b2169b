#!/bin/sh
# circles_selftest: circles.sh finds what it is there to find. A small tree of its own, built
# the way CMake lays out objects (BUILD/engine/CMakeFiles/t.dir/NAME.c.o): a.c and b.c call
# each other, c.c only calls a.c, x.h and y.h include each other. circles.sh must fail naming
# both pairs and nothing else; once b.c stops calling a.c and y.h stops including x.h, it must
# pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: no nm (binutils)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
src=$tmp/src
obj=$tmp/build/engine/CMakeFiles/t.dir
mkdir -p "$src/engine" "$obj"
cat >"$src/engine/a.c" <<'C'
int b_work(int);
int a_work(int x) { return x > 0 ? b_work(x - 1) : 0; }
C
cat >"$src/engine/b.c" <<'C'
int a_work(int);
int b_work(int x) { return a_work(x) + 1; }
C
cat >"$src/engine/c.c" <<'C'
int a_work(int);
int c_work(int x) { return a_work(x); }
C
printf '#include "engine/y.h"\n' >"$src/engine/x.h"
printf '#include "engine/x.h"\n' >"$src/engine/y.h"
build() {
    for f in a b c; do
        "$cc" -c -o "$obj/$f.c.o" "$src/engine/$f.c" || { echo "FAIL: cannot compile $f.c"; exit 1; }
    done
}
build
out=$(FABTOP_SRC=$src FABTOP_BUILD=$tmp/build FABTOP_CIRCLES_ALLOWED= sh "$here/circles.sh")
rc=$?
echo "$out"
[ $rc -eq 1 ] || { echo "FAIL: circles.sh exited $rc on a tree with circles (want 1)"; exit 1; }
echo "$out" | grep -q "FAIL: engine/a.c and engine/b.c call each other: engine/a.c -> engine/b.c: b_work; engine/b.c -> engine/a.c: a_work" ||
    { echo "FAIL: the a.c/b.c call circle is not named"; exit 1; }
echo "$out" | grep -q "FAIL: engine/x.h and engine/y.h include each other" ||
    { echo "FAIL: the x.h/y.h include circle is not named"; exit 1; }
[ "$(echo "$out" | grep -c '^FAIL')" -eq 2 ] || { echo "FAIL: more than the two circles reported"; exit 1; }
# Break both: b.c no longer calls a.c, y.h no longer includes x.h.
printf 'int b_work(int x) { return x + 1; }\n' >"$src/engine/b.c"
: >"$src/engine/y.h"
build
out=$(FABTOP_SRC=$src FABTOP_BUILD=$tmp/build FABTOP_CIRCLES_ALLOWED= sh "$here/circles.sh")
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: circles.sh exited $rc once the circles were gone (want 0)"; exit 1; }
echo "PASS: circles.sh names call and include circles, and passes without them"
