#!/bin/bash
# device_run: issue 7's GPU runs, for a machine with 1-2 NVIDIA H200 (device kind
# nvidia-h200-x2): the topology; NCCL all_reduce 8 B..1 GiB over NVLink, then over the socket
# transport (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1); correctness checks of every collective;
# decode sizes with and without CUDA graphs; a 64 KiB all_reduce alone and next to host<->GPU
# copies (pinned and pageable); PyTorch's all_reduce on the same sizes; fabtop on PyTorch's
# libnccl; and a rank killed mid-run (peer agent in a second process), over P2P and sockets.
# It runs the fabtop that tests/gpu/pack_carry.sh put in .carry/ (nothing is built or
# installed), bounds every step with `timeout` (the whole run stays under 8 minutes), needs
# only bash, coreutils and python3, and writes at most 9 files to $OUT:
#   device_run.log topo.json nvlink.json socket.json socket_blocking.json contention.json
#   kill.json torch.json summary.json
# With one GPU it runs what one GPU can (topology, copies); without a GPU it exits 77.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:?OUT must name the folder for the results}
mkdir -p "$OUT"
BIN=${FABTOP_DEVICE_BIN:-$ROOT/.carry/fabtop}
BUDGET=${FABTOP_DEVICE_BUDGET:-450} # seconds for all steps; the summary comes after
LOG=$OUT/device_run.log
WORK=$(mktemp -d /tmp/fabtop-device.XXXXXX)
MIXES=$ROOT/engine/mixes
T0=$(date +%s)
: >"$LOG"
: >"$WORK/status.txt"

# The GPUs of these machines are shared: NVLink multicast stays off (KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$ROOT/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1

log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }

# step NAME SECONDS CMD...: run CMD bounded by SECONDS (less when the budget is short), its
# output into the log; records "NAME STATUS SECONDS" in status.txt.
step() {
    local name=$1 secs=$2 l rc t
    shift 2
    l=$(left)
    if [ "$l" -lt 15 ]; then
        log "== $name: skipped, the time budget is spent"
        echo "$name skipped 0" >>"$WORK/status.txt"
        return 124
    fi
    [ "$secs" -gt "$l" ] && secs=$l
    log "== $name (at most ${secs}s): $*"
    t=$(date +%s)
    timeout -k 5 "$secs" "$@" >>"$LOG" 2>&1
    rc=$?
    log "== $name: exit $rc after $(($(date +%s) - t))s"
    echo "$name $rc $(($(date +%s) - t))" >>"$WORK/status.txt"
    return $rc
}

finish() {
    local rc=$1
    if command -v python3 >/dev/null 2>&1; then
        timeout 60 python3 "$ROOT/tests/gpu/device_summary.py" --out "$OUT" --work "$WORK" \
            --summary "$OUT/summary.json" 2>&1 | tee -a "$LOG"
    fi
    log "files in \$OUT: $(cd "$OUT" && ls | tr '\n' ' ')($(ls "$OUT" | wc -l) of at most 9)"
    log "done in $(($(date +%s) - T0))s, exit $rc"
    rm -rf "$WORK"
    exit "$rc"
}

# ---- what is here ----
log "device_run on $(uname -n), $(uname -r); root $ROOT"
NGPU=0
if command -v nvidia-smi >/dev/null 2>&1; then
    NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    nvidia-smi -L >>"$LOG" 2>&1
fi
if [ "$NGPU" -lt 1 ]; then
    log "no GPU here (nvidia-smi lists none): nothing to run; skipped"
    rm -rf "$WORK"
    exit 77
fi
if [ ! -x "$BIN" ]; then
    log "$BIN is missing: run tests/gpu/pack_carry.sh on the build machine and carry .carry"
    rm -rf "$WORK"
    exit 66
fi
if ldd "$BIN" | grep -q "not found"; then
    log "$BIN has unresolved libraries (carry them: CARRY_LIBS=... tests/gpu/pack_carry.sh):"
    ldd "$BIN" | grep "not found" | tee -a "$LOG"
    rm -rf "$WORK"
    exit 69
