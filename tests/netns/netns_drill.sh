#!/bin/sh
# netns_drill: `fabtop drill` across two network namespaces joined by a veth pair, the agent
# (`fabtop serve --max-fault 5`) in one, the drill in the other: peer-stall and peer-kill
# with the rr mix, --repeat 3: every detection within its bound, every recovery within the
# policy's deadline, every request accounted for, the agent's count equal to the client's,
# nothing left in the drill process. Root only (77 otherwise); lib.sh removes the namespaces
# and ends the agent it started on every exit.
. "$(dirname "$0")/lib.sh"
need_netns
command -v jq >/dev/null || skip "jq is not installed"
src=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
mkns a
mkns b
link a va b vb
addr a va 10.91.0.1/24
addr b vb 10.91.0.2/24
key=$(mkkey)
serve b 10.91.0.2 "$TMP/serve.log" --max-fault 5 --max-sessions 64
for fault in peer-stall peer-kill; do
    out="$TMP/$fault.json"
    nsx a timeout 120 "$FABTOP" drill --mix "$src/tests/ctl/data/drill-rr.json" --fault "$fault" \
        --at 0.3 --for 0.6 --repeat 3 --expect 'detect<0.6s,recover<8s' \
        --peer 10.91.0.2:7470 --key-file "$key" -o "$out" >"$TMP/text" 2>"$TMP/err" ||
        fail "$fault: status $?: $(cat "$TMP/err" "$TMP/text")"
    bad=$(jq '[.repetitions[] | .agent.agree as $a | .flows[] |
            select((.detect_ok and .recover_ok and $a and .requests.hanging == 0 and
                    .requests.issued == .requests.completed + .requests.failed +
                      .requests.abandoned) | not)] | length' "$out")
    leak=$(jq '.process | (.fds_after - .fds_before) + (.threads_after - .threads_before)' "$out")
    [ "$bad" = 0 ] && [ "$leak" = 0 ] && [ "$(jq '.repetitions | length' "$out")" = 3 ] ||
        fail "$fault: $bad bad drills, leak $leak: $(cat "$TMP/text")"
    pass "$fault across namespaces: $(grep -E '^(detect|recover):' "$TMP/text" | tr '\n' ';')"
done
grep -q "fault: peer-kill for 0.6 s on 3 sessions of 10.91.0.1" "$TMP/serve.log" ||
    fail "the agent did not log the kill: $(grep fault "$TMP/serve.log" | head -3)"
pass "the agent logged each fault"
