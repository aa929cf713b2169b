#!/bin/sh
# score_cli: the scoreboard end to end. fabtop run of a model mix on loopback TCP with --slo
# and --step-budget: every flow carries its class into the document, the scoreboard's classes
# and decode step are there with their units and kinds and agree with their own arithmetic,
# and the summary prints them within 80 columns; fabtop compare against a copy with a worse
# tp class names it; a hand mix with classes (api, kv with two
# flows: Jain's index over their goodput) and quiet/loaded phases; --slo, --step-budget and
# --target-tps refusals (64, one line) and a bad class in a mix (65). The same over nccl on
# the stand-in runtime: tests/gpu/score_nccl_fake.sh.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
. "$(dirname "$0")/../common/cli_lib.sh"

# 1. A model mix over loopback TCP.
"$bin" run --model Llama-3.1-8B --tp 2 --transport tcp --duration 1 --slo 'tp:p99<50ms' \
    --step-budget 25ms -o "$tmp/model.json" >"$tmp/model.out" 2>"$tmp/model.err"
rc=$?
# 0, or 1 when the loaded p99 missed 50 ms on a loaded machine (checked below against the
# scoreboard's slo_met).
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "model run: exit $rc ($(tail -3 "$tmp/model.err"))"
python3 - "$tmp/model.json" "$rc" <<'EOF' || fail "model run: the scoreboard in the document"
import json, math, sys
d = json.load(open(sys.argv[1]))
for ph in d["phases"]:
    for f in ph["flows"]:
        # A prefill flow's class is its own: only decode is on the step.
        want = f["name"].split("-")[0] + ("-prefill" if "-prefill" in f["name"] else "")
        assert f["class"] == want, (f["name"], f["class"])
sb = d["scoreboard"]
assert "Jain" in sb["basis"] and "microseconds" in sb["basis"]
cls = {c["class"]: c for c in sb["classes"]}
assert set(cls) == {"tp", "tp-prefill", "kv"}, cls.keys()
tp = cls["tp"]
assert tp["flows"] == 1 and cls["tp-prefill"]["flows"] == 1, cls
assert tp["latency_kind"] == "per_operation", tp
assert tp["slo"] == "p99<50ms" and tp["slo_bound_us"] == 50000, tp
assert tp["fairness_of"] == "ops_per_s"
for ph in ("quiet", "loaded"):
    p = tp[ph]
    assert p["samples"] > 0 and 0 < p["p50_us"] <= p["p99_us"] <= p["p99.9_us"], p
    assert 0 <= p["within_slo"] <= 1, p
assert 0 < tp["loaded"]["fairness_jain"] <= 1
assert tp["slo_met"] == (tp["loaded"]["p99_us"] <= 50000)
# A missed --slo is exit 1, a met one exit 0.
assert int(sys.argv[2]) == (0 if tp["slo_met"] else 1), (sys.argv[2], tp["slo_met"])
assert abs(tp["p99_loaded_over_quiet"] - tp["loaded"]["p99_us"] / tp["quiet"]["p99_us"]) < 1e-6
kv = cls["kv"]
# The model's KV transfer is a kv flow (op kv): timed per request, first descriptor posted
# to the notification; a background flow, so loaded only.
assert kv["fairness_of"] == "ops_per_s" and kv["latency_kind"] == "per_request", kv
assert "slo" not in kv and "quiet" not in kv, kv
assert kv["loaded"]["samples"] > 0 and kv["loaded"]["p50_us"] > 0, kv
st = sb["step"]
assert st["budget_ms"] == 25 and st["budget_from"] == "--step-budget 25ms", st
# Llama-3.1-8B: 32 layers, 2 all-reduces each; TP 2 over tcp: a ring all-reduce per term (its
# 2 steps are inside the per-all-reduce latency, not in per_step).
assert st["terms"] == [{"flow": "tp-decode-ring2", "per_step": 64}], st["terms"]
flows = {(ph["name"], f["name"]): f for ph in d["phases"] for f in ph["flows"]}
for ph in ("quiet", "loaded"):
    s = st[ph]
    assert 0 < s["comm_p50_us"] <= s["comm_p99_us"], s
    # The step measured whole: 64 consecutive all-reduces of the one connection summed into
    # one sample, so it holds every whole 64 of the samples, and their sum.
    pt = flows[(ph, "tp-decode-ring2")]["points"][0]
    lat, step = pt["latency"], pt["step"]
    assert step["operations"] == 64 and "consecutive" in step["basis"], step
    n, ns = lat["count"], step["latency"]["count"]
    assert ns == n // 64 and ns > 0, (n, ns)
    assert step["latency"]["kind"] == lat["kind"] and step["latency"]["unit"] == "us"
    total, stotal = lat["mean"] * n, step["latency"]["mean"] * ns
    assert stotal <= total * (1 + 1e-6) + 1, (stotal, total)
    assert total - stotal <= (n - 64 * ns) * lat["max"] * (1 + 1e-6) + 1, (stotal, total)
    assert 64 * lat["min"] * (1 - 1e-3) <= step["latency"]["min"], (lat, step)
    assert step["latency"]["max"] <= 64 * lat["max"] * (1 + 1e-3), (lat, step)
    # One term: the step's p50 and p99 are the measured step's.
    assert abs(s["comm_p50_us"] - step["latency"]["p50"]) <= 1e-3 * s["comm_p50_us"], (s, step)
    assert abs(s["comm_p99_us"] - step["latency"]["p99"]) <= 1e-3 * s["comm_p99_us"], (s, step)
    assert s["steps_measured"] == ns, (s, ns)
    assert "step" not in flows[("loaded", "tp-prefill-ring2")]["points"][0]
    assert abs(s["budget_share_p50"] - s["comm_p50_us"] / 25000) < 1e-9
    assert abs(s["tokens_per_s_p99"] - 1e6 / s["comm_p99_us"]) < 1e-6
