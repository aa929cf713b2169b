#!/usr/bin/env python3
"""tracecheck: check a Chrome trace event document (fabtop run --trace) for what Perfetto
needs and against the results document of the same run.

usage: tracecheck.py TRACE RESULTS [--ops]
  structure: a JSON object with a "traceEvents" list; every event has ph, ts, pid, tid
  (numbers, ts >= 0); X events have dur >= 0 and on one (pid, tid) never overlap unless
  one holds the other; b/e async events pair up by (cat, id); C events carry numeric args;
  i events a scope.
  content: one X event per phase (named "phase NAME", lasting its duration_s); one X event
  per flow and phase on that flow's thread, named and with its status; a point per measured
  size point with its ops and p99; a goodput counter sample per timeline entry with the
  timeline's value at its time; an instant per timed event of the document; sampled
  operations (async events "op FLOW") inside their flow's span, their median duration near
  the flow's p50 (twice it for a half round trip). With --ops there must be some."""
import json
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ns(v):
    return round(v * 1000)


def main():
    trace = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail("not an object with a traceEvents list")
    evs = trace["traceEvents"]
    by_tid, asyncs, counts = {}, {}, {}
    for e in evs:
        for k in ("ph", "ts", "pid", "tid"):
            if k not in e:
                fail("event without %s: %r" % (k, e))
        if not all(isinstance(e[k], (int, float)) for k in ("ts", "pid", "tid")) or e["ts"] < 0:
            fail("bad ts/pid/tid: %r" % e)
        counts[e["ph"]] = counts.get(e["ph"], 0) + 1
        if e["ph"] == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                fail("X without a dur >= 0: %r" % e)
            by_tid.setdefault((e["pid"], e["tid"]), []).append(e)
        elif e["ph"] in ("b", "e"):
            key = (e.get("cat"), e.get("id"))
            asyncs.setdefault(key, []).append(e["ph"])
        elif e["ph"] == "C":
            if not e.get("args") or not all(isinstance(v, (int, float))
                                            for v in e["args"].values()):
                fail("C event without numeric args: %r" % e)
        elif e["ph"] == "i":
            if e.get("s") not in ("g", "p", "t"):
                fail("instant without a scope: %r" % e)
        elif e["ph"] != "M":
            fail("unexpected phase type %r" % e["ph"])
    for (pid, tid), xs in by_tid.items():
        xs.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        stack = []
        for e in xs:
            s, t = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and t > stack[-1][1]:
                fail("X events overlap on tid %d: %r and %r" % (tid, stack[-1][2], e["name"]))
            stack.append((s, t, e["name"]))
    for key, phs in asyncs.items():
        if phs.count("b") != phs.count("e"):
            fail("async events of %r do not pair: %r" % (key, phs))
    print("ok: structure: %d events %s; X events nest on %d threads; %d async ids pair" %
          (len(evs), counts, len(by_tid), len(asyncs)))

    xs = [e for e in evs if e["ph"] == "X"]
    names = {e["args"]["name"]: e["tid"] for e in evs
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for ph in doc["phases"]:
        px = [e for e in xs if e["name"] == "phase " + ph["name"]]
        if len(px) != 1:
            fail("phase %s: %d X events" % (ph["name"], len(px)))
        if abs(px[0]["dur"] - ph["duration_s"] * 1e6) > 1:
            fail("phase %s lasts %s us, the document %s s" % (ph["name"], px[0]["dur"],
                                                                ph["duration_s"]))
        for fl in ph["flows"]:
            tid = names.get("flow " + fl["name"])
            if tid is None:
                fail("no thread for flow %s" % fl["name"])
            fx = [e for e in xs if e["tid"] == tid and e["name"] == fl["name"] and
                  e["args"].get("phase") == ph["name"]]
            if len(fx) != 1 or fx[0]["args"].get("status") != fl["status"]:
                fail("flow %s in %s: %r" % (fl["name"], ph["name"], fx))
            f0, f1 = fx[0]["ts"], fx[0]["ts"] + fx[0]["dur"]
            for pt in fl.get("points", []):
                if not pt.get("measured"):
                    continue
                want = pt["ops"]
                got = [e for e in xs if e["tid"] == tid and e.get("cat") == "point" and
                       f0 <= e["ts"] <= f1 and e["args"].get("ops") == want]
                if len(got) != 1:
                    fail("flow %s %s: no point with %s ops" % (fl["name"], ph["name"], want))
                lat = pt.get("latency") or {}
                if "p99" in lat and got[0]["args"].get("p99_us") != lat["p99"]:
                    fail("flow %s point p99 %r, want %r" % (fl["name"], got[0]["args"], lat))
            tl = fl.get("timeline") or {}
            track = "goodput %s (Gb/s)" % fl["name"]
            samples = {round(e["ts"]): e["args"]["Gb/s"] for e in evs
                       if e["ph"] == "C" and e["name"] == track}
            for t, g in zip(tl.get("t_s", []), tl.get("goodput_gbps", [])):
                if t is None or g is None:
                    continue
                if samples.get(round(t * 1e6)) != g:
                    fail("%s at %s s: %r, want %r" % (track, t, samples.get(round(t * 1e6)), g))
            # Sampled operations (fabtop run --trace): inside the flow's span, and their
            # median as long as the flow's p50 says (a half round trip is half of one).
            bs = [e for e in evs if e["ph"] == "b" and e["tid"] == tid and
                  e["name"] == "op " + fl["name"] and f0 <= e["ts"] <= f1]
            ends = {e["id"]: e["ts"] for e in evs if e["ph"] == "e" and e["tid"] == tid}
            for b in bs:
                if not b["ts"] <= ends.get(b["id"], -1) <= f1:
                    fail("op %s of %s ends outside its flow's span" % (b["id"], fl["name"]))
            pts = [pt for pt in fl.get("points", []) if pt.get("measured") and
                   (pt.get("latency") or {}).get("p50")]
            if len(bs) >= 100 and len(pts) == 1:
                k = 2 if fl.get("latency_kind") == "half_round_trip" else 1
                want = pts[0]["latency"]["p50"] * k
                got = sorted(b["args"]["us"] for b in bs)[len(bs) // 2]
                if not want / 2 <= got <= want * 2:
                    fail("%s in %s: sampled operations' median %s us, p50 x %d is %s us" %
                         (fl["name"], ph["name"], got, k, want))
                print("ok: %s in %s: %d sampled operations, median %.2f us (p50 x %d: %.2f us)"
                      % (fl["name"], ph["name"], len(bs), got, k, want))
        print("ok: phase %s: its span, %d flows with their points and goodput tracks" %
              (ph["name"], len(ph["flows"])))
    timed = [line for line in doc.get("events", []) if line.strip().split(" ")[0].endswith("s")
             and line.strip().split(" ")[0][:-1].replace(".", "").isdigit()]
    inst = [e for e in evs if e["ph"] == "i" and e.get("cat") == "event"]
    if len(inst) != len(timed):
        fail("%d instant events for %d timed events" % (len(inst), len(timed)))
    print("ok: %d events as instants" % len(inst))
    if "--ops" in sys.argv[3:] and not counts.get("b"):
        fail("no sampled operations")
    print("PASS: %s" % sys.argv[1])


main()
