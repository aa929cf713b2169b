#!/usr/bin/env python3
"""check_ring_verbs: judge the ring all-reduce runs over verbs the guest left in OUTDIR; PASS/FAIL
per check. Per flow: labelled as the ring pattern over verbs (not NCCL); 2 (N - 1) steps of
ceil(S / N) bytes each way per all-reduce (payload = all-reduces x 2 x steps x chunk); one
latency sample per all-reduce, at least steps x the shortest step; busbw = algbw x 2 (N - 1) / N.
The wire: rdma_rxe has no byte counters, so the packets the port sent are at least both ends'
SENDs, 2 x all-reduces x steps x ceil(chunk / path MTU) (loopback counts both ends; a lower
bound, the warm-up and ACKs come on top). A model's mix over verbs runs its TP flows so."""
import json, math, os, sys

out = sys.argv[1]
fails = 0


def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        fails += 1


for name, S, N in [("ring4", 65536, 4), ("ring3", 65537, 3)]:
    try:
        rc = int(open(os.path.join(out, name + ".rc")).read())
        r = json.load(open(os.path.join(out, name + ".json")))
        f = r["phases"][0]["flows"][0]
        p = f["points"][0]
        lat, g = p["latency"], p["ring"]
        c = f["conditions"]
        steps, chunk = 2 * (N - 1), -(-S // N)
        label = ("ring all-reduce pattern over verbs, %d ranks emulated between this host and "
                 "its peer (not NCCL)" % N)
        check(rc == 0 and f["status"] == "ok", "%s: exit %d, status %s %s" %
              (name, rc, f["status"], f.get("error") or ""))
        check(c["ring"]["pattern"] == label and g["pattern"] == label and
              f["op"] == "collective" and f["latency_kind"] == "per_operation",
              "%s: labelled '%s'" % (name, g["pattern"]))
        n = p["ops"]
        check(g["chunk_bytes"] == chunk and g["steps_per_allreduce"] == steps and
              g["bytes_per_allreduce_each_way"] == steps * chunk and n >= 2 and
              p["payload_bytes"] == n * 2 * steps * chunk,
              "%s: %d all-reduces of %d steps of %d B each way, %d B moved" %
              (name, n, steps, chunk, p["payload_bytes"]))
        check(abs(lat["count"] - n) <= 1 and abs(g["allreduces"] - n) <= 1 and
              g["steps"] == g["allreduces"] * steps and
              lat["min"] >= steps * g["step_min_us"] * 0.99 and
              g["allreduce_mean_us"] >= steps * g["step_mean_us"] * (1 - 1e-9),
              "%s: per all-reduce p50 %.0f us, min %.0f us >= %d x step min %.1f us; step mean "
              "%.1f us" % (name, lat["p50"], lat["min"], steps, g["step_min_us"],
                           g["step_mean_us"]))
        alg = S / (g["allreduce_mean_us"] * 1e3)
        check(abs(g["algbw_GBps"] - alg) <= 1e-9 * alg and
              abs(g["busbw_GBps"] - alg * steps / N) <= 1e-9 * alg,
              "%s: algbw %.4f GB/s, busbw %.4f GB/s (x %d/%d)" %
              (name, g["algbw_GBps"], g["busbw_GBps"], steps, N))
        s0, r0, s1, r1 = (int(x) for x in open(os.path.join(out, name + ".hw")).read().split())
        mtu = c["path_mtu"]
        want = 2 * g["allreduces"] * steps * math.ceil(chunk / mtu)
        check(s1 - s0 >= want, "%s: rxe0 sent %d packets, at least %d (2 ends x %d all-reduces "
              "x %d steps x ceil(%d / %d))" % (name, s1 - s0, want, g["allreduces"], steps,
                                              chunk, mtu))
    except (OSError, KeyError, ValueError, IndexError, TypeError) as e:
        check(False, "%s: no usable results (%s: %s)" % (name, type(e).__name__, e))

# The model's mix over verbs: its TP flows are the ring pattern for 2 ranks (2 steps of 4 KiB
# for the decode all-reduce of 8 KiB), per_step the all-reduces of a decode step.
try:
    rc = int(open(os.path.join(out, "model.rc")).read())
    d = json.load(open(os.path.join(out, "model.json")))
    mf = {f["name"]: f for f in d["mix"]["flows"]}
    check(rc == 0 and mf["tp-decode-ring2"]["op"] == "collective" and
          mf["tp-decode-ring2"]["per_step"] == 64 and
          mf["tp-decode-ring2"]["params"]["ranks"] == 2,
          "model: exit %d, tp-decode-ring2 an all-reduce of 2 ranks, 64 per decode step" % rc)
    seen = 0
    for ph in d["phases"]:
        for f in ph["flows"]:
            if f["name"] != "tp-decode-ring2":
                continue
            g = f["points"][0]["ring"]
            seen += 1
            check(f["status"] == "ok" and g["pattern"].startswith(
                "ring all-reduce pattern over verbs, 2 ranks emulated") and
                  g["steps_per_allreduce"] == 2 and g["chunk_bytes"] == 4096 and
                  f["points"][0]["ops"] > 0 and
                  f["points"][0]["payload_bytes"] == f["points"][0]["ops"] * 2 * 2 * 4096,
                  "model %s: %d all-reduces of 2 steps of 4096 B, step mean %.0f us" %
                  (ph["name"], f["points"][0]["ops"], g.get("step_mean_us", -1)))
    check(seen == 2, "model: the decode all-reduce ran quiet and loaded (%d)" % seen)
except (OSError, KeyError, ValueError, IndexError, TypeError) as e:
    check(False, "model: no usable results (%s: %s)" % (type(e).__name__, e))

sys.exit(1 if fails else 0)