fi
log "$NGPU GPU(s); fabtop $("$BIN" --version 2>&1 | head -1)"
cat "$ROOT/.carry/MANIFEST" >>"$LOG" 2>/dev/null
timeout 20 nvidia-smi topo -m >>"$LOG" 2>&1

# Libraries: the CUDA runtime and the system libnccl fabtop finds by itself when the loader
# knows them; otherwise the ones PyTorch's wheels ship. TORCH_NCCL: PyTorch's own libnccl.
pylib() {
    timeout 60 python3 - "$1" <<'EOF' 2>/dev/null
import glob, os, sys
want = sys.argv[1]
found = []
for mod in ("nvidia.nccl", "nvidia.cuda_runtime", "nvidia.cu13", "nvidia"):
    try:
        m = __import__(mod, fromlist=["x"])
        for d in getattr(m, "__path__", []):
            found += glob.glob(os.path.join(d, "**", want), recursive=True)
    except Exception:
        pass
try:
    import torch
    found += glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", want))
except Exception:
    pass
print(sorted(set(found))[0] if found else "")
EOF
}
syslib() {
    ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n {print $NF; exit}'
}
CUDART=$(syslib libcudart.so.13)
[ -z "$CUDART" ] && CUDART=$(ls /usr/local/cuda/lib64/libcudart.so.13 2>/dev/null)
if [ -z "$CUDART" ]; then
    CUDART=$(pylib 'libcudart.so.13*')
    [ -n "$CUDART" ] && export FABTOP_CUDART=$CUDART
fi
TORCH_NCCL=$(pylib 'libnccl.so.2*')
SYS_NCCL=$(syslib libnccl.so.2)
[ -z "$SYS_NCCL" ] && SYS_NCCL=$(ls /usr/local/cuda/lib64/libnccl.so.2 2>/dev/null)
if [ -z "$SYS_NCCL" ] && [ -n "$TORCH_NCCL" ]; then
    export FABTOP_NCCL=$TORCH_NCCL
    SYS_NCCL="(none; PyTorch's $TORCH_NCCL)"
fi
log "CUDA runtime: ${CUDART:-not found}; NCCL: ${SYS_NCCL:-not found}; PyTorch's NCCL: ${TORCH_NCCL:-not found}"
python3 - "$WORK/info.json" "$NGPU" "${CUDART:-}" "${SYS_NCCL:-}" "${TORCH_NCCL:-}" <<'EOF' 2>/dev/null
import json, subprocess, sys
out, ngpu, cudart, nccl, tnccl = sys.argv[1:6]
def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        return str(e)
json.dump({"host": sh("uname -n"), "kernel": sh("uname -r"), "gpus": int(ngpu),
           "nvidia_smi": sh("nvidia-smi -L").splitlines(),
           "driver": sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1"),
           "cuda_runtime": cudart, "nccl": nccl, "torch_nccl": tnccl,
           "topo_m": sh("nvidia-smi topo -m").splitlines()}, open(out, "w"), indent=1)
EOF

# ---- topology ----
step topo 30 "$BIN" topo -o "$OUT/topo.json"
step topo_matrix 30 "$BIN" topo --matrix

# mix NAME SIZE-JSON DURATION PARAMS-JSON [EXTRA-FLOW-FIELDS]: a one-flow collective mix file.
mix() {
    cat >"$WORK/$1.json" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "$1",
 "description": "device_run: $1", "fail_bound_s": 5, "progress_deadline_s": 5,
 "flows": [{"name": "$1", "role": "foreground", "transport": "nccl", "op": "collective",
   "size": $2, "warmup_s": 0.1, "duration_s": $3, "params": $4 ${5:-}}]}
EOF
    echo "$WORK/$1.json"
}
SWEEP='{"sweep": {"from": 8, "to": "1GiB", "factor": 2}}'

