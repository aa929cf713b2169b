#!/bin/bash
# socket_modes: NCCL's socket transport (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1) at 64 KiB and
# 256 MiB all_reduce over two GPUs, with fabtop's communicator mode (params.blocking) and timing
# gate (FABTOP_NCCL_GATE=0) varied, to see what each costs against nccl-tests' figures. For the
# device machines: bash tests/gpu/socket_modes.sh (after tests/gpu/pack_carry.sh).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/.carry/fabtop
export LD_LIBRARY_PATH=$ROOT/.carry/lib NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for blocking in false true; do
    cat >"$tmp/$blocking.json" <<J
{"format": "fabtop-mix", "version": 1, "name": "socket-modes", "fail_bound_s": 5,
 "flows": [{"name": "ar", "transport": "nccl", "op": "collective",
   "size": {"sweep": {"from": "64KiB", "to": "256MiB", "factor": 4096}}, "warmup_s": 0.2,
   "duration_s": 1.5, "params": {"collective": "all_reduce", "dtype": "float", "gpus": [0, 1],
   "blocking": $blocking}}]}
J
    for gate in 1 0; do
        FABTOP_NCCL_GATE=$gate NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 60 "$BIN" run \
            --mix "$tmp/$blocking.json" -o "$tmp/out.json" >/dev/null 2>&1
        python3 - "blocking=$blocking gate=$gate" "$tmp/out.json" <<'P'
import json, sys
f = json.load(open(sys.argv[2]))["phases"][0]["flows"][0]
for p in f["points"]:
    n = p["nccl"]; h = n["host_timed"] or {}; e = n["per_iteration"] or {}
    print("%-24s %10d  host %9.1f us  busbw %6.3f GB/s  it p50 %9.1f us  enqueue %s us  %s/%s" %
          (sys.argv[1], p["size_bytes"], h.get("time_us", 0), h.get("busbw_GBps", 0),
           e.get("p50_us", 0), n.get("enqueue_us_per_op"), n["algo"], n["proto"]))
P
    done
done
