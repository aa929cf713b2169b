#!/bin/sh
# netns_serve_metrics: `fabtop serve --metrics ADDR:PORT` scraped over real HTTP inside the
# test's own namespace while a real `fabtop run` streams from that agent through an htb qdisc
# on its veth. Every scrape passes `promtool check metrics` without a word; the series are
# those `fabtop counters --prometheus --snmp --qdisc --ethtool` prints there, plus the agent's
# own (sessions now, the limit, admitted and refused since the start, the start time); the
# qdisc's bytes grow between scrapes, a session shows while the run is on and is counted after
# it, a client with the wrong key is counted as refused. HTTP: 404 off /metrics, 405 for a
# POST, HEAD without a body; twenty idle connections that never send a request delay a scrape
# by the idle timeout at most. A port in use: one line naming it and 69. A real Prometheus
# server (Debian's prometheus) scrapes it and stores the agent's series. SIGTERM: exit 0 and
# the port closed. Root only (77 otherwise).
. "$FABTOP_SRC/tests/netns/lib.sh"
need_netns
command -v promtool >/dev/null || skip "promtool is not installed (Debian package prometheus)"
command -v curl >/dev/null || skip "curl is not installed"
command -v tc >/dev/null || skip "tc (iproute2) is not installed"
. "$(dirname "$0")/prom_lib.sh"

mkns a
mkns b
link a va b vb
addr a va 10.84.0.1/24
addr b vb 10.84.0.2/24
# The agent sends the stream (direction rx): through this htb class on its side.
nsx a tc qdisc add dev va root handle 1: htb default 10 r2q 200
nsx a tc class add dev va parent 1: classid 1:10 htb rate 300mbit ceil 300mbit
mkkey >/dev/null
URL=http://127.0.0.1:9470/metrics
serve a 10.84.0.1 "$TMP/serve.log" --metrics 127.0.0.1:9470
wait_for "the metrics line" "grep -q 'metrics on http://127.0.0.1:9470/metrics' $TMP/serve.log"
scrape() { nsx a curl -sf --max-time 20 "$URL" >"$1" || fail "scrape $URL: curl exit $?"; }
# series FILE...: each exposition's samples as FILE.json, {"name{labels}": value}.
series() {
    python3 -c '
import json, sys
for path in sys.argv[1:]:
    s = {}
    for line in open(path).read().splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            s[k] = float(v)
    json.dump(s, open(path + ".json", "w"))' "$@" || fail "cannot read the samples of $*"
}

scrape "$TMP/s1.prom"
promcheck "$TMP/s1.prom"
nsx a "$FABTOP" counters --prometheus --snmp --qdisc --ethtool >"$TMP/ctr.prom" ||
    fail "fabtop counters exited $?"
series "$TMP/s1.prom" "$TMP/ctr.prom"
python3 - "$TMP/s1.prom" "$TMP/ctr.prom" <<'PY' || exit 1
import json, sys, time
m, c = (json.load(open(p + ".json")) for p in sys.argv[1:3])
agent = {k: v for k, v in m.items() if k.startswith("fabtop_agent_")}
rest = set(m) - set(agent)
assert rest == set(c), ("series differ from fabtop counters", sorted(rest ^ set(c))[:10])
assert agent["fabtop_agent_sessions"] == 0, agent
assert agent["fabtop_agent_max_sessions"] == 8, agent
assert agent["fabtop_agent_sessions_admitted_total"] == 0, agent
assert agent["fabtop_agent_connections_refused_total"] == 0, agent
assert abs(agent["fabtop_agent_start_time_seconds"] - time.time()) < 60, agent
assert 'fabtop_qdisc_bytes_total{device="va",handle="1:",kind="htb"}' in m
print("first scrape: %d series, %d of the agent's, the rest as fabtop counters has them" %
      (len(m), len(agent)))
PY
grep -q '^# TYPE fabtop_agent_sessions_admitted_total counter$' "$TMP/s1.prom" ||
    fail "admitted_total is not a counter"
grep -q '^# TYPE fabtop_agent_sessions gauge$' "$TMP/s1.prom" || fail "sessions is not a gauge"

cat >"$TMP/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "metrics-stream",
 "phases": ["loaded"],
 "flows": [
  {"name": "bulk", "op": "stream", "direction": "rx", "size": "64KiB", "warmup_s": 0.2,
   "duration_s": 2, "peer": "10.84.0.1"}
 ]}
J
nsx b "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/key" -o "$TMP/res.json" \
    >"$TMP/run.out" 2>&1 &
R=$!
PIDS="$PIDS $R"
# Scrapes while the run goes on: each a whole exposition; one shows the session.
i=0 seen=0
while kill -0 "$R" 2>/dev/null; do
    i=$((i + 1))
    scrape "$TMP/during$i.prom"
    grep -q '^fabtop_agent_sessions [1-9]' "$TMP/during$i.prom" && seen=1
    sleep 0.2
done
wait "$R" || { cat "$TMP/run.out"; fail "fabtop run exited $?"; }
[ "$seen" = 1 ] || fail "no scrape of $i during the run showed a session"
for f in "$TMP"/during*.prom; do promcheck "$f"; done
scrape "$TMP/s2.prom"
promcheck "$TMP/s2.prom"

# A client with another key: refused, and counted.
"$FABTOP" serve --gen-key "$TMP/other" >/dev/null
nsx b "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/other" -o "$TMP/bad.json" \
    >"$TMP/bad.out" 2>&1 && fail "a run with the wrong key succeeded"
