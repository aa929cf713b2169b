#!/bin/sh
# build_deps_only: the README's main job (scripts/start.sh) configures, builds and runs on a
# machine that holds only the build packages (scripts/deps.sh FABTOP_BUILD_DEPS), as a
# newcomer's fresh Debian machine does. CI's machine has every test package installed, so
# pkg-config is pointed at a directory holding only the .pc files of the build packages and
# of the packages they depend on: a configure step that needs a test package (cmocka) fails
# here. Then start.sh runs without a terminal into a build tree of its own: topology, matrix,
# lint and the 2 s loopback test.
set -u
src=${FABTOP_SRC:?}
command -v dpkg-query >/dev/null || { echo "SKIP: not a Debian system (no dpkg-query)"; exit 77; }
tmp=$(mktemp -d /tmp/fabtop-depsonly.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# shellcheck disable=SC1091
. "$src/scripts/deps.sh"
set +e # deps.sh sets -e; this script checks each status itself
missing=$(fabtop_missing $FABTOP_BUILD_DEPS)
[ -z "$missing" ] || { echo "SKIP: build packages missing here:$missing"; exit 77; }

# The installed dependency closure of the build packages (Depends and Pre-Depends; of an
# alternative, the installed one).
closure() {
    todo="$*" seen=" "
    while [ -n "$todo" ]; do
        set -- $todo
        p=$1
        shift
        todo="$*"
        case "$seen" in *" $p "*) continue ;; esac
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || continue
        seen="$seen$p "
        deps=$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "$p" 2>/dev/null |
            tr ',' '\n' | while read -r alt; do
                for a in $(echo "$alt" | sed 's/([^)]*)//g; s/|/ /g'); do
                    a=${a%%:*}
                    if dpkg-query -W -f='${Status}' "$a" 2>/dev/null | grep -q "install ok installed"; then
                        echo "$a"
                        break
                    fi
                done
            done)
        todo="$todo $deps"
    done
    echo "$seen"
}

pcdir=$tmp/pkgconfig
mkdir -p "$pcdir"
pkgs=$(closure $FABTOP_BUILD_DEPS)
for p in $pkgs; do
    dpkg -L "$p" 2>/dev/null | grep '\.pc$' | while read -r f; do
        [ -f "$f" ] && ln -sf "$f" "$pcdir/$(basename "$f")"
    done
done
echo "build packages and their dependencies: $(echo $pkgs | wc -w) packages, $(ls "$pcdir" | wc -l) .pc files"

# The restriction must bite, or this test proves nothing.
PKG_CONFIG_LIBDIR=$pcdir pkg-config --exists hwloc libcjson ncursesw ||
    fail "the build packages' .pc files are not enough for pkg-config: $(ls "$pcdir")"
if PKG_CONFIG_LIBDIR=$pcdir pkg-config --exists cmocka; then
    fail "cmocka.pc is reachable from the build packages alone; the check would not bite"
fi
if PKG_CONFIG_LIBDIR=/nonexistent pkg-config --exists cmocka 2>/dev/null; then
    fail "pkg-config ignores PKG_CONFIG_LIBDIR; the check would not bite"
fi

PKG_CONFIG_LIBDIR=$pcdir FABTOP_BUILD_DIR=$tmp/build sh "$src/scripts/start.sh" \
    </dev/null >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    tail -30 "$tmp/out"
    fail "scripts/start.sh with only the build packages exited $rc"
fi
[ -x "$tmp/build/bin/fabtop" ] || fail "no fabtop binary in the build tree"
[ ! -f "$tmp/build/tests/CTestTestfile.cmake" ] ||
    fail "the tests were configured although cmocka is absent"
grep -q "Lint" "$tmp/out" || { cat "$tmp/out"; fail "no lint section in the main job's output"; }
grep -qi "quiet" "$tmp/out" || { cat "$tmp/out"; fail "no quiet-vs-loaded summary in the output"; }
echo "PASS: scripts/start.sh configured, built and ran with only the build packages' pkg-config files"
