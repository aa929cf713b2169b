#!/bin/sh
# test.sh: set up (packages, build with warnings as errors) and run every test with ctest,
# then the same unit tests again in an ASan+UBSan build, then a clang libFuzzer build whose
# targets replay their corpora and fuzz for FABTOP_FUZZ_TIME seconds each (tests/fuzz). Tests
# that need what this machine lacks (a GPU, the shared reference data, root for network
# namespaces) report "skipped".
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/deps.sh"
# shellcheck disable=SC2086
fabtop_install $FABTOP_BUILD_DEPS $FABTOP_TEST_DEPS
jobs=$(nproc)
build=${FABTOP_BUILD_DIR:-$here/build}

cmake -S "$here" -B "$build" -DFABTOP_WERROR=ON -DFABTOP_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"
(cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 900)

if [ "${FABTOP_SKIP_SANITIZE:-0}" != 1 ]; then
    echo "== ASan+UBSan build: the same tests except the VM ones"
    cmake -S "$here" -B "$build-asan" -DFABTOP_WERROR=ON -DFABTOP_TESTS=ON -DFABTOP_SANITIZE=ON \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build "$build-asan" -j"$jobs"
    # tests/lsan.supp: what libraries outside fabtop keep on purpose (fontconfig's cache).
    (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=1 \
        LSAN_OPTIONS="suppressions=$here/tests/lsan.supp:print_suppressions=0" \
        ctest --output-on-failure -j"$jobs" \
        -LE "vm|slow" --timeout 900)
fi
if [ "${FABTOP_SKIP_FUZZ:-0}" != 1 ]; then
    echo "== clang libFuzzer build: each target's corpus replayed, then fuzzed briefly"
    CC=clang cmake -S "$here" -B "$build-fuzz" -DFABTOP_FUZZ=ON -DFABTOP_TESTS=OFF \
        -DFABTOP_FUZZ_TIME="${FABTOP_FUZZ_TIME:-20}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build-fuzz" -j"$jobs"
    (cd "$build-fuzz" && ctest --output-on-failure -j"$jobs" -L fuzz --timeout 900)
fi
echo "fabtop: all tests done"
