#!/bin/sh
# start.sh: set up (packages, build) and run fabtop's main job on this node. With no
# arguments at a terminal it opens the explorer (topology, setup, live run, results, help);
# with no terminal it prints the topology, the affinity matrix and the bring-up lint, then
# runs a short loopback TCP test (quiet vs loaded) and prints its summary. Any arguments are
# passed to fabtop (e.g. scripts/start.sh topo --json, scripts/start.sh run --mix incast).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/deps.sh"
# shellcheck disable=SC2086
fabtop_install $FABTOP_BUILD_DEPS
build=${FABTOP_BUILD_DIR:-$here/build}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
if [ $# -gt 0 ]; then
    exec "$build/bin/fabtop" "$@"
fi
if [ -t 0 ] && [ -t 1 ]; then
    exec "$build/bin/fabtop"
fi
"$build/bin/fabtop" topo
echo
"$build/bin/fabtop" topo --matrix --lint | sed -n '/^ *GPU0\|^        GPU\|^        NIC\|^Nearest\|^Lint/,$p' || true
echo
# A loopback test needs no RDMA and no GPU: a ping-pong alone, then beside two streams.
"$build/bin/fabtop" run --mix quiet-vs-loaded --duration 2
