#!/usr/bin/env python3
"""device_summary: fold the results of tests/gpu/device_run.sh into one summary.json and a text
table: fabtop's NCCL all_reduce figures (host-timed mean as nccl-tests prints by default,
per-iteration CUDA-event latency, algbw/busbw in GB/s = 10^9 bytes/s) next to the nccl-tests
reference figures measured on nvidia-h200-x2, PyTorch's all_reduce, fabtop on PyTorch's libnccl,
the socket transport, copy contention, the correctness checks and the kill-one-rank timeout.
Only the standard library; every section survives a missing or failed input.

usage: device_summary.py --out DIR --work DIR --summary FILE
"""
import argparse
import glob
import json
import os
import sys

# nccl-tests 2.19 on nvidia-h200-x2, all_reduce float out-of-place (issue 7).
REFERENCE = {
    "nvlink_busbw_GBps": {str(512 << 20): 313.6, str(128 << 20): 287.0},
    "nvlink_time_us": {"8": 12.3},
    "nvlink_per_iteration_64KiB_us": {"mean": 21.7, "min": 15.3, "p99": 40.1},
    "socket_time_us": {str(64 << 10): 119.0},
    "socket_busbw_GBps_large": 3.5,
}
TOL_BW = 0.97   # fabtop's bus bandwidth must be at least 0.97 x the reference
TOL_LAT = 1.03  # and its latency at most 1.03 x


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"_error": "%s: %s" % (path, e)}


def flows(doc, phase=None):
    for ph in doc.get("phases", []):
        if phase and ph.get("name") != phase:
            continue
        for fl in ph.get("flows", []):
            yield ph.get("name"), fl


def fg_flow(doc, phase=None):
    fg = (doc.get("summary") or {}).get("foreground")
    for ph, fl in flows(doc, phase):
        if fl.get("name") == fg or (not fg and fl.get("role") == "foreground"):
            return fl
    return None


def sweep(doc):
    """Per size: host-timed and per-iteration figures from a results document."""
    fl = fg_flow(doc)
    if not fl:
        return {"_error": doc.get("_error", "no foreground flow")}
    out = {"status": fl.get("status"), "error": fl.get("error"), "setup_s": fl.get("setup_s"),
           "points": []}
    cond = (fl.get("conditions") or {}).get("nccl") or {}
    out["nccl"] = {k: cond.get(k) for k in ("transports", "network", "channels", "init_s",
                                            "nranks", "graph", "nccl_version_log", "tuning_log")}
    out["libraries"] = (fl.get("conditions") or {}).get("libraries")
    for p in fl.get("points", []):
        n = p.get("nccl") or {}
        h = n.get("host_timed") or {}
        it = n.get("per_iteration") or {}
        out["points"].append({
            "size_bytes": p.get("size_bytes"),
            "bytes": n.get("bytes"),
            "algo": n.get("algo"), "proto": n.get("proto"), "channels": n.get("channels"),
            "host_time_us": h.get("time_us"),
            "host_algbw_GBps": h.get("algbw_GBps"),
            "host_busbw_GBps": h.get("busbw_GBps"),
            "host_iterations": h.get("iterations"),
            "it_count": it.get("count"),
            "it_mean_us": it.get("mean_us"), "it_min_us": it.get("min_us"),
            "it_p50_us": it.get("p50_us"), "it_p99_us": it.get("p99_us"),
            "it_max_us": it.get("max_us"),
            "check_wrong": (n.get("check") or {}).get("wrong"),
        })
    return out


def point(sw, size):
    for p in sw.get("points", []):
        if p.get("size_bytes") == size:
            return p
    return {}


def ratio(a, b):
    return a / b if (a is not None and b) else None


def compare(nv, sock, sock_blk=None):
    rows = []

    def row(what, got, ref, kind):
        r = ratio(got, ref)
        ok = None if r is None else (r >= TOL_BW if kind == "bw" else r <= TOL_LAT)
        rows.append({"what": what, "fabtop": got, "reference": ref, "ratio": r,
                     "criterion": ">= 0.97x" if kind == "bw" else "<= 1.03x", "pass": ok})

    for size, ref in REFERENCE["nvlink_busbw_GBps"].items():
        row("NVLink busbw %d MiB (host-timed), GB/s" % (int(size) >> 20),
            point(nv, int(size)).get("host_busbw_GBps"), ref, "bw")
    row("NVLink 8 B time (host-timed), us", point(nv, 8).get("host_time_us"),
        REFERENCE["nvlink_time_us"]["8"], "lat")
    p64 = point(nv, 64 << 10)
    for k in ("mean", "min", "p99"):
        row("NVLink 64 KiB per-iteration %s, us" % k, p64.get("it_%s_us" % k),
            REFERENCE["nvlink_per_iteration_64KiB_us"][k], "lat")
    # The socket transport with fabtop's default non-blocking communicators, and with
    # blocking ones (params.blocking), as nccl-tests uses.
    for label, sk in (("", sock), (" [blocking comms]", sock_blk or {})):
        if not sk:
            continue
        row("socket 64 KiB time (host-timed)%s, us" % label,
            point(sk, 64 << 10).get("host_time_us"), REFERENCE["socket_time_us"][str(64 << 10)],
            "lat")
        big = [p.get("host_busbw_GBps") for p in sk.get("points", [])
               if (p.get("size_bytes") or 0) >= (256 << 20) and p.get("host_busbw_GBps")]
        row("socket busbw, best of >= 256 MiB%s, GB/s" % label, max(big) if big else None,
            REFERENCE["socket_busbw_GBps_large"], "bw")
    return rows


