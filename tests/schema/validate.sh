#!/bin/sh
# validate: docs/schema/mix.schema.json and results.schema.json against real documents, with
# python3-jsonschema (validate.py): both are valid draft 2020-12 schemas; every shipped mix
# (engine/mixes/**, not sim/topologies) and the mix `fabtop mix --model` writes are valid
# mixes; the committed samples of tests/results and the documents this test makes with the
# real binary are valid results documents: loopback TCP (quiet-vs-loaded), a simulated run
# (and --reproducible, whose times are null), kv-transfer and kv-requests, a run --model with
# a scoreboard, a peer-kill drill and `report --json` of a sweep; the mixes and results
# committed under bench/, docs/ and tests/ (not the fuzz corpus). Negative: mixes that
# `fabtop run` refuses (65: a misspelled key at each level, a value out of range or of an
# enum, a size's unit, no foreground flow) and documents with a string where a number
# belongs are refused by the schemas too.
# Usage: validate.sh WRITE_DOC [FAKE_CUDANCCL] (the compare tests' document writer: verbs-shaped
# documents; the stand-in CUDA/NCCL library: nccl runs, collective and copy).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
wd=${1:?the compare tests write_doc program}
fake=${2:-}
here=$(dirname "$0")
schemas=$src/docs/schema
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
python3 -c 'import jsonschema' 2>/dev/null || {
    echo "SKIP: python3-jsonschema is not installed"
    exit 77
}
. "$(dirname "$0")/../common/cli_lib.sh"
v() { python3 "$here/validate.py" "$schemas" "$@"; }

v check-schemas || fail "the schema files are not valid draft 2020-12 schemas"

# Every shipped mix (the topologies one folder down are simulator documents, traces .jsonl).
mixes=$(find "$src/engine/mixes" -name '*.json' ! -path '*/topologies/*' | sort)
[ "$(echo "$mixes" | wc -l)" -ge 20 ] || fail "fewer than 20 shipped mixes found under engine/mixes"
# shellcheck disable=SC2086
v mix $mixes || fail "a shipped mix is not valid against mix.schema.json"

# Documents made here with the real binary. run NAME ARGS...: the document must be written.
run() {
    name=$1
    shift
    "$bin" "$@" >"$tmp/$name.out" 2>&1
    [ -s "$tmp/$name.json" ] || fail "$name: no document ($(tail -2 "$tmp/$name.out"))"
}
run qvl run --mix quiet-vs-loaded --duration 0.3 -o "$tmp/qvl.json"
sim=$("$bin" run --list | awk '/^sim\// {print $1}' | head -n 1)
[ -n "$sim" ] || fail "fabtop run --list lists no sim/ mix"
run sim run --mix "${sim:-sim/baseline}" -o "$tmp/sim.json"
run sim-victim run --mix sim/victim-pfc --reproducible -o "$tmp/sim-victim.json"
run kv run --mix kv-transfer --duration 0.2 -o "$tmp/kv.json"
run kvreq run --mix kv-requests --duration 0.2 -o "$tmp/kvreq.json"
run model run --model Llama-3.1-8B --tp 2 --transport tcp -d 0.2 --slo 'tp:p99<50ms' \
    --step-budget 25ms -o "$tmp/model.json"
run drill drill --mix "$src/tests/ctl/data/drill-rr.json" --fault peer-kill --at 0.3 --for 0.3 \
    -o "$tmp/drill.json"
"$bin" report --json "$src/tests/results/sweep-4ranks.json" >"$tmp/sweep.json" 2>"$tmp/sweep.err" ||
    fail "report --json of the sweep sample: $(cat "$tmp/sweep.err")"
"$bin" mix --model Llama-3.1-8B --tp 2 --transport tcp --json -o "$tmp/model-mix.mix" \
    >/dev/null 2>"$tmp/mix.err" || fail "mix --model: $(cat "$tmp/mix.err")"
"$wd" "$tmp/verbs-ib.json" || fail "write_doc"
"$wd" "$tmp/verbs-eth.json" ll=Ethernet mtu=1024 fw=28.39.1002 size=65536 neighbour=1 mix=other ||
    fail "write_doc ll=Ethernet"
