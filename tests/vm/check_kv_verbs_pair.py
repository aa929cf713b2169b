#!/usr/bin/env python3
"""check_kv_verbs_pair: judge the KV runs over verbs between two guests (OUTDIR/a): the wire
against what was posted. The reader's port received at least the sum over the whole run's
descriptors of ceil(length / path MTU) packets, and its eth0 at least the payload in bytes
(rdma_rxe has no byte counters; the netdev's count the RoCE v2 frames). The whole run is the
window's requests and the warm-up's: at least the window's, so the window is the bound."""
import json, math, os, sys

out = os.path.join(sys.argv[1], "a")
fails = 0


def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        fails += 1


for name, desc_len, reader in [("kv-vllm", 4096, "a"), ("kv-sglang", 65536, "b")]:
    try:
        rc = int(open(os.path.join(out, name + ".rc")).read())
        f = json.load(open(os.path.join(out, name + ".json")))["phases"][0]["flows"][0]
        p = f["points"][0]
        n, kv, mtu = p["ops"], p["kv"], f["conditions"]["path_mtu"]
        check(rc == 0 and f["status"] == "ok" and n >= 1,
              "%s: exit %d, %s, %d requests, per request p50 %.0f us" %
              (name, rc, f["status"], n, p["latency"]["p50"] if n else float("nan")))
        rx0, tx0, rp0, sp0, rx1, tx1, rp1, sp1 = (
            int(x) for x in open(os.path.join(out, name + ".hw")).read().split())
        pkts = kv["descriptors"] * math.ceil(desc_len / mtu)
        if reader == "a":  # a READs: the responses arrive at a
            check(rp1 - rp0 >= pkts and rx1 - rx0 >= p["payload_bytes"],
                  "%s: a's rxe0 rcvd_pkts +%d >= %d; eth0 rx_bytes +%d >= payload %d B "
                  "(x%.3f: headers, requests' acks)" %
                  (name, rp1 - rp0, pkts, rx1 - rx0, p["payload_bytes"],
                   (rx1 - rx0) / max(p["payload_bytes"], 1)))
        else:  # a WRITEs: the data leaves a
            check(sp1 - sp0 >= pkts and tx1 - tx0 >= p["payload_bytes"],
                  "%s: a's rxe0 sent_pkts +%d >= %d; eth0 tx_bytes +%d >= payload %d B (x%.3f)" %
                  (name, sp1 - sp0, pkts, tx1 - tx0, p["payload_bytes"],
                   (tx1 - tx0) / max(p["payload_bytes"], 1)))
    except Exception as e:
        check(False, "%s: %r" % (name, e))
print("%d failed" % fails)
sys.exit(1 if fails else 0)
