#!/bin/sh
# drill_soak.sh: the fault drills' soak (issue 19), not in the default test run. N drills in a
# row (default 100) in one `fabtop drill --repeat N` against an in-process agent on loopback
# (no root), the results file checked every time it is rewritten (after every repetition):
# valid JSON, format fabtop-drill, "complete" false until the last, every repetition so far
# present with indexes 0..n-1 in order, none lost from one write to the next. At the end: n = N,
# complete, the exit status against the summary (0: every --expect held; 1: a bound broke;
# 2: a flow never recovered), the summary's detection and recovery (min, p50, max), and the
# drill process's descriptors and threads before and after (a leak shows as a difference).
#   sh bench/drill_soak.sh [BUILD_DIR] [N] [FAULT]     (default build/, 100, peer-stall)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
N=${2:-100}
FAULT=${3:-peer-stall}
FABTOP=$build/bin/fabtop
[ -x "$FABTOP" ] || { echo "build first ($FABTOP)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/fabtop-soak.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "fabtop drill soak: $N x $FAULT of a TCP ping-pong on loopback, ${cpu:-unknown CPU}, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$FABTOP" "$here/tests/ctl/data/drill-pingpong.json" "$FAULT" "$N" "$W" <<'PY'
import json, os, statistics, subprocess, sys, time
fabtop, mix, fault, n, w = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
out = os.path.join(w, "soak.json")
cmd = [fabtop, "drill", "--mix", mix, "--fault", fault, "--at", "0.3", "--for", "0.6",
       "--repeat", str(n), "--expect", "detect<0.6s,recover<8s", "-o", out]
print("command: " + " ".join(cmd[:1] + ["drill"] + cmd[2:]).replace(w + "/", ""))
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=open(os.path.join(w, "drill.out"), "w"), stderr=subprocess.STDOUT)
seen, writes, bad, last = None, 0, [], 0
def check(final):
    global last, writes
    d = json.load(open(out))  # a torn write is a failure here, as it would be for a reader
    if d.get("format") != "fabtop-drill":
        return "format %r" % d.get("format")
    idx = [r["index"] for r in d.get("repetitions", [])]
    if idx != list(range(len(idx))):  # 0, 1, ... in order
        return "repetitions %r" % idx
    if len(idx) < last:
        return "%d repetitions after %d" % (len(idx), last)
    if not final and d.get("complete") and len(idx) < n:
        return "complete with %d of %d" % (len(idx), n)
    last = len(idx)
    writes += 1
    return None
while True:
    done = p.poll() is not None
    try:
        st = os.stat(out)
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
    except FileNotFoundError:
        key = None
    if key and key != seen:
        seen = key
        try:
            e = check(False)
        except (ValueError, KeyError, OSError) as x:
            e = "unreadable: %s" % x
        if e:
            bad.append("after %d writes: %s" % (writes, e))
    if done:
        break
    time.sleep(0.02)
wall = time.monotonic() - t0
rc = p.returncode
d = json.load(open(out))
s = d.get("summary", {})
proc = d.get("process", {})
print("exit status %d after %.0f s wall; the file was read and checked %d times as it was rewritten"
      % (rc, wall, writes))
print("repetitions %d of %d, complete %s" % (len(d["repetitions"]), n, d.get("complete")))
for k in ("detect", "recover"):
    v = s.get(k, {})
    print("  %-7s min %.3f s, p50 %.3f s, max %.3f s (n=%s)"
          % (k, v.get("min_s", float("nan")), v.get("p50_s", float("nan")),
             v.get("max_s", float("nan")), v.get("n")))
print("  bounds broken %s, never recovered %s, agent disagreements %s"
      % (s.get("broke_bound"), s.get("never_recovered"), s.get("agent_disagrees")))
print("  descriptors %s -> %s, threads %s -> %s" % (proc.get("fds_before"), proc.get("fds_after"),
      proc.get("threads_before"), proc.get("threads_after")))
# The drill's exit status: 2 a flow never recovered, else 1 when an --expect broke.
dmax, rmax = s.get("detect", {}).get("max_s", 0), s.get("recover", {}).get("max_s", 0)
want_rc = 2 if s.get("never_recovered") else 1 if dmax >= 0.6 or rmax >= 8 else 0
if s.get("agent_disagrees"):
    bad.append("%s repetitions where the agent's count of answers is not the client's"
               % s["agent_disagrees"])
    for r in d["repetitions"]:
        a = r.get("agent", {})
        if not a.get("agree"):
            f = r["flows"][0]
            print("  repetition %d: the agent answered %s, the client completed %s (issued %s, "
                  "failed %s, abandoned %s; detected %s s after the injection by %s)"
                  % (r["index"], a.get("answered"), a.get("client_completed"), f.get("issued"),
                     f.get("failed"), f.get("abandoned"), f.get("detect_s"), f.get("detection")))
if len(d["repetitions"]) != n or d.get("complete") is not True:
    bad.append("the final file has %d of %d repetitions, complete %s" % (len(d["repetitions"]), n, d.get("complete")))
if rc != want_rc:
    bad.append("exit status %d, the summary says %d" % (rc, want_rc))
if proc.get("fds_before") != proc.get("fds_after") or proc.get("threads_before") != proc.get("threads_after"):
    bad.append("descriptors or threads left behind")
for b in bad:
    print("FAIL: " + b)
print("soak: " + ("FAILED" if bad else "passed"))
sys.exit(1 if bad else 0)
PY
