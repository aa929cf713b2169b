#!/bin/sh
# netns_kv: a vLLM-style KV pull (op kv over TCP) through the incast topology's htb bottleneck
# (lib.sh: the switch port towards the receiver at RATE_MBIT). Quiet, a request waits what the
# bottleneck predicts: its bytes on the wire / the rate; loaded, beside two neighbours streaming
# into the same receiver at a paced rate each (an incast), it waits its bytes / what the
# neighbours leave of the rate (measured: the neighbours' own wire rate in that phase). Both
# within 10 % at the median request, and the loaded wait longer than the quiet one.
. "$(dirname "$0")/lib.sh"
need_netns
RATE_MBIT=${RATE_MBIT:-100}
incast_topology 10.79.0
# A deeper queue than the incast test's 96 kB: the paced neighbours send 64 KiB at a time, and
# bursts into a shallow drop-tail queue cost the KV connection losses and retransmission
# timeouts (the link then idles: incast collapse, netns_incast's subject, not this test's).
nsx sw tc qdisc replace dev pr parent 1:10 handle 10: bfifo limit 2000000

# 8 layers x K and V x 32 pages of 4 KiB = 2 MiB per request, pulled from s1 (its agent
# writes the descriptors back, through the bottleneck); neighbours s2 and s3 at 20 Mbit/s.
cat >"$TMP/mix.json" <<'J'
{"format": "fabtop-mix", "version": 1, "name": "kv-incast-test",
 "phases": ["quiet", "loaded"],
 "flows": [
  {"name": "kv", "op": "kv", "size": 4096, "warmup_s": 0.5, "duration_s": 5,
   "peer": "10.79.0.11",
   "params": {"engine": "vllm", "layers": 8, "pages": 32, "depth": 64}},
  {"name": "nb2", "role": "background", "op": "stream", "direction": "rx", "size": "64KiB",
   "rate_gbps": 0.02, "warmup_s": 0.5, "peer": "10.79.0.12"},
  {"name": "nb3", "role": "background", "op": "stream", "direction": "rx", "size": "64KiB",
   "rate_gbps": 0.02, "warmup_s": 0.5, "peer": "10.79.0.13"}
 ]}
J
nsx r "$FABTOP" run --mix "$TMP/mix.json" --key-file "$TMP/key" -o "$TMP/res.json" \
    >"$TMP/run.out" 2>&1
rc=$?
cat "$TMP/run.out"
nsx sw tc -s class show dev pr | sed 's/^/    tc: /'
[ "$rc" -eq 0 ] || fail "fabtop run exited $rc"

python3 - "$TMP/res.json" "$RATE_MBIT" <<'PY' || fail "the KV request's wait is not what the bottleneck predicts"
import json, math, sys
r = json.load(open(sys.argv[1]))
rate = float(sys.argv[2]) * 1e6  # bit/s, as htb counts: Ethernet + IP + TCP headers
ph = {p["name"]: p for p in r["phases"]}
def flow(phase, name):
    return next(f for f in ph[phase]["flows"] if f["name"] == name)
bad = []
def wire_per_request(f):
    # The descriptors' bytes and the per-segment headers (Ethernet 14, IP 20, TCP 20 + 12 with
    # timestamps) of full-MSS segments: what htb counts of one request on its way in.
    p = f["points"][0]
    mss = f["conditions"]["mss_bytes"]
    payload = p["payload_bytes"] / p["ops"]
    return payload + math.ceil(payload / mss) * 66
q = flow("quiet", "kv")
l = flow("loaded", "kv")
for f in (q, l):
    if f["status"] != "ok":
        bad.append("kv %s" % f["status"])
wq = wire_per_request(q)
pred_q = wq * 8 / rate * 1e6  # us
got_q = q["points"][0]["latency"]["p50"]
nb = sum(flow("loaded", n)["points"][0]["wire_gbps"] for n in ("nb2", "nb3")) * 1e9
left = rate - nb
pred_l = wq * 8 / left * 1e6
got_l = l["points"][0]["latency"]["p50"]
print("request %.0f B on the wire; quiet: p50 %.0f us, predicted %.0f us (%+.1f%%), %d requests"
      % (wq, got_q, pred_q, 100 * (got_q / pred_q - 1), q["points"][0]["ops"]))
kvw = l["points"][0]["wire_gbps"] * 1e9
print("loaded: the bottleneck carried %.1f Mbit/s (kv %.1f, neighbours %.1f) of %.0f; kv mean %.0f us"
      % ((kvw + nb) / 1e6, kvw / 1e6, nb / 1e6, rate / 1e6, l["points"][0]["latency"]["mean"]))
print("loaded: neighbours %.1f Mbit/s, %.1f Mbit/s left; p50 %.0f us, predicted %.0f us "
      "(%+.1f%%), %d requests" % (nb / 1e6, left / 1e6, got_l, pred_l,
                                  100 * (got_l / pred_l - 1), l["points"][0]["ops"]))
if abs(got_q / pred_q - 1) > 0.10:
    bad.append("quiet wait off the prediction by more than 10%")
if abs(got_l / pred_l - 1) > 0.10:
    bad.append("loaded wait off the prediction by more than 10%")
if not got_l > 1.2 * got_q:
    bad.append("the wait did not grow under the incast")
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
pass "a KV request's wait through a ${RATE_MBIT} Mbit/s htb bottleneck, quiet and under an incast"
