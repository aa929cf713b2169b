#!/bin/sh
# nccl_unavailable: without a usable CUDA runtime, NCCL or GPU the nccl transport is
# unavailable with its reason and `fabtop run` exits 69 naming it; --nccl PATH and
# FABTOP_CUDART name the exact library tried; every other transport still works.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    sed 's/^/    /' "$tmp/err"
    fails=$((fails + 1))
}

# run_expect STATUS NEEDLE... -- ARGS: fabtop run ARGS exits STATUS with every NEEDLE on stderr.
run_expect() {
    want=$1
    shift
    needles=""
    while [ "$1" != "--" ]; do
        needles="$needles
$1"
        shift
    done
    shift
    "$bin" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    ok=1
    [ "$got" -eq "$want" ] || ok=0
    echo "$needles" | while IFS= read -r n; do
        [ -z "$n" ] || grep -qF -- "$n" "$tmp/err" || echo miss >"$tmp/miss"
    done
    [ -e "$tmp/miss" ] && ok=0
    rm -f "$tmp/miss"
    if [ $ok -eq 1 ]; then
        echo "PASS: fabtop run $* -> $got: $(head -1 "$tmp/err")"
    else
        fail "fabtop run $* -> $got (want $want)"
    fi
}

# 1. A CUDA runtime that is not there: the reason names it and how to point elsewhere.
FABTOP_CUDART=/nonexistent/libcudart.so.13 run_expect 69 \
    "transport nccl is unavailable here: CUDA runtime not found" \
    "/nonexistent/libcudart.so.13" "FABTOP_CUDART" -- --mix nccl-decode

# 2. --nccl PATH is the only NCCL tried (when a CUDA runtime loads here at all).
run_expect 69 "transport nccl is unavailable here" -- --mix nccl-decode \
    --nccl /nonexistent/libnccl.so.2
if grep -q "CUDA runtime not found" "$tmp/err"; then
    echo "SKIP: no CUDA runtime on this machine, so NCCL is never reached"
elif ! grep -qF "NCCL not found (/nonexistent/libnccl.so.2" "$tmp/err"; then
    fail "--nccl /nonexistent/libnccl.so.2 is not named"
else
    echo "PASS: --nccl names the library it tried"
fi

# 3. As this machine is: unavailable unless it has a GPU.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SKIP: this machine has a GPU (gpu_nccl_live covers it)"
else
    run_expect 69 "transport nccl is unavailable here:" -- --mix nccl-contention
fi

# 4. Usage.
run_expect 64 "--nccl" -- --mix nccl-decode --nccl
"$bin" run --help >"$tmp/out" 2>"$tmp/err"
grep -q -- "--nccl PATH" "$tmp/out" && echo "PASS: --help documents --nccl" ||
    fail "--help lacks --nccl"
"$bin" run --list >"$tmp/out" 2>"$tmp/err"
for m in nccl-decode nccl-prefill nccl-contention; do
    grep -q "^$m " "$tmp/out" && echo "PASS: preset $m is listed" || fail "preset $m not listed"
done

# 5. Everything else works with NCCL unavailable: a TCP ping-pong over the loopback agent.
FABTOP_CUDART=/nonexistent/libcudart.so.13 "$bin" run --mix tp-decode --size 16KiB \
    --duration 0.3 >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if [ $rc -eq 0 ] && grep -q "tp-sync" "$tmp/out"; then
    echo "PASS: tcp still runs without CUDA"
else
    fail "tp-decode over tcp -> $rc"
fi

[ $fails -eq 0 ] || exit 1