def side_by_side(nv, torch_doc, tn):
    tp = {p["size_bytes"]: p for p in torch_doc.get("points", [])}
    rows = []
    for p in nv.get("points", []):
        s = p.get("size_bytes")
        t = tp.get(s, {})
        q = point(tn, s)
        rows.append({
            "size_bytes": s,
            "fabtop_host_us": p.get("host_time_us"), "fabtop_busbw_GBps": p.get("host_busbw_GBps"),
            "fabtop_it_p50_us": p.get("it_p50_us"), "fabtop_it_p99_us": p.get("it_p99_us"),
            "torch_host_us": t.get("time_us"), "torch_busbw_GBps": t.get("busbw_GBps"),
            "torch_it_p50_us": (t.get("per_iteration") or {}).get("p50_us"),
            "fabtop_on_torch_nccl_host_us": q.get("host_time_us"),
            "fabtop_on_torch_nccl_busbw_GBps": q.get("host_busbw_GBps"),
            "algo": p.get("algo"), "proto": p.get("proto"),
        })
    return rows


def contention(doc):
    out = {}
    if "_error" in doc:
        return doc
    for ph in ("quiet", "loaded"):
        fl = fg_flow(doc, ph)
        if not fl or not fl.get("points"):
            continue
        p = fl["points"][0]
        lat = p.get("latency") or {}
        n = p.get("nccl") or {}
        out[ph] = {"status": fl.get("status"), "p50_us": lat.get("p50"), "p99_us": lat.get("p99"),
                   "p99.9_us": lat.get("p99.9"), "max_us": lat.get("max"),
                   "host_time_us": (n.get("host_timed") or {}).get("time_us")}
    for ph, fl in flows(doc, "loaded"):
        if fl.get("op") == "copy" and fl.get("points"):
            c = fl["points"][0].get("copy") or {}
            out.setdefault("copies", {})[fl["name"]] = {
                "status": fl.get("status"), "h2d_GBps": c.get("h2d_GBps"),
                "d2h_GBps": c.get("d2h_GBps"),
                "copy_p50_us": (fl["points"][0].get("latency") or {}).get("p50"),
                "host_memory": ((fl.get("conditions") or {}).get("copy") or {}).get("host_memory")}
    q, l = out.get("quiet", {}), out.get("loaded", {})
    out["p99_loaded_over_quiet"] = ratio(l.get("p99_us"), q.get("p99_us"))
    out["p50_loaded_over_quiet"] = ratio(l.get("p50_us"), q.get("p50_us"))
    return out


def kill(doc, meta):
    if "_error" in doc:
        return {**doc, "meta": meta}
    fl = fg_flow(doc) or {}
    return {"status": fl.get("status"), "error": fl.get("error"),
            "failed_at_s": fl.get("failed_at_s"),
            "detected_after_last_progress_s": fl.get("detected_after_last_progress_s"),
            "fail_bound_s": (doc.get("mix") or {}).get("fail_bound_s"),
            "peer": fl.get("peer"), "events": doc.get("events", [])[-6:], "meta": meta}


