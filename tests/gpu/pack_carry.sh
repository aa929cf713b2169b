#!/bin/sh
# pack_carry: put an already-built fabtop and the shared libraries the GPU machines may lack
# into .carry/ (git-ignored) for the device tool's `carry`. The device machines (Ubuntu 24.04)
# have ncursesw, libibverbs and librdmacm at run time (their verbs providers must stay the
# system's) but no libcjson or libsodium, and maybe not the InfiniBand management libraries
# (libibnetdisc, libibmad, libibumad), hwloc or libmicrohttpd: those come along (libc and
# libudev only, libmicrohttpd GnuTLS too, which Ubuntu has), and cairo for the report's
# images with the font and X libraries it loads (a server image has none of them: the
# 2026-12-07 device said "libcairo.so.2: cannot open shared object file"); everything else is listed in .carry/MANIFEST and tests/gpu/device_run.sh checks
# that it resolves there. Usage: tests/gpu/pack_carry.sh [BUILD_DIR]   (default: build;
# CARRY_DIR overrides the destination, CARRY_LIBS adds soname prefixes).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
dest=${CARRY_DIR:-$root/.carry}
bin=$build/bin/fabtop
if [ ! -x "$bin" ]; then
    echo "pack_carry: $bin is not built: cmake -S $root -B $build && cmake --build $build" >&2
    exit 66
fi
if ldd "$bin" | grep -q "not found"; then
    echo "pack_carry: $bin has unresolved libraries here:" >&2
    ldd "$bin" | grep "not found" >&2
    exit 69
fi
rm -rf "$dest"
mkdir -p "$dest/lib"
cp "$bin" "$dest/fabtop"
# Libraries to carry: by soname prefix (CARRY_LIBS adds more, space-separated prefixes).
want="libcjson libsodium libibnetdisc libibmad libibumad libhwloc libmicrohttpd libcairo libpixman libfontconfig libfreetype libpng16 libxcb libX libbrotli ${CARRY_LIBS:-}"
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    for w in $want; do
        case "$name" in
        "$w"*) cp -L "$path" "$dest/lib/$name" ;;
        esac
    done
done
{
    echo "fabtop: $("$dest/fabtop" --version 2>&1 | head -1)"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(ldd --version 2>&1 | head -1)"
    echo "carried: $(cd "$dest/lib" && ls | tr '\n' ' ')"
    echo "needed:"
    ldd "$bin" | awk '{print "  " $1}'
} >"$dest/MANIFEST"
n=$(ls "$dest/lib" | wc -l)
if [ "$n" -lt 2 ]; then
    echo "pack_carry: expected libcjson and libsodium in $dest/lib, found: $(ls "$dest/lib")" >&2
    exit 70
fi
du -sh "$dest" | awk '{print "pack_carry: " $2 " holds " $1}'
cat "$dest/MANIFEST"