# The mix records the class and per_step too.
mf = {f["name"]: f for f in d["mix"]["flows"]}
assert mf["tp-decode-ring2"]["class"] == "tp"
assert mf["tp-decode-ring2"]["per_step"] == 64
assert "per_step" not in mf["tp-prefill-ring2"]
EOF
out="$tmp/model.out"
grep -q '^Scoreboard by flow class' "$out" || fail "summary: no scoreboard"
grep -Eq '^  tp +1 ' "$out" || fail "summary: no tp row"
grep -Eq '^  tp-prefill +1 ' "$out" || fail "summary: no tp-prefill row"
grep -Eq '^  tp +p99<50ms +[0-9.]+% +(yes|NO) ' "$out" || fail "summary: no tp SLO row"
grep -Eq '^  kv +- +- +- ' "$out" || fail "summary: no kv SLO row"
grep -q '^  tp-decode-ring2 x 64$' "$out" || fail "summary: no step term"
grep -q '^  step budget 25 ms (--step-budget 25ms)$' "$out" || fail "summary: no budget"
grep -Eq '^    steps measured \(fewest term\) +[0-9]+ +[0-9]+$' "$out" || fail "summary: no steps row"
grep -Eq '^    tokens/s bound p99 \(1 sequence\) +[0-9]+ +[0-9]+$' "$out" ||
    fail "summary: no tokens/s bound"
sed -n '/^Scoreboard/,/^results saved/p' "$out" | awk 'length > 80 {bad = 1} END {exit bad}' ||
    fail "summary: a scoreboard line over 80 columns"

# fabtop compare of that run against a copy whose tp class is worse (loaded p99 x2, half its
# samples within the SLO, the SLO missed) names the class, in the text and in --json.
python3 - "$tmp/model.json" "$tmp/worse.json" <<'EOF' || fail "could not make the worse copy"
import json, sys
d = json.load(open(sys.argv[1]))
tp = [c for c in d["scoreboard"]["classes"] if c["class"] == "tp"][0]
tp["loaded"]["p99_us"] = tp["loaded"]["p99_us"] * 2
tp["loaded"]["within_slo"] = 0.5
tp["slo_met"] = False
json.dump(d, open(sys.argv[2], "w"), indent=2)
EOF
"$bin" compare "$tmp/model.json" "$tmp/worse.json" >"$tmp/cmp.out" 2>&1
grep -q '^Worse in B: class tp (p99 x2.00, .*within SLO .* -> 50.0%; SLO p99<50ms met in A, not in B)' \
    "$tmp/cmp.out" || grep -q '^Worse in B: class tp (p99 x2.00, .*within SLO .* -> 50.0%' \
    "$tmp/cmp.out" || fail "compare: no class tp worse: $(grep -i worse "$tmp/cmp.out")"
grep -Eq '^  tp +p99<50ms .* +x2.00 .*WORSE$' "$tmp/cmp.out" || fail "compare: no tp row"
grep -Eq '^  kv ' "$tmp/cmp.out" || fail "compare: no kv row"
"$bin" compare --json "$tmp/model.json" "$tmp/worse.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = {k["class"]: k for k in d["classes"]}
assert c["tp"]["worse"] and not c["kv"]["worse"], c
assert d["worse"].startswith("Worse in B: class tp"), d["worse"]
' || fail "compare --json: the classes"

