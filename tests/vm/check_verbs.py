#!/usr/bin/env python3
"""check_verbs: judge the verbs runs the guest left in OUTDIR; PASS/FAIL per check."""
import json, math, os, sys

out = sys.argv[1]
fails = 0

def res(name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)

def rc(name):
    with open(os.path.join(out, name + ".rc")) as f:
        return int(f.read().strip())

def check(ok, what):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        fails += 1

def flow(r, i=0):
    return r["phases"][0]["flows"][i]

def point(r, i=0, p=0):
    return flow(r, i)["points"][p]

for name, kind in [("write-lat-2", "half_round_trip"), ("write-lat-4k", "half_round_trip"),
                   ("send-lat-2", "half_round_trip"), ("read-lat-2", "round_trip"),
                   ("write-comp-2", "per_operation"), ("write-imm-2", "half_round_trip")]:
    try:
        r = res(name)
        f = flow(r)
        lat = point(r)["latency"]
        ok = rc(name) == 0 and f["status"] == "ok" and f["latency_kind"] == kind and \
            lat["count"] >= 10 and 0 < lat["p50"] < 1000000
        check(ok, "%s: %s, %d samples, p50 %.1f us, p99 %.1f us (%s)" %
              (name, f["status"], lat["count"], lat["p50"], lat["p99"], kind))
    except Exception as e:  # a missing file or field is a failure with its reason
        check(False, "%s: %r" % (name, e))

try:
    r = res("write-sweep")
    pts = flow(r)["points"]
    check(rc("write-sweep") == 0 and [p["size_bytes"] for p in pts] == [2, 64, 2048] and
          all(p["latency"]["count"] > 20 for p in pts),
          "write-sweep: sizes %s each measured" % [p["size_bytes"] for p in pts])
except Exception as e:
    check(False, "write-sweep: %r" % e)

for name in ["write-bw-64k", "send-bw-64k", "read-bw-64k", "write-bw-4qp", "send-rx-64k",
             "write-bidir"]:
    try:
        r = res(name)
        p = point(r)
        check(rc(name) == 0 and flow(r)["status"] == "ok" and p["goodput_gbps"] > 0 and p["ops"] > 0,
              "%s: %.3f Gb/s, %d messages, %d workers" %
              (name, p["goodput_gbps"], p["ops"], flow(r)["workers"]))
    except Exception as e:
        check(False, "%s: %r" % (name, e))

try:
    r = res("write-bw-4qp")
    c = flow(r)["conditions"]
    check(c["queue_pairs"] == 4 and c["link_layer"].startswith("Ethernet") and
          c["gid_type"] == "RoCE v2" and c["path_mtu"] in (1024, 2048, 4096) and
          c["rdma_device"] == "rxe0" and c["netdev"] == "veth0" and
          c["setup_s"]["memory_registration"] >= 0,
          "conditions: %s GID %d (%s %s) on %s, MTU %d, %d QPs, registration %.2f ms/MiB, dcb %s" %
          (c["rdma_device"], c["gid_index"], c["gid_type"], c["gid"], c["netdev"], c["path_mtu"],
           c["queue_pairs"], 1e3 * c["setup_s"]["registration_per_mib"],
           json.dumps(c.get("dcb"))))
except Exception as e:
    check(False, "conditions: %r" % e)

try:
    r = res("fanin")
    fl = r["phases"][0]["flows"]
    check(rc("fanin") == 0 and len(fl) == 3 and all(f["status"] == "ok" for f in fl) and
          all(f["points"][0]["goodput_gbps"] > 0 for f in fl),
          "fan-in of 3 QPs into one receiver: " +
          ", ".join("%s %s" % (f["name"], "%.3f Gb/s" % f["points"][0]["goodput_gbps"]
                               if f["status"] == "ok" else f["error"]) for f in fl))
except Exception as e:
    check(False, "fanin: %r" % e)

for name in ["write-lat-cm", "write-bw-cm"]:
    try:
        r = res(name)
        f = flow(r)
        c = f["conditions"]
        check(rc(name) == 0 and f["status"] == "ok" and c["connection"].startswith("librdmacm") and
              point(r)["ops"] > 0 and c["queue_pairs"] == (2 if "bw" in name else 1),
              "%s: connected through %s; %d operations" % (name, c["connection"][:40],
                                                          point(r)["ops"]))
    except Exception as e:
        check(False, "%s: %r" % (name, e))