if [ -n "$fake" ] && [ -f "$fake" ]; then
    FABTOP_CUDART=$fake FABTOP_NCCL=$fake FAKE_CUDA_DEVICES=2
    export FABTOP_CUDART FABTOP_NCCL FAKE_CUDA_DEVICES
    for m in nccl-decode nccl-contention; do
        run "$m" run --mix "$m" -d 0.1 -o "$tmp/$m.json"
    done
    unset FABTOP_CUDART FABTOP_NCCL FAKE_CUDA_DEVICES
    grep -q busbw_GBps "$tmp/nccl-decode.json" || fail "nccl-decode: no point figures (busbw_GBps)"
else
    echo "note: no stand-in CUDA/NCCL library built: no nccl run checked"
fi
grep -q '"scoreboard"' "$tmp/model.json" || fail "run --model with --slo: no scoreboard to check"
grep -q '"reproducible"' "$tmp/sim-victim.json" || fail "--reproducible: no reproducible key"

v mix "$tmp/model-mix.mix" || fail "the mix of fabtop mix --model is not valid"
v results "$src"/tests/results/*.json "$tmp"/*.json ||
    fail "a results document is not valid against results.schema.json"

# Documents committed beside the code: GPU runs recorded on H200s (bench/device), mixes and
# samples of the tests (the fuzz corpus, malformed on purpose, is left out).
committed=$(find "$src/bench" "$src/docs" "$src/tests" -name '*.json' ! -path '*/docs/schema/*' \
    ! -path '*/tests/fuzz/*' | sort)
# shellcheck disable=SC2086
v auto $committed >"$tmp/committed.out" || {
    grep -v '^ok\|^skip' "$tmp/committed.out"
    fail "a committed document is not valid against its schema"
}
echo "committed documents: $(grep -c '^ok' "$tmp/committed.out") validated, $(grep -c '^skip' "$tmp/committed.out") of other formats skipped"

# Negative: the schema refuses what the reader refuses.
python3 - "$src/engine/mixes/api.json" "$tmp" <<'PY' || fail "could not make the bad documents"
import json, sys
src, tmp = sys.argv[1], sys.argv[2]
m = json.load(open(src))
m["flows"][0]["concurrencyy"] = m["flows"][0].pop("concurrency", 4)
json.dump(m, open(tmp + "/misspelled-flow.mixbad", "w"))
m = json.load(open(src))
m["flows"][0]["params"] = {"congestion_contrl": "cubic"}
json.dump(m, open(tmp + "/misspelled-param.mixbad", "w"))
m = json.load(open(src))
m["duration"] = 1
json.dump(m, open(tmp + "/misspelled-top.mixbad", "w"))
# Values the reader refuses: a range, an enum, a size's unit, no foreground flow.
for name, key, val in (("concurrency-0", "concurrency", 0), ("direction-up", "direction", "up"),
                       ("size-unit", "size", "4XB"), ("background-only", "role", "background")):
    m = json.load(open(src))
    for f in m["flows"]:
        f[key] = val
    json.dump(m, open(tmp + "/" + name + ".mixbad", "w"))
r = json.load(open(tmp + "/qvl.json"))
r["phases"][0]["flows"][0]["points"][0]["goodput_gbps"] = "3.7 Gb/s"
json.dump(r, open(tmp + "/string-goodput.resbad", "w"))
r = json.load(open(tmp + "/qvl.json"))
r["phases"][0]["flows"][0]["points"][0]["latency"]["p99"] = "12"
json.dump(r, open(tmp + "/string-p99.resbad", "w"))
d = json.load(open(tmp + "/drill.json"))
d["repetitions"][0]["flows"][0]["detect_s"] = "fast"
json.dump(d, open(tmp + "/string-detect.resbad", "w"))
PY
for f in "$tmp"/*.mixbad; do
    "$bin" run --mix "$f" -d 0.01 >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" = 65 ] || fail "fabtop run does not refuse $(basename "$f") (exit $rc, not 65)"
    case $f in
    */misspelled-*) grep -q "unknown key" "$tmp/err" || fail "$(basename "$f"): no unknown key named" ;;
    esac
done
v not-mix "$tmp"/*.mixbad || fail "the mix schema accepts what the mix reader refuses"
v not-results "$tmp"/*.resbad || fail "the results schema accepts a string for a number"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS: schemas valid, $(echo "$mixes" | wc -l) shipped mixes and every results document validate"
