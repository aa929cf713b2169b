#!/usr/bin/env python3
"""verbs_report: ratios of fabtop's verbs results to perftest's from bench/verbs.guest.sh."""
import json, os, re, statistics, sys

out = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11


def fabtop(name, i):
    with open(os.path.join(out, "fabtop-%s-%d.json" % (name, i))) as f:
        p = json.load(f)["phases"][0]["flows"][0]["points"][0]
    return p["latency"]["p50"] if name.startswith("lat") else p["goodput_gbps"]


def perftest(name, i):
    """ib_write_lat: t_typical (the median, usec, half round trip); ib_write_bw: BW average
    in MB/sec, where perftest's MB is 2^20 bytes, converted to Gb/s (10^9 bits/s)."""
    txt = open(os.path.join(out, "perftest-%s-%d.out" % (name, i))).read()
    rows = [l.split() for l in txt.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]", l)]
    if not rows:
        raise ValueError("no result row in perftest-%s-%d.out" % (name, i))
    r = rows[-1]
    if name.startswith("lat"):
        return float(r[4])
    return float(r[3]) * 2**20 * 8 / 1e9


def summary(v):
    v = sorted(v)
    return "median %.3f (min %.3f, max %.3f, n=%d)" % (statistics.median(v), v[0], v[-1], len(v))


fails = 0
for name, what, better, target in [("lat2", "WRITE latency 2 B, p50 us", "<=", 1.10),
                                    ("lat4k", "WRITE latency 4 KiB, p50 us", "<=", 1.10),
                                    ("bw64k", "WRITE bandwidth 64 KiB, Gb/s", ">=", 0.90)]:
    f, p, ratio = [], [], []
    for i in range(1, rounds + 1):
        try:
            a, b = fabtop(name, i), perftest(name, i)
        except (OSError, ValueError, KeyError, IndexError) as e:
            print("  round %d of %s missing: %s" % (i, name, e))
            continue
        f.append(a)
        p.append(b)
        ratio.append(a / b)
    if not ratio:
        print("%s: no complete round" % what)
        fails += 1
        continue
    med = statistics.median(ratio)
    ok = med <= target if better == "<=" else med >= target
    print("%s\n  fabtop   %s\n  perftest %s\n  ratio fabtop/perftest %s  target %s %.2f: %s" %
          (what, summary(f), summary(p), summary(ratio), better, target,
           "met" if ok else "NOT met"))
sys.exit(1 if fails else 0)