# hw_counters: at least the packets this WRITE run sent (one per MTU-sized piece of each
# message); loopback counts both directions, ACKs and spurious retransmissions, so only a
# lower bound is asserted.
try:
    s0, s1, r0, r1 = (int(x) for x in open(os.path.join(out, "write-bw-64k.hw")).read().split())
    r = res("write-bw-64k")
    f = flow(r)
    mtu = f["conditions"]["path_mtu"]
    # every message of the run, warm-up included: the worker's total, not the window's
    sent_msgs = point(r)["ops"]
    need = sent_msgs * math.ceil(65536 / mtu)
    check(s1 - s0 >= need and r1 - r0 >= need,
          "hw_counters: sent_pkts +%d, rcvd_pkts +%d >= %d packets of the measured window" %
          (s1 - s0, r1 - r0, need))
except Exception as e:
    check(False, "hw_counters: %r" % e)

# The mixes name no RDMA port: the results' port-wide counters watch the one the transport
# chose (rxe0 port 1, and its netdev), and its packet counters moved in the measured phase.
try:
    r = res("write-bw-64k")
    c = [p["counters"] for p in r["phases"] if p.get("counters")][-1]
    sent = [x for x in c["counters"] if x["object"].startswith("rxe0") and
            x["name"] == "sent_pkts"]
    check(any(o.startswith("rxe0") for o in c["objects"]) and
          any(o.startswith("veth0") for o in c["objects"]) and
          not any("RDMA port unknown" in n for n in c["notes"]) and
          len(sent) == 1 and (sent[0]["delta"] or 0) > 0,
          "counters of the port the transport chose: objects %s, sent_pkts +%s" %
          (c["objects"], sent[0]["delta"] if sent else None))
except Exception as e:
    check(False, "counters of the chosen port: %r" % e)

try:
    txt = open(os.path.join(out, "bad-gid.out")).read()
    check(rc("bad-gid") != 0 and "GIDs on rxe0 port 1" in txt and "GID index 77" in txt,
          "wrong GID index: the error names the GIDs that exist")
except Exception as e:
    check(False, "bad-gid: %r" % e)

try:
    txt = open(os.path.join(out, "memlock.out")).read()
    check(rc("memlock") != 0 and "RLIMIT_MEMLOCK is 64 KiB" in txt and "ulimit -l" in txt,
          "RLIMIT_MEMLOCK of 64 KiB, unprivileged: %s" %
          [l for l in txt.splitlines() if "RLIMIT" in l][0].strip()[:200])
except Exception as e:
    check(False, "memlock: %r" % e)

# The test's own queue pairs on an RDMA counter: rdma_rxe has none per QP, and the kernel
# answers the bind with ENOMEM (rdma_counter_bind_qpn_alloc); unprivileged it answers EPERM
# first. The results say so apart from the port-wide counters, and the runs succeed.
for name, qps, err, words in [("write-lat-2", 1, "ENOMEM", "rdma_rxe has no per-QP counters"),
                              ("write-bw-4qp", 4, "ENOMEM", "rdma_rxe has no per-QP counters"),
                              ("write-lat-cm", 1, "ENOMEM", "rdma_rxe has no per-QP counters"),
                              ("qpc-nobody", 1, "EPERM", "needs CAP_NET_ADMIN")]:
    try:
        r = res(name)
        f = flow(r)
        q = f["qp_counters"]
        ev = [e for e in r["events"] if "QP counter not bound" in e]
        ok = rc(name) == 0 and f["status"] == "ok" and q["status"] == "not bound" and \
            q["errno"] == err and words in q["reason"] and "\n" not in q["reason"] and \
            q["scope"].startswith("this test's queue pairs") and len(q["qpns"]) == qps and \
            q["device"] == "rxe0" and q["port"] == 1 and q["counters"] == [] and \
            q["counter_id"] is None and len(ev) == 1 and \
            ("QP %d on rxe0 port 1" % q["qpns"][0]) in q["reason"] and \
            r["phases"][0]["counters"] is not None
        check(ok, "%s: this test's %d queue pair%s not bound (%s), run %s: %s" %
              (name, len(q["qpns"]), "s" if qps > 1 else "", q["errno"], f["status"], q["reason"]))
    except Exception as e:
        check(False, "%s: qp_counters: %r" % (name, e))
