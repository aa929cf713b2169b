#!/bin/sh
# start.sh: set up (packages, build) and run fabtop's main job on this node. With no
# arguments it shows this node's topology, affinity matrix and bring-up lint; any
# arguments are passed to fabtop (e.g. scripts/start.sh topo --json).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/deps.sh"
# shellcheck disable=SC2086
fabtop_install $FABTOP_BUILD_DEPS
build=${FABTOP_BUILD_DIR:-$here/build}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
if [ $# -gt 0 ]; then
    exec "$build/tui/fabtop" "$@"
fi
"$build/tui/fabtop" topo
echo
"$build/tui/fabtop" topo --matrix --lint | sed -n '/^ *GPU0\|^        GPU\|^        NIC\|^Nearest\|^Lint/,$p'