# 2. A hand mix with classes and quiet/loaded phases; the budget from a target tokens/s.
cat >"$tmp/hand.json" <<'EOF'
{"format": "fabtop-mix", "version": 1, "name": "score-hand", "phases": ["quiet", "loaded"],
 "flows": [
  {"name": "probe", "class": "tp", "per_step": 10, "role": "foreground", "op": "pingpong",
   "size": 1024, "warmup_s": 0.1, "duration_s": 0.5},
  {"name": "kv-a", "class": "kv", "role": "background", "op": "stream", "size": "64KiB",
   "warmup_s": 0.1, "rate_gbps": 1},
  {"name": "kv-b", "class": "kv", "role": "background", "op": "stream", "size": "64KiB",
   "warmup_s": 0.1, "rate_gbps": 1},
  {"name": "front", "class": "api", "role": "background", "op": "rr", "size": 512,
   "concurrency": 2, "warmup_s": 0.1}]}
EOF
"$bin" run --mix "$tmp/hand.json" --slo 'api:p99<100ms,tp:p99.9<1s' --target-tps 50 \
    -o "$tmp/hand.out.json" >"$tmp/hand.out" 2>"$tmp/hand.err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "hand mix: exit $rc ($(tail -3 "$tmp/hand.err"))"
python3 - "$tmp/hand.out.json" "$rc" <<'EOF' || fail "hand mix: the scoreboard"
import json, sys
sb = json.load(open(sys.argv[1]))["scoreboard"]
met = all(c.get("slo_met", True) for c in sb["classes"])
assert int(sys.argv[2]) == (0 if met else 1), (sys.argv[2], [(c["class"], c.get("slo_met")) for c in sb["classes"]])
cls = {c["class"]: c for c in sb["classes"]}
assert [c["class"] for c in sb["classes"]] == ["tp", "kv", "api"]
kv, api, tp = cls["kv"], cls["api"], cls["tp"]
assert kv["flows"] == 2 and kv["fairness_of"] == "goodput_gbps"
# Two streams paced alike: close to equal shares.
assert 0.9 <= kv["loaded"]["fairness_jain"] <= 1, kv
assert api["latency_kind"] == "round_trip" and api["slo"] == "p99<100ms"
assert "quiet" not in api and "quiet" in tp
assert tp["slo"] == "p99.9<1s" and tp["slo_bound_us"] == 1e6
st = sb["step"]
assert st["budget_ms"] == 20 and st["budget_from"] == "--target-tps 50", st
assert st["terms"] == [{"flow": "probe", "per_step": 10}]
EOF

# A bound no loopback ping-pong meets (1 us half round trip): exit 1, one line naming the
# class and its share within the bound, and the results still saved.
"$bin" run --mix "$tmp/hand.json" --duration 0.3 --slo 'tp:p99<1us' -o "$tmp/miss.json" \
    >"$tmp/miss.out" 2>"$tmp/miss.err"
rc=$?
[ "$rc" -eq 1 ] || fail "missed --slo: exit $rc, not 1 ($(tail -3 "$tmp/miss.err"))"
grep -Eq '^fabtop: --slo missed: class tp p99<1us \([0-9.]+% of its operations within the bound\)$' \
    "$tmp/miss.err" || fail "missed --slo: no line naming it in: $(cat "$tmp/miss.err")"
python3 -c 'import json, sys; c = [c for c in json.load(open(sys.argv[1]))["scoreboard"]["classes"] if c["class"] == "tp"][0]; assert c["slo_met"] is False, c' \
    "$tmp/miss.json" || fail "missed --slo: the document does not say so"

# 3. Refusals before any traffic.
refused() {
    want_rc=$1
    want=$2
    shift 2
    "$bin" run "$@" >"$tmp/r.out" 2>"$tmp/r.err"
    rc=$?
    [ "$rc" -eq "$want_rc" ] || fail "$*: exit $rc, not $want_rc"
    grep -qF -- "$want" "$tmp/r.err" || fail "$*: no '$want' in: $(cat "$tmp/r.err")"
}
refused 64 "--slo 'tp:p99': no '<'" --model Llama-3.1-8B --tp 2 --transport tcp --slo 'tp:p99'
refused 64 "unknown statistic 'p98'" --mix "$tmp/hand.json" --slo 'tp:p98<1ms'
refused 64 "no flow of mix score-hand has class moe" --mix "$tmp/hand.json" --slo 'moe:p99<1ms'
refused 64 "both set the step budget" --mix "$tmp/hand.json" --step-budget 25ms --target-tps 40
refused 64 "--step-budget '25': not a positive time" --mix "$tmp/hand.json" --step-budget 25
sed 's/"class": "api"/"class": "a:b"/' "$tmp/hand.json" >"$tmp/badclass.json"
refused 65 "flows[3].class must be letters, digits" --mix "$tmp/badclass.json"

[ "$fails" -eq 0 ] || exit 1
echo "score_cli: ok"