if [ "$NGPU" -lt 2 ]; then
    log "one GPU: collectives need two; running the copies alone"
    cat >"$WORK/copies.json" <<'EOF'
{"format": "fabtop-mix", "version": 1, "name": "copies", "description": "copies on one GPU",
 "phases": ["loaded"],
 "flows": [
  {"name": "h2d", "role": "foreground", "transport": "nccl", "op": "copy", "size": "64MiB",
   "warmup_s": 0.2, "duration_s": 3, "params": {"copy": "h2d", "gpus": [0]}},
  {"name": "d2h", "role": "background", "transport": "nccl", "op": "copy", "size": "64MiB",
   "warmup_s": 0.2, "params": {"copy": "d2h", "gpus": [0]}}]}
EOF
    step copies 60 "$BIN" run --mix "$WORK/copies.json" -o "$OUT/contention.json"
    log "skipped with one GPU: NCCL sweeps, checks, contention with a collective, PyTorch, kill"
    finish 0
fi

# ---- NCCL all_reduce over NVLink (or whatever NCCL picks between the two GPUs) ----
step nvlink_sweep 150 "$BIN" run --mix "$(mix nvlink "$SWEEP" 0.4 \
    '{"collective": "all_reduce", "dtype": "float", "gpus": [0, 1]}')" -o "$OUT/nvlink.json"

# ---- the same over NCCL's socket transport (loopback) ----
step socket_sweep 170 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 "$BIN" run --mix \
    "$(mix socket "$SWEEP" 1.0 '{"collective": "all_reduce", "dtype": "float", "gpus": [0, 1]}')" \
    -o "$OUT/socket.json"

# ---- the same with blocking communicators (as nccl-tests uses): what non-blocking costs ----
step socket_sweep_blocking 170 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 "$BIN" run --mix \
    "$(mix socket_blocking "$SWEEP" 1.0 \
        '{"collective": "all_reduce", "dtype": "float", "gpus": [0, 1], "blocking": true}')" \
    -o "$OUT/socket_blocking.json"

# ---- contention: 64 KiB all_reduce alone, then with H2D and D2H copies (pinned, pageable) ----
contention_mix() {
    cat >"$WORK/$1.json" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "$1", "description": "device_run: $1",
 "phases": ["quiet", "loaded"], "fail_bound_s": 5, "progress_deadline_s": 5,
 "flows": [
  {"name": "ar64k", "role": "foreground", "transport": "nccl", "op": "collective",
   "size": "64KiB", "warmup_s": 0.3, "duration_s": 3,
   "params": {"collective": "all_reduce", "dtype": "float", "gpus": [0, 1]}},
  {"name": "h2d", "role": "background", "transport": "nccl", "op": "copy", "size": "64MiB",
   "warmup_s": 0.2, "params": {"copy": "h2d", "pinned": $2, "gpus": [0, 1]}},
  {"name": "d2h", "role": "background", "transport": "nccl", "op": "copy", "size": "64MiB",
   "warmup_s": 0.2, "params": {"copy": "d2h", "pinned": $2, "gpus": [0, 1]}}]}
EOF
    echo "$WORK/$1.json"
}
step contention 60 "$BIN" run --mix "$(contention_mix contention true)" -o "$OUT/contention.json"
step contention_pageable 60 "$BIN" run --mix "$(contention_mix contention_pageable false)" \
    -o "$WORK/contention_pageable.json"

# ---- PyTorch's all_reduce on the same sizes, and fabtop on PyTorch's libnccl ----
if python3 -c 'import torch' 2>/dev/null; then
    step torch 180 python3 "$ROOT/tests/gpu/torch_allreduce.py" --out "$OUT/torch.json" \
        --min 8 --max 1G --gpus 2
else
    log "python3 has no torch: PyTorch comparison skipped"
fi
if [ -n "$TORCH_NCCL" ]; then
    step nvlink_torch_nccl 150 "$BIN" run --mix "$WORK/nvlink.json" --nccl "$TORCH_NCCL" \
        -o "$WORK/nvlink_torchnccl.json"
fi

