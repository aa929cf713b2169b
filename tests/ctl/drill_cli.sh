#!/bin/sh
# drill_cli: `fabtop drill --peer` against a `fabtop serve` in a process of its own on
# 127.0.0.1: peer-stall and peer-kill with a pingpong and an rr mix, --repeat 5: every
# detection within its bound, every recovery within the policy's deadline, every request
# accounted for and the agent's count of answers the same as the client's, no descriptor or
# thread left in the drill process; the -o document; a data path of its own (--data-peer);
# failover to a second agent; drills under load (quiet-vs-loaded's neighbours), of api and of
# kv-transfer (a size distribution);
# refusals (--max-fault, --max-fault 0,
# an unknown kind, an unknown recover key) with one line and their status; --expect 1, a
# flow without a policy 2; an interrupted drill keeps its finished repetitions in -o FILE.
set -u
. "$(dirname "$0")/serve_lib.sh"
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
tmp=$(mktemp -d)
pid=""
pid0=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$pid0" ] && kill "$pid0" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

"$bin" serve --gen-key "$tmp/key" >/dev/null || { echo "FAIL: --gen-key"; exit 1; }
"$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --max-sessions 64 --max-fault 5 \
    --log "$tmp/log" 2>"$tmp/serve.err" &
pid=$!
port=$(serve_port "$tmp/log")
[ -n "$port" ] || { echo "FAIL: serve did not say where it listens: $(cat "$tmp/serve.err")"; exit 1; }
peer="--peer 127.0.0.1:$port --key-file $tmp/key"

for fault in peer-stall peer-kill; do
    for mix in pingpong rr; do
        out="$tmp/$fault-$mix.json"
        # shellcheck disable=SC2086
        timeout 120 "$bin" drill --mix "$src/tests/ctl/data/drill-$mix.json" --fault "$fault" \
            --at 0.3 --for 0.6 --repeat 5 --expect 'detect<0.6s,recover<8s' $peer -o "$out" \
            >"$tmp/text" 2>"$tmp/err"
        rc=$?
        [ "$rc" -eq 0 ] || fail "$fault $mix: status $rc: $(cat "$tmp/err") $(cat "$tmp/text")"
        # Every repetition: detected within the bound, recovered within the deadline, no
        # request hanging, issued = completed + failed + abandoned, the agent agrees.
        bad=$(jq '[.repetitions[] | .agent.agree as $a | .flows[] |
                select((.detect_ok and .recover_ok and .recovered and $a and
                        .requests.hanging == 0 and
                        .requests.issued == .requests.completed + .requests.failed +
                          .requests.abandoned and .requests.completed > 0) | not)] | length' "$out")
        reps=$(jq '.repetitions | length' "$out")
        fmt=$(jq -r '.format + " " + (.complete | tostring)' "$out")
        leak=$(jq '.process | (.fds_after - .fds_before) + (.threads_after - .threads_before)' "$out")
        [ "$bad" = 0 ] && [ "$reps" = 5 ] && [ "$fmt" = "fabtop-drill true" ] && [ "$leak" = 0 ] ||
            fail "$fault $mix: $bad bad drills of $reps, '$fmt', leak $leak: $(cat "$tmp/text")"
        echo "ok: $fault $mix: $(grep -E '^(detect|recover|drills):' "$tmp/text" | tr '\n' ';')"
        # The failures came from the fault: peer-kill errors at once, peer-stall deadlines.
        if [ "$fault" = peer-kill ]; then
            n=$(jq '[.repetitions[].flows[] | select(.detection | startswith("error"))] | length' "$out")
        else
            n=$(jq '[.repetitions[].flows[] | select(.detection | startswith("timeout"))] | length' "$out")
        fi
        [ "$n" = 5 ] || fail "$fault $mix: $n detections of the expected kind"
    done
done
grep -q "fault: peer-stall for 0.6 s on 1 session of 127.0.0.1" "$tmp/log" ||
    fail "the agent's log has no peer-stall line: $(grep fault "$tmp/log" | head -3)"
grep -q "fault: peer-kill for 0.6 s on 3 sessions of 127.0.0.1 (new sessions refused meanwhile)" \
    "$tmp/log" || fail "the agent's log has no peer-kill line"

# A data path of its own: the data connections to 127.0.0.2 (--data-peer), where the agent
# listens for them at the drill's request; the control connection stays on 127.0.0.1.
# shellcheck disable=SC2086
timeout 60 "$bin" drill --mix "$src/tests/ctl/data/drill-pingpong.json" --fault peer-kill \
    --at 0.3 --for 0.4 --repeat 2 --data-peer 127.0.0.2 $peer -o "$tmp/data-peer.json" \
    >"$tmp/text" 2>"$tmp/err"
rc=$?
dp=$(jq -r '.data_peer + " " + ([.repetitions[] | .agent.agree as $a | .flows[] |
        select((.detect_ok and .recover_ok and $a and .requests.completed > 0) | not)] |
        length | tostring)' "$tmp/data-peer.json" 2>/dev/null)