def text_table(s):
    lines = []
    lines.append("%-44s %12s %12s %8s %s" % ("comparison", "fabtop", "reference", "ratio",
                                             "pass"))
    for r in s.get("reference_comparison", []):
        f = lambda v: "n/a" if v is None else "%.3f" % v
        lines.append("%-44s %12s %12s %8s %s" % (r["what"], f(r["fabtop"]), f(r["reference"]),
                                                 f(r["ratio"]), r["pass"]))
    lines.append("")
    lines.append("%12s %10s %10s %10s %10s %10s %10s %10s %s" % (
        "size B", "host us", "busbw", "it p50", "it p99", "torch us", "torch bw",
        "f+tNCCL us", "algo/proto"))
    for r in s.get("nvlink_vs_torch", []):
        f = lambda v: "n/a" if v is None else "%.2f" % v
        lines.append("%12s %10s %10s %10s %10s %10s %10s %10s %s/%s" % (
            r["size_bytes"], f(r["fabtop_host_us"]), f(r["fabtop_busbw_GBps"]),
            f(r["fabtop_it_p50_us"]), f(r["fabtop_it_p99_us"]), f(r["torch_host_us"]),
            f(r["torch_busbw_GBps"]), f(r["fabtop_on_torch_nccl_host_us"]), r["algo"],
            r["proto"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--summary", required=True)
    a = ap.parse_args()
    O = lambda n: os.path.join(a.out, n)
    W = lambda n: os.path.join(a.work, n)
    s = {"format": "fabtop-device-summary", "units": "us; GB/s = 10^9 bytes/s",
         "reference": REFERENCE}
    try:
        with open(W("status.txt")) as f:
            s["steps"] = [line.split() for line in f if line.strip()]
    except OSError:
        s["steps"] = []
    try:
        with open(W("info.json")) as f:
            s["machine"] = json.load(f)
    except (OSError, ValueError):
        pass
    nv = sweep(load(O("nvlink.json"))) if os.path.exists(O("nvlink.json")) else {}
    sock = sweep(load(O("socket.json"))) if os.path.exists(O("socket.json")) else {}
    sock_blk = sweep(load(O("socket_blocking.json"))) if os.path.exists(
        O("socket_blocking.json")) else {}
    tn = sweep(load(W("nvlink_torchnccl.json"))) if os.path.exists(
        W("nvlink_torchnccl.json")) else {}
    torch_doc = load(O("torch.json")) if os.path.exists(O("torch.json")) else {}
    s["nvlink"] = nv
    s["socket"] = sock
    s["fabtop_on_torch_nccl"] = {k: v for k, v in tn.items() if k != "points"}
    s["torch"] = {k: v for k, v in torch_doc.items() if k != "points"}
    s["socket_blocking"] = sock_blk
    s["reference_comparison"] = compare(nv, sock, sock_blk)
    s["nvlink_vs_torch"] = side_by_side(nv, torch_doc, tn)
    for name in ("contention", "contention_pageable"):
        path = O(name + ".json") if os.path.exists(O(name + ".json")) else W(name + ".json")
        if os.path.exists(path):
            s[name] = contention(load(path))
    for name in ("decode", "decode_nograph"):
        if os.path.exists(W(name + ".json")):
            d = sweep(load(W(name + ".json")))
            s[name] = {"status": d.get("status"), "error": d.get("error"),
                       "points": [{k: p.get(k) for k in ("size_bytes", "host_time_us",
                                                         "it_p50_us", "it_p99_us", "algo",
                                                         "proto")}
                                  for p in d.get("points", [])]}
    checks = {}
    for path in sorted(glob.glob(W("check_*.json"))):
        d = sweep(load(path))
        wrong = [p.get("check_wrong") for p in d.get("points", [])]
        checks[os.path.basename(path)[6:-5]] = {"status": d.get("status"),
                                                "error": d.get("error"), "wrong": wrong}
    s["checks"] = checks
    for name, meta in (("kill", "kill.meta"), ("kill_socket", "kill_socket.meta")):
        path = O(name + ".json") if os.path.exists(O(name + ".json")) else W(name + ".json")
        if os.path.exists(path) or os.path.exists(W(meta)):
            m = {}
            try:
                with open(W(meta)) as f:
                    for line in f:
                        k, _, v = line.strip().partition("=")
                        m[k] = v
            except OSError:
                pass
            s[name] = kill(load(path), m)
    s["table"] = text_table(s).split("\n")
    tmp = a.summary + ".tmp"
    with open(tmp, "w") as f:
        json.dump(s, f, indent=1)
    os.replace(tmp, a.summary)
    print(text_table(s))
    for name in ("contention", "contention_pageable"):
        if name in s:
            c = s[name]
            print("%s: quiet p50/p99 %s/%s us, loaded %s/%s us, copies %s" % (
                name, (c.get("quiet") or {}).get("p50_us"), (c.get("quiet") or {}).get("p99_us"),
                (c.get("loaded") or {}).get("p50_us"), (c.get("loaded") or {}).get("p99_us"),
                json.dumps(c.get("copies"))))
    for name in ("kill", "kill_socket"):
        if name in s:
            k = s[name]
            print("%s: status %s after %s s (%s s after the last progress): %s; %s" % (
                name, k.get("status"), k.get("failed_at_s"),
                k.get("detected_after_last_progress_s"), k.get("error"), k.get("meta")))
    if checks:
        print("checks: " + ", ".join("%s %s" % (k, v["wrong"]) for k, v in checks.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
