#!/bin/sh
# test.sh: set up (packages, build with warnings as errors) and run every test with ctest,
# then the same unit tests again in an ASan+UBSan build. Tests that need what this machine
# lacks (a GPU, the shared reference data, root for network namespaces) report "skipped".
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
    (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" \
        -LE "vm|slow" --timeout 900)
fi
echo "fabtop: all tests done"