[ "$rc" -eq 0 ] && [ "$dp" = "127.0.0.2 0" ] ||
    fail "--data-peer 127.0.0.2: status $rc, '$dp': $(cat "$tmp/err" "$tmp/text")"

# refused STATUS NEEDLE ARGS...: one line on stderr with NEEDLE, that status, nothing on stdout.
refused() {
    want=$1 needle=$2
    shift 2
    timeout 30 "$bin" drill "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$(grep -vc "^Try 'fabtop drill --help'" "$tmp/err")" -ne 1 ]; then
        fail "drill $*: status $rc (want $want), stderr: $(cat "$tmp/err"), stdout: $(head -3 "$tmp/out")"
    else
        echo "ok: $want: $(head -1 "$tmp/err")"
    fi
}
pp="$src/tests/ctl/data/drill-pingpong.json"
# shellcheck disable=SC2086
refused 77 "6 s is longer than this agent's limit (fabtop serve --max-fault 5)" --mix "$pp" \
    --fault peer-stall --at 0.2 --for 6 $peer
refused 64 "--fault takes peer-stall, peer-kill, blackhole, link-down or rank-loss, not 'peer-explode'" \
    --mix "$pp" --fault peer-explode
refused 64 "--fault blackhole needs --netns NAME" --mix "$pp" --fault blackhole
refused 64 "--fault link-down needs --netns NAME" --mix "$pp" --fault link-down
refused 64 "--netns goes with --fault blackhole or link-down" --mix "$pp" --fault peer-kill \
    --netns x
refused 64 "--device goes with --fault link-down" --mix "$pp" --fault peer-kill --device eth0
refused 64 "--owned goes with --fault link-down and --device DEV, without --netns" --mix "$pp" \
    --fault link-down --owned
refused 64 "--owned goes with --fault link-down and --device DEV, without --netns" --mix "$pp" \
    --fault link-down --device eth0 --owned --netns x
refused 66 "--netns fabtop-no-such-ns: No such file or directory" --mix "$pp" --fault blackhole \
    --netns fabtop-no-such-ns
sed 's/"attempts"/"atempts"/' "$pp" >"$tmp/badkey.json"
refused 65 "unknown key 'atempts' (did you mean 'attempts'?)" --mix "$tmp/badkey.json" --fault peer-kill
refused 64 "--expect: unknown 'detected'" --mix "$pp" --fault peer-kill --expect 'detected<2s'
# A verbs ping-pong's link-down: the RDMA device's netdev (--device DEV --owned), a WRITE or
# SEND with a reply (tests/vm/drill_verbs_pair.sh drills it); refused before any RDMA.
cat >"$tmp/vpp.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "verbs-pp", "fail_bound_s": 2,
 "flows": [{"name": "vpp", "transport": "verbs", "op": "pingpong", "size": 64,
            "params": {"verb": "write"}}]}
J
sed 's/"write"/"read"/' "$tmp/vpp.json" >"$tmp/vread.json"
refused 65 "flow vpp: a link-down of a verbs flow takes the RDMA device's netdev in this namespace (--device DEV --owned), not --netns" \
    --mix "$tmp/vpp.json" --fault link-down --netns fabtop-no-such-ns
refused 65 "flow vpp: a link-down drills a verbs WRITE or SEND ping-pong with a reply for now, not a one-sided READ" \
    --mix "$tmp/vread.json" --fault link-down --device fabtop-no-dev --owned
grep -q "fault: refused peer-stall for 6 s: longer than --max-fault 5 s" "$tmp/log" ||
    fail "the agent did not log the refusal"

"$bin" serve --listen 127.0.0.1:0 --key-file "$tmp/key" --max-fault 0 --log "$tmp/log0" \
    2>"$tmp/serve0.err" &
pid0=$!
port0=$(serve_port "$tmp/log0")
[ -n "$port0" ] || fail "the second serve did not say where it listens"
refused 77 "this agent takes no faults (fabtop serve --max-fault 0)" --mix "$pp" --fault peer-kill \
    --at 0.2 --for 1 --peer "127.0.0.1:$port0" --key-file "$tmp/key"

