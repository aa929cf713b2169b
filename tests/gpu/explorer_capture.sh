#!/bin/bash
# explorer_capture: the explorer on a GPU machine (device kind nvidia-h200-x2), in a private
# tmux server, read back with capture-pane: the topology view and the affinity matrix of
# the live node at 132x43 and 80x24, then `fabtop --run nccl-contention` (a 64 KiB
# all_reduce alone, then beside host<->GPU copies) watched live in F4 until it finishes, and
# saved with w. Runs the fabtop that tests/gpu/pack_carry.sh put in .carry/; writes the
# screens and a log to $OUT (at most 8 files). Exits 77 without tmux or a GPU.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:?OUT must name the folder for the results}
BIN=${FABTOP_DEVICE_BIN:-$ROOT/.carry/fabtop}
export LD_LIBRARY_PATH=$ROOT/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 # the GPUs of these machines are shared (KINDS.md)
command -v tmux >/dev/null || { echo "SKIP: no tmux"; exit 77; }
# MIX (default: the NCCL contention preset) and NO_GPU_CHECK=1 let the script itself be tried
# on a machine without a GPU with a TCP mix.
MIX=${MIX:-$ROOT/engine/mixes/nccl-contention.json}
if [ "${NO_GPU_CHECK:-0}" != 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no GPU"
    exit 77
fi
mkdir -p "$OUT"
LOG=$OUT/explorer.log
WORK=$(mktemp -d /tmp/fabtop-explorer.XXXXXX)
export HOME=$WORK XDG_CONFIG_HOME=$WORK/xdg XDG_DATA_HOME=$WORK/data
SOCK=fabtop-dev-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$WORK"' EXIT
fails=0

# start NAME COLS ROWS ARGS...: fabtop in a new session of that size.
start() {
    local name=$1 cols=$2 rows=$3
    shift 3
    printf '%q ' "$BIN" "$@" >"$WORK/run.$name.sh"
    echo "2>$WORK/err.$name; echo \"fabtop exited \$?\"; exec cat" >>"$WORK/run.$name.sh"
    tm new-session -d -s "$name" -x "$cols" -y "$rows" -c "$WORK" -e TERM=tmux-256color \
        -e LANG=C.UTF-8 -e LC_ALL=C.UTF-8 "bash $WORK/run.$name.sh"
}
# wait_for NAME TEXT SECONDS: poll the screen every 0.1 s until it shows TEXT.
wait_for() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        tm capture-pane -p -t "$1" | grep -qF -- "$2" && return 0
        sleep 0.1
    done
    echo "FAIL: '$2' not on $1's screen after $3 s" | tee -a "$LOG"
    tm capture-pane -p -t "$1" >>"$LOG"
    fails=$((fails + 1))
    return 1
}
grab() { tm capture-pane -p -t "$1" >"$OUT/$2.txt"; echo "captured $2" | tee -a "$LOG"; }

{
    echo "explorer_capture on $(hostname), $(date -u +%FT%TZ)"
    nvidia-smi -L 2>&1
    "$BIN" --version
    # What the NUMA node's memory in the topology view should read.
    grep -H MemTotal /proc/meminfo /sys/devices/system/node/node*/meminfo 2>&1
} >"$LOG" 2>&1

# Topology and matrix of the live node.
start topo 132 43
wait_for topo "F3 Topology" 20 && wait_for topo "GPU0" 10 && grab topo topo-132x43
tm send-keys -t topo m
wait_for topo "GPU1" 5 && grab topo matrix-132x43
tm resize-window -t topo -x 80 -y 24 2>/dev/null || tm resize-pane -t topo -x 80 -y 24
tm send-keys -t topo m
sleep 0.5
grab topo topo-80x24
tm send-keys -t topo q
wait_for topo "fabtop exited 0" 10

# The NCCL contention mix, live, then finished and saved.
start run 132 43 --run "$MIX"
if wait_for run "loaded: measuring" 60 && wait_for run "p99" 30; then
    sleep 1.5
    grab run live-loaded-132x43
fi
if wait_for run "test finished" 60; then
    tm send-keys -t run w
    wait_for run "Results saved to" 10
    grab run live-done-132x43
fi
tm send-keys -t run q
wait_for run "fabtop exited 0" 15
for f in "$WORK"/err.*; do [ -s "$f" ] && sed "s|^|$(basename "$f"): |" "$f" >>"$LOG"; done
ls "$WORK"/data/fabtop/results/ >>"$LOG" 2>&1
echo "failures: $fails" | tee -a "$LOG"
[ "$fails" -eq 0 ]