try:
    txt = open(os.path.join(out, "qp-counters-after.json")).read().strip()
    left = json.loads(txt) if txt else []  # iproute2 prints nothing when there are none
    check(left == [], "no RDMA counter left bound after the runs: %s" % json.dumps(left))
except Exception as e:
    check(False, "qp counters after the runs: %r" % e)

# Return routability: every verbs run above passed the agent's check; the breaking clients
# were refused, their QPs destroyed, and the agent sent nothing but the nonce.
def text(name):
    with open(os.path.join(out, name)) as f:
        return f.read()

try:
    log = text("serve.log")
    echoed = log.count("verbs: the client echoed the nonces of ")
    ev = [e for e in res("write-lat-2")["events"] if "checked the return path" in e]
    check(echoed >= 10 and ev, "accepted: %d verbs flows echoed the agent's nonces; %s" %
          (echoed, ev[0] if ev else None))
    noecho = text("rr-noecho.out")
    check("rc=-71: peer 127.0.0.1:7470: verbs.echo: no echo of the nonces within 1000 ms; the "
          "agent destroyed the flow's 1 queue pair" in noecho and
          "no echo of the nonces within 1000 ms; the agent destroyed the flow's 1 queue pair" in log,
          "no echo: QP destroyed after 1 s, the late echo refused: %s" % noecho.strip())
    qps = dict(l.split() for l in text("rr-qps.out").splitlines())
    check(qps.get("during") == "1" and qps.get("after") == "0" and qps.get("end") == "0",
          "the agent's QPs (rdma res show qp): %s" % qps)
    wrong = text("rr-wrongecho.out")
    check("rc=-13: peer 127.0.0.1:7470: verbs.echo: the nonce of queue pair 0 differs from the "
          "one the agent wrote over it; the agent destroyed the flow's 1 queue pair" in wrong,
          "wrong echo: %s" % wrong.strip())
    red = text("rr-redirect.out")
    delta = int(red.split("sent_pkts delta")[1].split()[0])
    check("rc=-113: peer 127.0.0.1:7470: verbs.nonce: rxe0: the nonce WRITE on queue pair 0 "
          "failed: transport retry counter exceeded; the agent destroyed" in red and
          0 < delta <= 8,
          "pointed at a QP nobody owns: refused, %d packets sent in all: %s" %
          (delta, red.strip().splitlines()[0]))
except Exception as e:
    check(False, "return routability: %r" % e)

try:
    r = res("port-down")
    ev = [e for e in r["events"] if "port error" in e.lower()]
    check(len(ev) > 0, "port down mid-run: event %r; flow %s" %
          (ev[0] if ev else None, flow(r)["status"]))
except Exception as e:
    check(False, "port-down: %r" % e)

# The ping-pong runs back to back (tens of microseconds each), so the peer died right after
# the last completed operation: the time from that operation to the completion error is the
# detection time (busybox date has no sub-second clock to stamp the kill itself).
try:
    r = res("fault-kill")
    f = flow(r)
    c = f["conditions"]
    bound = c["peer_loss_detect_bound_s"]
    detected = f["detected_after_last_progress_s"]
    check(rc("fault-kill") == 2 and f["status"] == "failed" and
          "retry" in f["error"].lower() and 0 <= detected <= bound and
          point(r)["latency"]["count"] > 0,
          "peer killed: %s after %.3f s (bound %.3f s = (retry_cnt+1) x 4 x T_o %.3f s + probe "
          "after %.3f s): %s" % (f["status"], detected, bound, c["qp_timeout_bound_s"],
                                 c["liveness_probe_after_s"], f["error"]))
except Exception as e:
    check(False, "fault-kill: %r" % e)

sys.exit(1 if fails else 0)