# Under load: the quiet-vs-loaded preset's two bulk neighbours (tx and rx streams) run beside
# the drilled ping-pong; both streams carry data before the fault, nearly nothing during a
# kill (their sessions ended, new ones refused), and again after it; the probe recovers.
# The api preset (32 rr connections) the same way, every request accounted for; and
# kv-transfer (4 connections, requests of 4, 16 or 64 MiB drawn from its size distribution,
# its own 2 s bound: a 64 MiB round trip takes a good part of 0.5 s on a busy machine).
for mix in quiet-vs-loaded api kv-transfer; do
    bound=0.5
    [ "$mix" = kv-transfer ] && bound=2
    jq --argjson b "$bound" '.fail_bound_s = $b' "$src/engine/mixes/$mix.json" \
        >"$tmp/$mix.json"
    # shellcheck disable=SC2086
    timeout 60 "$bin" drill --mix "$tmp/$mix.json" --fault peer-kill --at 0.5 --for 0.6 \
        --repeat 2 $peer -o "$tmp/$mix-out.json" >"$tmp/text" 2>"$tmp/err"
    rc=$?
    bad=$(jq '[.repetitions[] | .agent.agree as $a | .flows[] |
            select((.detect_ok and .recover_ok and $a and .requests.hanging == 0) | not)] |
            length' "$tmp/$mix-out.json" 2>/dev/null)
    if [ "$mix" = quiet-vs-loaded ]; then
        load=$(jq '[.repetitions[].load[] |
                select((.before_gbps > 0.05 and .during_gbps < .before_gbps / 3 and
                        .after_gbps > 0.05 and .reconnects >= 1) | not)] | length' \
            "$tmp/$mix-out.json" 2>/dev/null)
        nload=$(jq '[.repetitions[].load[]] | length' "$tmp/$mix-out.json" 2>/dev/null)
    else
        load=0 nload=4
    fi
    [ "$rc" -eq 0 ] && [ "$bad" = 0 ] && [ "$load" = 0 ] && [ "$nload" = 4 ] ||
        fail "$mix under peer-kill: status $rc, $bad bad drills, $load bad load figures of $nload: $(cat "$tmp/err" "$tmp/text")"
    echo "ok: $mix: $(grep -E '^(detect|recover):|^  load' "$tmp/text" | head -4 | tr '\n' ';')"
done

# Failover: the peer killed for 3 s (and refusing new sessions meanwhile), the rr flow's
# policy names the second agent: each connection retries the peer once, then recovers there,
# long before the peer takes sessions again; both agents' answers together equal the client's.
jq --arg f "127.0.0.1:$port0" '.flows[0].recover.failover = [$f]' \
    "$src/tests/ctl/data/drill-rr.json" >"$tmp/failover.json"
# shellcheck disable=SC2086
timeout 60 "$bin" drill --mix "$tmp/failover.json" --fault peer-kill --at 0.3 --for 3 \
    --repeat 2 $peer -o "$tmp/failover-out.json" >"$tmp/text" 2>"$tmp/err"
rc=$?
fo=$(jq -r --arg f "127.0.0.1:$port0" '[.repetitions[] | .agent.agree as $a | .flows[] |
        select((.recovered and .recover_s < 1 and .failovers == .connections and
                .recovered_on == $f and $a and .requests.hanging == 0) | not)] | length' \
    "$tmp/failover-out.json" 2>/dev/null)
[ "$rc" -eq 0 ] && [ "$fo" = 0 ] && grep -q "failed over: 3 of its connections recovered on" "$tmp/text" ||
    fail "failover: status $rc, $fo bad drills: $(cat "$tmp/err" "$tmp/text")"
echo "ok: failover: $(grep -E '^recover:' "$tmp/text")"
jq '.flows[0].recover.failover = ["127.0.0.1:99999"]' "$src/tests/ctl/data/drill-rr.json" \
    >"$tmp/badfailover.json"
refused 65 "flow rr: recover.failover:" --mix "$tmp/badfailover.json" --fault peer-kill

# --expect that does not hold: 1; a flow without a recovery policy never recovers: 2.
# shellcheck disable=SC2086
timeout 60 "$bin" drill --mix "$pp" --fault peer-kill --at 0.2 --for 0.3 --expect 'detect<0.000001s' \
    $peer >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "expected detect<1e-06, got" "$tmp/err" ||
    fail "--expect not held: status $rc, $(cat "$tmp/err")"
jq 'del(.flows[0].recover)' "$pp" >"$tmp/norecover.json"
# shellcheck disable=SC2086
timeout 60 "$bin" drill --mix "$tmp/norecover.json" --fault peer-kill --at 0.2 --for 0.3 $peer \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "1 never recovered" "$tmp/out" ||
    fail "no policy: status $rc, $(cat "$tmp/out" "$tmp/err")"

# Interrupted after its first repetition, a drill leaves what it measured in -o FILE.
# shellcheck disable=SC2086
"$bin" drill --mix "$pp" --fault peer-kill --at 0.2 --for 0.3 --repeat 50 $peer \
    -o "$tmp/partial.json" >/dev/null 2>&1 &
dpid=$!
for _ in $(seq 1 200); do
    [ -s "$tmp/partial.json" ] && break
    sleep 0.05
done
kill -TERM "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
n=$(jq '.repetitions | length' "$tmp/partial.json" 2>/dev/null)
c=$(jq '.complete' "$tmp/partial.json" 2>/dev/null)
[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -lt 50 ] && [ "$c" = false ] ||
    fail "interrupted drill: '$n' repetitions, complete '$c'"

[ "$fails" -eq 0 ] || exit 1
echo "all drill checks passed"