# ---- the kill-one-rank timeout: rank 1 lives in a `fabtop serve` process, killed mid-run ----
kill_demo() { # NAME PORT [env assignments...]
    local name=$1 port=$2 spid rpid t_kill t_end
    shift 2
    "$BIN" serve --gen-key "$WORK/key.$name" >/dev/null 2>&1
    cat >"$WORK/$name.mix.json" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "$name",
 "description": "device_run: rank 1 in a second process, killed", "fail_bound_s": 2,
 "progress_deadline_s": 2,
 "flows": [{"name": "ar64k", "role": "foreground", "transport": "nccl", "op": "collective",
   "size": "64KiB", "warmup_s": 0.2, "duration_s": 30, "peer": "127.0.0.1:$port",
   "params": {"collective": "all_reduce", "dtype": "float", "gpus": [0], "peer_gpus": [1]}}]}
EOF
    env "$@" "$BIN" serve --listen "127.0.0.1:$port" --key-file "$WORK/key.$name" \
        --allow-nccl --max-duration 120 --log "$WORK/serve.$name.log" >>"$LOG" 2>&1 &
    spid=$!
    sleep 1
    local dest=$WORK/$name.json
    [ "$name" = kill ] && dest=$OUT/kill.json
    env "$@" timeout -k 5 90 "$BIN" run --mix "$WORK/$name.mix.json" --key-file \
        "$WORK/key.$name" -o "$dest" >>"$LOG" 2>&1 &
    rpid=$!
    for _ in $(seq 1 60); do # until the peer's rank joined, at most 30 s
        grep -q "joined" "$WORK/serve.$name.log" 2>/dev/null && break
        kill -0 "$rpid" 2>/dev/null || break
        sleep 0.5
    done
    sleep 3 # measuring
    t_kill=$(date +%s.%N)
    kill -9 "$spid" 2>/dev/null
    log "$name: killed the peer agent (pid $spid, rank 1 on GPU 1)"
    wait "$rpid"
    local rc=$?
    t_end=$(date +%s.%N)
    wait "$spid" 2>/dev/null
    cat "$WORK/serve.$name.log" >>"$LOG" 2>/dev/null
    {
        echo "run_exit=$rc"
        echo "kill_to_exit_s=$(echo "$t_end $t_kill" | awk '{printf "%.3f", $1 - $2}')"
        echo "env=$*"
    } >"$WORK/$name.meta"
    log "$name: fabtop run exit $rc (2 = the flow failed, as it must), $(cat "$WORK/$name.meta" | tr '\n' ' ')"
    echo "$name $rc 0" >>"$WORK/status.txt"
}
if [ "$(left)" -gt 60 ]; then
    kill_demo kill 7481
fi
if [ "$(left)" -gt 60 ]; then
    kill_demo kill_socket 7482 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
fi

# ---- correctness of every collective, and decode sizes with and without graphs ----
for c in all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv; do
    case $c in
    all_reduce) p='"dtype": "bfloat16", "redop": "sum"' ;;
    reduce_scatter) p='"dtype": "half", "redop": "max"' ;;
    reduce) p='"dtype": "int32", "redop": "prod", "root": 1' ;;
    broadcast) p='"dtype": "double", "root": 1' ;;
    *) p='"dtype": "float"' ;;
    esac
    step "check_$c" 40 "$BIN" run --mix "$(mix "check_$c" \
        '{"sweep": {"from": 4096, "to": "4MiB", "factor": 32}}' 0.1 \
        "{\"collective\": \"$c\", $p, \"gpus\": [0, 1], \"check\": true}")" \
        -o "$WORK/check_$c.json"
done
step decode_graph 60 "$BIN" run --mix "$MIXES/nccl-decode.json" --duration 0.3 \
    -o "$WORK/decode.json"
step decode_nograph 60 "$BIN" run --mix "$(mix decode_nograph \
    '{"sweep": {"from": "16KiB", "to": "2MiB", "factor": 2}}' 0.3 \
    '{"collective": "all_reduce", "dtype": "bfloat16", "gpus": "all", "graph": false}')" \
    -o "$WORK/decode_nograph.json"

finish 0