wait_for "the refusal counted" \
    "nsx a curl -sf $URL | grep -q '^fabtop_agent_connections_refused_total [1-9]'"
scrape "$TMP/s3.prom"
promcheck "$TMP/s3.prom"
series "$TMP/s2.prom" "$TMP/s3.prom"
python3 - "$TMP/s1.prom" "$TMP/s2.prom" "$TMP/s3.prom" <<'PY' || exit 1
import json, sys
s1, s2, s3 = (json.load(open(p + ".json")) for p in sys.argv[1:])
qb = 'fabtop_qdisc_bytes_total{device="va",handle="1:",kind="htb"}'
moved = s2[qb] - s1[qb]
assert moved > 20e6, ("the stream went through the htb", s1[qb], s2[qb])
assert s2["fabtop_agent_sessions"] == 0, s2["fabtop_agent_sessions"]
assert s2["fabtop_agent_sessions_admitted_total"] >= 1, s2
assert s3["fabtop_agent_sessions_admitted_total"] == s2["fabtop_agent_sessions_admitted_total"]
assert s3["fabtop_agent_connections_refused_total"] >= 1, s3
print("after the run: qdisc 1: htb moved %.1f MB, %d session(s) admitted, %d refused" %
      (moved / 1e6, s2["fabtop_agent_sessions_admitted_total"],
       s3["fabtop_agent_connections_refused_total"]))
PY

# HTTP: other paths, other methods, HEAD.
code=$(nsx a curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9470/nope)
[ "$code" = 404 ] || fail "GET /nope: $code, not 404"
code=$(nsx a curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$URL")
[ "$code" = 405 ] || fail "POST /metrics: $code, not 405"
nsx a curl -sfI "$URL" >"$TMP/head.txt" || fail "HEAD /metrics failed"
grep -qi '^content-type: text/plain; version=0.0.4' "$TMP/head.txt" ||
    fail "HEAD: not the text format's content type: $(cat "$TMP/head.txt")"

# Twenty idle connections (more than the sixteen admitted at once), never a request: a scrape
# still gets through, within the idle timeout (10 s) and a margin.
nsx a python3 -c '
import socket, sys, time
s = [socket.create_connection(("127.0.0.1", 9470)) for _ in range(20)]
open(sys.argv[1], "w").write("open\n")
time.sleep(25)
' "$TMP/idle.up" &
IDLE=$!
PIDS="$PIDS $IDLE"
wait_for "the idle connections" "[ -s $TMP/idle.up ]"
t0=$(date +%s.%N)
scrape "$TMP/s4.prom"
t1=$(date +%s.%N)
promcheck "$TMP/s4.prom"
took=$(python3 -c "print('%.1f' % ($t1 - $t0))")
python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 13 else 1)" ||
    fail "a scrape behind twenty idle connections took $took s"
echo "a scrape behind twenty idle connections: $took s"
kill "$IDLE" 2>/dev/null

# The port taken: one line naming it, 69; the first agent serves on.
nsx a "$FABTOP" serve --listen 10.84.0.1:7471 --key-file "$TMP/key" --metrics 127.0.0.1:9470 \
    >"$TMP/dup.out" 2>"$TMP/dup.err"
rc=$?
[ "$rc" -eq 69 ] || fail "a second --metrics on the same port: exit $rc, not 69"
[ "$(wc -l <"$TMP/dup.err")" -eq 1 ] || fail "more than one line: $(cat "$TMP/dup.err")"
grep -q '127.0.0.1:9470 for --metrics: Address already in use' "$TMP/dup.err" ||
    fail "the line does not name the port: $(cat "$TMP/dup.err")"
scrape "$TMP/s5.prom"

# A real Prometheus server scrapes it: the target is up and the agent's series are stored,
# with the sessions the run was admitted in.
cat >"$TMP/prometheus.yml" <<'Y'
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: fabtop
    static_configs:
      - targets: ['127.0.0.1:9470']
Y
nsx a prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address=127.0.0.1:9091 >"$TMP/prometheus.log" 2>&1 &
PROM=$!
PIDS="$PIDS $PROM"
q() { nsx a curl -sf --max-time 5 "http://127.0.0.1:9091/api/v1/query?query=$1"; }
wait_for "Prometheus to scrape the agent" \
    "q 'up%7Bjob%3D%22fabtop%22%7D' | grep -q '\"value\":\[[0-9.]*,\"1\"\]'" 30 ||
    { tail -5 "$TMP/prometheus.log"; fail "Prometheus never scraped the agent"; }
q fabtop_agent_sessions_admitted_total >"$TMP/q.json" || fail "query failed"
python3 - "$TMP/q.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
r = d["data"]["result"]
assert d["status"] == "success" and len(r) == 1, d
v = float(r[0]["value"][1])
assert v >= 1, v
print("Prometheus %s: up, fabtop_agent_sessions_admitted_total %g" % (r[0]["metric"]["instance"], v))
PY
kill "$PROM"
wait "$PROM" 2>/dev/null

# SIGTERM: exit 0, the port closed.
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
src=$?
[ "$src" -eq 0 ] || fail "fabtop serve exited $src after SIGTERM"
grep -q 'fabtop serve: stopped' "$TMP/serve.log" || fail "no 'stopped' line: $(tail -3 "$TMP/serve.log")"
nsx a curl -s --max-time 3 "$URL" >/dev/null && fail "the metrics port is still open"
pass "netns_serve_metrics"
