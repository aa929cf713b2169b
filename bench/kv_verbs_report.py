#!/usr/bin/env python3
"""kv_verbs_report: fabtop's kv goodput over verbs against ib_read_bw / ib_write_bw (same
descriptor size and depth) from bench/kv_verbs.guest.sh. fabtop's goodput is the requests'
payload over the measured window (per-request notifications and the gaps between requests
included); perftest's "BW average" is in MB/sec of 2^20 bytes, converted to Gb/s (10^9
bit/s). The cost of issuing descriptors: fabtop's work requests posted (descriptors and
notifications) per CPU second of the posting thread (CLOCK_THREAD_CPUTIME_ID over the measured
requests, busy-polling included), and per CPU second inside ibv_post_send alone: work requests
per second per core."""
import json, os, re, statistics, sys

out = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def fabtop(name, i):
    with open(os.path.join(out, "fabtop-%s-%d.json" % (name, i))) as f:
        fl = json.load(f)["phases"][0]["flows"][0]
    p = fl["points"][0]
    c = p["kv"]["issue_cost"]
    return (p["goodput_gbps"], p["latency"]["p50"], p["ops"],
            c["work_requests_per_thread_cpu_s"], c["work_requests_per_post_cpu_s"])


def perftest(name, i):
    txt = open(os.path.join(out, "perftest-%s-%d.out" % (name, i))).read()
    rows = [l.split() for l in txt.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]", l)]
    if not rows:
        raise ValueError("no result row in perftest-%s-%d.out" % (name, i))
    return float(rows[-1][3]) * 2**20 * 8 / 1e9


def summary(v):
    v = sorted(v)
    return "median %.3f (min %.3f, max %.3f, n=%d)" % (statistics.median(v), v[0], v[-1], len(v))


fails = 0
for name, what in [("read4k", "vLLM READ 4 KiB x 1,024 a request, depth 16, 1 QP, Gb/s"),
                   ("write64k", "SGLang WRITE 64 KiB x 64 a request, depth 16, 1 QP, Gb/s")]:
    f, p, ratio, lat, reqs, wth, wpo = [], [], [], [], [], [], []
    for i in range(1, rounds + 1):
        try:
            (g, l, n, t, o), b = fabtop(name, i), perftest(name, i)
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            print("  round %d %s: %s" % (i, name, e))
            continue
        f.append(g)
        p.append(b)
        lat.append(l / 1000)
        reqs.append(n)
        wth.append(t)
        wpo.append(o)
        if b > 0:
            ratio.append(g / b)
    print(what)
    if not ratio:
        print("  no complete round")
        fails += 1
        continue
    print("  fabtop   " + summary(f))
    print("  perftest " + summary(p))
    print("  fabtop per request p50 ms " + summary(lat) + ", requests " + summary(reqs))
    med = statistics.median(ratio)
    ok = med >= 0.9
    print("  ratio fabtop/perftest " + summary(ratio) + "  target >= 0.90: " +
          ("met" if ok else "MISSED"))
    print("  fabtop work requests per second per core, posting thread CPU " + summary(wth))
    print("  fabtop work requests per second per core, inside ibv_post_send " + summary(wpo))
    fails += not ok
sys.exit(1 if fails else 0)
