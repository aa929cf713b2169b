#!/bin/sh
# nccl_live: on a machine with a GPU, a short NCCL run (2 GPUs: all_reduce with the check and
# graph capture; 1 GPU: host<->device copies) must succeed and report bandwidth. Exits 77
# (skipped) without a GPU; tests/gpu/device_run.sh makes the full runs.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ngpu=0
if command -v nvidia-smi >/dev/null 2>&1; then
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
if [ "$ngpu" -lt 1 ]; then
    echo "no GPU here: skipped"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$ngpu" -ge 2 ]; then
    cat >"$tmp/mix.json" <<'MIX'
{"format": "fabtop-mix", "version": 1, "name": "live", "fail_bound_s": 5, "progress_deadline_s": 5,
 "flows": [{"name": "ar", "transport": "nccl", "op": "collective",
   "size": {"sweep": {"from": "64KiB", "to": "4MiB", "factor": 8}}, "warmup_s": 0.1, "duration_s": 0.3,
   "params": {"collective": "all_reduce", "gpus": [0, 1], "check": true, "graph": true}}]}
MIX
    want='"busbw_GBps"'
else
    cat >"$tmp/mix.json" <<'MIX'
{"format": "fabtop-mix", "version": 1, "name": "live",
 "flows": [{"name": "h2d", "transport": "nccl", "op": "copy", "size": "16MiB", "warmup_s": 0.1,
   "duration_s": 0.5, "params": {"copy": "both", "gpus": [0]}}]}
MIX
    want='"h2d_GBps"'
fi
timeout 100 "$bin" run --mix "$tmp/mix.json" -o "$tmp/res.json"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: fabtop run -> $rc"; exit 1; }
grep -q "$want" "$tmp/res.json" || { echo "FAIL: no $want in the results"; exit 1; }
if grep -q '"wrong":[[:space:]]*[1-9]' "$tmp/res.json"; then
    echo "FAIL: the check found wrong elements"
    exit 1
fi
echo "PASS: live NCCL run on $ngpu GPU(s)"
