#!/bin/sh
# roundtrip: every kind of results document fabtop writes goes through the model and back
# byte for byte (read -> write -> identical): the sim presets (with and without
# --reproducible, saved and printed with --json), loopback TCP presets, a verbs-shaped and
# other hand-made documents of the compare tests (write_doc), nccl runs on the stand-in
# CUDA/NCCL library when it is built (point figures: algbw/busbw; a hung collective: a failed
# flow), the documents committed under bench/ and docs/ (GPU runs recorded on H200s), and
# the documents of the fuzz corpus. Usage: roundtrip.sh ROUNDTRIP WRITE_DOC [FAKE_CUDANCCL]
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
rt=${1:?the roundtrip program}
wd=${2:?the compare tests write_doc program}
fake=${3:-}
src=${FABTOP_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# run NAME ARGS...: a run whose document must be written (any exit status but a crash).
run() {
    name=$1
    shift
    "$bin" run "$@" -o "$tmp/$name.json" >"$tmp/$name.out" 2>&1
    [ -s "$tmp/$name.json" ] || fail "$name: no document ($(tail -2 "$tmp/$name.out"))"
}

for m in $("$bin" run --list | awk '/^sim\// {print $1}'); do
    b=$(echo "$m" | tr / -)
    run "$b-repro" --mix "$m" --reproducible
    run "$b" --mix "$m"
done
"$bin" run --mix sim/baseline --reproducible --json >"$tmp/sim-baseline-stdout.json" 2>/dev/null ||
    fail "sim/baseline --json"
for m in api bidir incast neighbour quiet-vs-loaded tp-decode; do
    run "tcp-$m" --mix "$m" -d 0.2
done
run tcp-qvl-repro --mix quiet-vs-loaded -d 0.2 --reproducible
# The scoreboard (flow classes, --slo, the decode step against its budget).
run tcp-model-score --model Llama-3.1-8B --tp 2 --transport tcp -d 0.2 \
    --slo 'tp:p99<50ms,kv:p99<30ms' --step-budget 25ms
run tcp-model-score-repro --model Llama-3.1-8B --tp 2 --transport tcp -d 0.2 \
    --slo 'tp:p99<50ms' --target-tps 40 --reproducible
grep -q '"scoreboard"' "$tmp/tcp-model-score.json" || fail "tcp-model-score: no scoreboard"
if [ -n "$fake" ] && [ -f "$fake" ]; then
    FABTOP_CUDART="$fake" FABTOP_NCCL="$fake" FAKE_CUDA_DEVICES=2 \
        "$bin" run --mix nccl-decode -d 0.1 -o "$tmp/nccl-decode.json" >"$tmp/nccl.out" 2>&1
    [ -s "$tmp/nccl-decode.json" ] || fail "nccl-decode on the stand-in: no document ($(tail -2 "$tmp/nccl.out"))"
    grep -q busbw_GBps "$tmp/nccl-decode.json" || fail "nccl-decode: no point figures (busbw_GBps)"
    FABTOP_CUDART="$fake" FABTOP_NCCL="$fake" FAKE_CUDA_DEVICES=2 \
        "$bin" run --model Llama-3.1-8B --tp 2 --transport nccl -d 0.1 --slo 'tp:p99<1ms' \
        --step-budget 25ms -o "$tmp/nccl-model-score.json" >"$tmp/nccl-model.out" 2>&1
    grep -q '"scoreboard"' "$tmp/nccl-model-score.json" ||
        fail "nccl model mix on the stand-in: no scoreboard ($(tail -2 "$tmp/nccl-model.out"))"
    # A hung collective: failed, with the time since the last progress.
    printf '%s\n' '{"format": "fabtop-mix", "version": 1, "name": "hang", "fail_bound_s": 1,
 "progress_deadline_s": 1, "flows": [{"name": "ar", "transport": "nccl", "op": "collective",
 "size": "64KiB", "warmup_s": 0.05, "duration_s": 20, "params": {"collective": "all_reduce"}}]}' \
        >"$tmp/hang.mix"
    FABTOP_CUDART="$fake" FABTOP_NCCL="$fake" FAKE_CUDA_DEVICES=2 FAKE_NCCL_HANG_AFTER=300 \
        timeout 60 "$bin" run --mix "$tmp/hang.mix" -o "$tmp/nccl-hang.json" >/dev/null 2>&1
    grep -q '"status":[[:space:]]*"failed"' "$tmp/nccl-hang.json" && grep -q \
        '"detected_after_last_progress_s"' "$tmp/nccl-hang.json" ||
        fail "the hung collective's document has no failed flow with its detection time"
fi
"$wd" "$tmp/doc-default.json" || fail write_doc
"$wd" "$tmp/doc-eth.json" ll=Ethernet mtu=1024 fw=28.39.1002 size=65536 neighbour=1 mix=other ||
    fail write_doc
for f in "$tmp"/*.json; do
    n=$((n + 1))
    "$rt" "$f" || fail "$(basename "$f") does not round-trip"
done
# Documents fabtop wrote on other machines and committed (bench/device: NCCL runs on two
# H200 GPUs): byte for byte as well.
for f in $(find "$src/bench" "$src/docs" -name '*.json' 2>/dev/null); do
    grep -q '"format":[[:space:]]*"fabtop-results"' "$f" || continue
    n=$((n + 1))
    "$rt" "$f" || fail "$f does not round-trip"
done
# The fuzz corpus was re-serialised by another program (shortest number forms): its
# documents must keep everything cJSON reads from them; the huge size is refused.
for f in "$src"/tests/fuzz/corpus/results/*.json; do
    case $f in
    *regress-huge-size*)
        "$rt" "$f" 2>"$tmp/huge.err" && fail "$(basename "$f") was not refused"
        grep -q "size.* is out of range 1-17179869184 (bytes)" "$tmp/huge.err" ||
            fail "$(basename "$f"): $(cat "$tmp/huge.err")"
        ;;
    *)
        n=$((n + 1))
        "$rt" --parsed "$f" || fail "$(basename "$f") does not round-trip"
        ;;
    esac
done
# The documents hold what they are meant to: a simulated one its fabric, a TCP one its
# wire figures, the failed flow its error.
grep -q '"sim":' "$tmp/sim-baseline-repro.json" || fail "sim document without conditions.sim"
grep -q '"retrans_segments"' "$tmp/tcp-bidir.json" || fail "tcp document without tcp figures"
echo "$n documents read and written back"
[ "$n" -ge 30 ] || fail "only $n documents"
[ $fails -eq 0 ] && echo "PASS" || exit 1
