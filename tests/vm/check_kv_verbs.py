#!/usr/bin/env python3
"""check_kv_verbs: judge the KV runs over verbs the guest left in OUTDIR; PASS/FAIL per check.

Per request: the count, per-request latency (kind per_request, positive), bytes = requests x
descriptors x their size, per-descriptor latency no later than the request. The wire against
what was posted: rdma_rxe has no byte counters, so the packets the port received are at least
the sum over the window's descriptors of ceil(length / path MTU) (a lower bound: loopback
counts both ends, requests, ACKs and the warm-up too), and the bytes the netdevs received
(lo carries the guest's loopback) at least the window's payload."""
import json, math, os, sys

out = sys.argv[1]
fails = 0


def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        fails += 1


for name, desc_len, per_req, ndesc in [("kv-vllm", 4096, 32 * 2 * 8 * 4096, 512),
                                       ("kv-sglang", 8 * 8192, 32 * 8 * 8192, 32),
                                       ("kv-vllm-poisson", 4096, 32 * 2 * 8 * 4096, 512)]:
    try:
        rc = int(open(os.path.join(out, name + ".rc")).read())
        r = json.load(open(os.path.join(out, name + ".json")))
        f = r["phases"][0]["flows"][0]
        p = f["points"][0]
        lat, kv = p["latency"], p["kv"]
        n = p["ops"]
        c = f["conditions"]
        check(rc == 0 and f["status"] == "ok", "%s: exit %d, status %s %s" %
              (name, rc, f["status"], f.get("error") or ""))
        # The window's counters and the histogram are read apart from the worker's updates: a
        # request ending at a window's edge may count on one side only (seen under TCG).
        check(f["latency_kind"] == "per_request" and lat["kind"] == "per_request" and
              abs(lat["count"] - n) <= 1 and n >= 2 and
              0 < lat["min"] <= lat["p50"] <= lat["p99.9"],
              "%s: %d requests, per request p50 %.0f us, p99 %.0f us, p99.9 %.0f us" %
              (name, n, lat["p50"], lat["p99"], lat["p99.9"]))
        check(kv["descriptors_per_request_min"] == ndesc and
              kv["bytes_per_request_min"] == per_req and p["payload_bytes"] % per_req == 0 and
              abs(p["payload_bytes"] // per_req - n) <= 1,
              "%s: %d descriptors of %d B a request, %d B moved = requests x %d B" %
              (name, ndesc, desc_len, p["payload_bytes"], per_req))
        d = kv["per_descriptor"]
        check(0 < d["p50_us"] <= d["max_us"] <= lat["max"] * 1.01,
              "%s: per descriptor p50 %.0f us, p99.9 %.0f us (%s)" %
              (name, d["p50_us"], d["p99.9_us"], d["kind"]))
        k = c["kv"]
        check(k["sge_per_work_request"] == 1 and k["qps_total"] == k["qps"] and
              (k["engine"] != "vllm" or k["outstanding_per_qp"] <= k["qp_max_rd_atomic"]),
              "%s: %d QP(s), %d outstanding per QP (max_qp_rd_atom %s, QP max_rd_atomic %d), "
              "doorbell batch %d" % (name, k["qps_total"], k["outstanding_per_qp"],
                                     k["device_max_qp_rd_atom"], k["qp_max_rd_atomic"],
                                     k["doorbell_batch"]))
        s0, r0, s1, r1 = (int(x) for x in open(os.path.join(out, name + ".hw")).read().split())
        mtu = c["path_mtu"]
        need = kv["descriptors"] * math.ceil(desc_len / mtu)
        check(r1 - r0 >= need,
              "%s: rxe0 rcvd_pkts +%d >= %d (the window's %d descriptors x ceil(%d / MTU %d))" %
              (name, r1 - r0, need, kv["descriptors"], desc_len, mtu))
    except Exception as e:
        check(False, "%s: %r" % (name, e))

# TensorRT-LLM by the trace: requests differ (prompt lengths, prefix reuse), whole blocks of
# 16 KiB, as many WRITEs as blocks.
try:
    r = json.load(open(os.path.join(out, "kv-trtllm-trace.json")))
    f = r["phases"][0]["flows"][0]
    p = f["points"][0]
    kv, n = p["kv"], p["ops"]
    lo, hi = kv["bytes_per_request_min"], kv["bytes_per_request_max"]
    check(f["status"] == "ok" and n >= 2 and lo < hi and
          (n - 1) * lo <= p["payload_bytes"] <= (n + 1) * hi and
          p["payload_bytes"] % 16384 == 0 and kv["descriptors_per_request_max"] * 16384 == hi,
          "kv-trtllm-trace: %s, %d requests of %d to %d B (blocks of 16 KiB), %d B moved" %
          (f["status"], n, lo, hi, p["payload_bytes"]))
    s0, r0, s1, r1 = (int(x) for x in open(os.path.join(out, "kv-trtllm-trace.hw")).read().split())
    need = kv["descriptors"] * math.ceil(16384 / f["conditions"]["path_mtu"])
    check(r1 - r0 >= need, "kv-trtllm-trace: rxe0 rcvd_pkts +%d >= %d" % (r1 - r0, need))
except Exception as e:
    check(False, "kv-trtllm-trace: %r" % e)

# Poisson at 2 per second: about 6 requests in the 3 s window, not back to back.
try:
    r = json.load(open(os.path.join(out, "kv-vllm-poisson.json")))
    n = r["phases"][0]["flows"][0]["points"][0]["ops"]
    check(2 <= n <= 14, "kv-vllm-poisson: %d requests in 3 s at 2 per second" % n)
except Exception as e:
    check(False, "kv-vllm-poisson: %r" % e)

print("%d failed" % fails)
sys.exit(1 if fails else 0)
