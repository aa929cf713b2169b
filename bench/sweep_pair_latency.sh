#!/bin/sh
# sweep_pair_latency.sh: one pair's 64 B ping-pong p50 and its a-to-b stream's goodput as
# `fabtop sweep` measures them against `fabtop run --peer` on the same path (loopback) with the
# sweep's own mixes, alternated REPS times in one run, each side
# pinned alike: the end that pings (the sweep's rank 0, `fabtop run`) on CPU A, the end that
# answers (rank 1's agent, `fabtop serve`) on CPU B, both fresh processes every repetition.
# The mixes are the sweep's own, read back from its document. Prints each
# repetition, the medians and their ratio (issue 16's target: within 5%), and the tool against
# itself (the median of its odd repetitions over its even ones) for the noise floor.
#   sh bench/sweep_pair_latency.sh [BUILD_DIR] [SECONDS] [REPS] [CPU_A] [CPU_B]
# (default build/, 2 s, 10 repetitions, CPUs 2 and 4). Needs mpirun (openmpi-bin), taskset
# and python3; no root, no namespaces.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
DUR=${2:-2}
REPS=${3:-10}
A=${4:-2}
B=${5:-4}
SWEEP=$build/bin/fabtop-sweep
FABTOP=$build/bin/fabtop
[ -x "$SWEEP" ] && [ -x "$FABTOP" ] || { echo "build first (fabtop and fabtop-sweep in $build/bin)"; exit 1; }
for t in mpirun taskset python3; do
    command -v $t >/dev/null || { echo "needs $t"; exit 77; }
done
[ "$(nproc)" -gt "$B" ] && [ "$(nproc)" -gt "$A" ] || { echo "CPUs $A and $B do not exist here ($(nproc) CPUs)"; exit 77; }
W=$(mktemp -d /var/tmp/fabtop-pairlat.XXXXXX) || exit 1
SPID=""
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
cat >"$W/pin.sh" <<EOF
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:?}" = 0 ] && exec taskset -c $A "\$@"
exec taskset -c $B "\$@"
EOF
chmod +x "$W/pin.sh"
"$FABTOP" serve --gen-key "$W/key" >/dev/null || exit 1
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "fabtop sweep vs fabtop run, one loopback pair, ${cpu:-unknown CPU}, $(nproc) CPUs, $(date -u +%Y-%m-%d)"
echo "$REPS repetitions of each, alternated, $DUR s measured; pinging end on CPU $A, answering end on CPU $B"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"

sweep_once() { # I: the sweep's p50 (us), and its latency mix saved once
    XDG_RUNTIME_DIR=$W timeout 300 mpirun --allow-run-as-root --oversubscribe --bind-to none \
        -np 2 -x XDG_RUNTIME_DIR "$W/pin.sh" "$SWEEP" --listen 127.0.0.1 --pattern pairs \
        --duration "$DUR" --publish none -o "$W/s$1.json" >"$W/s$1.out" 2>&1 ||
        { cat "$W/s$1.out"; echo "the sweep failed"; exit 1; }
    python3 - "$W/s$1.json" "$W" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
tests = [t for t in d["tests"] if t["pattern"] == "pairs" and t.get("transport", "tcp") == "tcp"
         and t["run"]]
for name, out in (("sweep-latency", "latency.json"), ("sweep-bandwidth-ab", "stream.json")):
    t = [t for t in tests if t["run"]["mix"]["name"] == name][0]
    assert t["src"] == 0, "the %s test runs from rank %d, not rank 0" % (name, t["src"])
    out = os.path.join(sys.argv[2], out)
    if not os.path.exists(out):
        m = t["run"]["mix"]
        for f in m["flows"]:
            f.pop("peer", None)  # fabtop run --peer gives it
        json.dump(m, open(out, "w"))
p = [x for x in d["pairs"] if x.get("transport", "tcp") == "tcp"][0]
print(p["lat_p50_us"], p["bw_ab_gbps"])
PY
}

run_once() { # I: fabtop run's p50 (us) and a-to-b goodput (Gb/s) with the sweep's mixes, one fresh agent
    : >"$W/serve$1.log"
    taskset -c "$B" "$FABTOP" serve --listen 127.0.0.1:0 --max-rate 100000 --key-file "$W/key" \
        --log "$W/serve$1.log" &
    SPID=$!
    port=""
    for _ in $(seq 1 100); do
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\):.*/\1/p' "$W/serve$1.log")
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { cat "$W/serve$1.log"; echo "the agent did not start"; exit 1; }
    for m in latency stream; do
        taskset -c "$A" "$FABTOP" run --mix "$W/$m.json" --peer "127.0.0.1:$port" \
            --key-file "$W/key" -o "$W/r$1$m.json" >"$W/r$1$m.out" 2>&1 ||
            { cat "$W/r$1$m.out"; echo "fabtop run failed"; exit 1; }
    done
    kill "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=""
    python3 -c '
import json, sys
def point(f):
    return json.load(open(f))["phases"][-1]["flows"][0]["points"][0]
print(point(sys.argv[1])["latency"]["p50"], point(sys.argv[2])["goodput_gbps"])' \
        "$W/r$1latency.json" "$W/r$1stream.json"
}

i=1
while [ $i -le "$REPS" ]; do
    s=$(sweep_once $i) || exit 1
    r=$(run_once $i) || exit 1
    echo "$i $s $r" >>"$W/pairs.txt"
    echo "$s $r" | awk -v i="$i" '{printf "  repetition %2d: p50 sweep %7.2f us, run %7.2f us (%.3f); a to b sweep %6.2f Gb/s, run %6.2f Gb/s (%.3f)\n", i, $1, $3, $1 / $3, $2, $4, $2 / $4}'
    i=$((i + 1))
done
python3 - "$W/pairs.txt" <<'PY'
import statistics as st, sys
rows = [tuple(map(float, l.split()))[1:] for l in open(sys.argv[1])]
def half(v, k):
    return st.median(v[k::2])
for what, unit, k in (("latency p50", "us", 0), ("stream a to b", "Gb/s", 1)):
    s = [r[k] for r in rows]
    r = [r[k + 2] for r in rows]
    ms, mr = st.median(s), st.median(r)
    print("%s medians: sweep %.2f %s, fabtop run %.2f %s: sweep / run %.3f (target within 5%%: %s)"
          % (what, ms, unit, mr, unit, ms / mr, "met" if abs(ms / mr - 1) <= 0.05 else "NOT met"))
    ratios = sorted(a / b for a, b in zip(s, r))
    print("  per repetition, sweep / run: median %.3f, min %.3f, max %.3f"
          % (st.median(ratios), ratios[0], ratios[-1]))
    print("  the tool against itself, median of odd over even repetitions: fabtop run %.3f, sweep %.3f"
          % (half(r, 0) / half(r, 1), half(s, 0) / half(s, 1)))
PY
