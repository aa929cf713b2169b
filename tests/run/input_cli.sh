#!/bin/sh
# input_cli: what `fabtop run` refuses before any traffic, with one line and its status. A mix
# file is a file whatever its name (an existing "mymix" runs; "garbage.bin" is bad data, 65,
# not a missing preset); a misspelled key in a mix is refused with the nearest known key (65)
# at every level, the simulator's fabric settings included; --expect thresholds that can never
# pass (NaN, infinite, negative, "< 0", a flow or phase the mix lacks) are usage errors (64).
# Loopback TCP only.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN is not set}
. "$(dirname "$0")/../common/cli_lib.sh"

# refused STATUS NEEDLE ARGS...: fabtop run ARGS exits STATUS at once (well under the mix's
# 3 s) with one line on stderr containing NEEDLE and nothing on stdout.
refused() {
    want=$1 needle=$2
    shift 2
    t0=$(date +%s.%N)
    (cd "$tmp" && timeout 20 "$bin" run "$@" >"$tmp/out" 2>"$tmp/err")
    rc=$?
    quick=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a < 2.0) ? 1 : 0 }')
    if [ "$rc" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$(grep -vc '^Try ' "$tmp/err")" -ne 1 ] || [ "$quick" != 1 ]; then
        fail "run $*: status $rc (want $want), quick=$quick, stderr: $(cat "$tmp/err")"
    else
        echo "ok: $want: $(head -1 "$tmp/err")"
    fi
}

# mixfile NAME FLOW_EXTRA [TOP_EXTRA]: a loopback ping-pong mix in $tmp/NAME.
mixfile() {
    cat >"$tmp/$1" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "t", "description": "d"${3:-},
 "flows": [{"name": "probe", "transport": "tcp", "op": "pingpong", "size": 64,
            "warmup_s": 0, "duration_s": 3$2}]}
EOF
}

# A file named without '/' or ".json" is a file.
mixfile mymix ""
sed -i 's/"duration_s": 3/"duration_s": 0.5/' "$tmp/mymix"
if (cd "$tmp" && "$bin" run --mix mymix >"$tmp/out" 2>"$tmp/err") && grep -q "probe" "$tmp/out"; then
    echo "ok: an existing file 'mymix' is run as a mix"
else
    fail "--mix mymix: $(cat "$tmp/err")"
fi
printf '\001\002garbage' >"$tmp/garbage.bin"
refused 65 "garbage.bin:1:3: malformed JSON" --mix garbage.bin
refused 66 "mix 'nosuch': no such preset or file" --mix nosuch
refused 66 "nosuch.json: cannot open" --mix nosuch.json

# Misspelled keys, at each level.
mixfile k1.json ', "duraton_s": 1'
refused 65 "k1.json: flows[0]: unknown key 'duraton_s' (did you mean 'duration_s'?)" --mix k1.json
mixfile k2.json ', "sise": 64'
refused 65 "flows[0]: unknown key 'sise' (did you mean 'size'?)" --mix k2.json
mixfile k3.json '' ', "fail_bond_s": 1'
refused 65 "k3.json: unknown key 'fail_bond_s' (did you mean 'fail_bound_s'?)" --mix k3.json
mixfile k4.json ', "params": {"congestion_contol": "cubic"}'
refused 65 "flows[0].params: unknown key 'congestion_contol' (did you mean 'congestion_control'?)" \
    --mix k4.json
cat >"$tmp/k5.json" <<EOF
{"format": "fabtop-mix", "version": 1, "name": "t",
 "flows": [{"name": "a", "transport": "sim", "op": "stream", "size": 65536, "iterations": 10,
            "params": {"src": "h1", "dst": "h0", "topology": "star8-100g",
                       "fabric": {"pfc": {"mdoe": "lossless"}}}}]}
EOF
refused 65 "fabric.pfc: unknown key 'mdoe' (did you mean 'mode'?)" --mix k5.json

# Thresholds that can never pass.
mixfile ok.json ""
refused 64 "--expect 'p99<nan': the threshold must be a finite number" --mix ok.json --expect 'p99<nan'
refused 64 "--expect 'p99<-5us': a negative threshold" --mix ok.json --expect 'p99<-5us'
refused 64 "--expect 'gbps>inf': the threshold must be a finite number" --mix ok.json --expect 'gbps>inf'
refused 64 "--expect 'retrans<0': retrans is never below 0, so this can never pass" --mix ok.json \
    --expect 'p99<50ms,retrans<0'
refused 64 "--expect 'prob.p99<1ms': mix t has no flow 'prob' (did you mean 'probe'?)" --mix ok.json \
    --expect 'prob.p99<1ms'
refused 64 "--expect 'quiet.p99<1ms': mix t has no quiet phase" --mix ok.json --expect 'quiet.p99<1ms'

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "PASS: input_cli"
