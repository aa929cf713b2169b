#!/bin/sh
# sim.sh: the fabric simulator's speed on one core.
#   1. In process (bench/bench_sim.c): wall and CPU time of the 16-host 400 Gb/s incast
#      (15 x 2 MB, 4 KB MTU) and of the 100 Gb/s star (1000 B payloads), events per second,
#      peak memory.
#   2. Against htsim, when given the path of an htsim_roce binary (--htsim PATH or HTSIM=PATH):
#      the same two one-switch stars in both tools, whole processes, alternating which goes
#      first, pinned to one CPU, RUNS rounds: wall and CPU time, the same net of each tool's
#      start-up (a run that builds the same fabric with no flows), the ratios htsim/fabtop,
#      and both tools' simulated completion of the last flow. With CALLGRIND=1 (and valgrind
#      installed) also the instructions of one run of each, which no other load changes.
#   bench/sim.sh [--htsim PATH] [BUILD_DIR] [RUNS]   (default build/ and 21; builds nothing:
#   build fabtop with -O2 or -O3, e.g. the default RelWithDebInfo)
#
# htsim is not part of fabtop and nothing here builds it. To get one: clone
# https://github.com/Broadcom/csg-htsim, run make in its sim/ directory (the library), then
# make htsim_roce in sim/datacenter/, and pass the path of that htsim_roce binary.
#
# The scenario in htsim: its RoCE driver (main_roce) with a fat-tree topology file of one
# top-of-rack switch holding all 16 hosts (Radix_Down 16), a single uplink to an idle tier-1
# switch (Radix_Up 1, Oversubscribed 16: an incast inside one ToR never uses it), links of
# fabtop's rate and delay, 300 ns switch latency as fabtop's default; a connection matrix of
# 15 x 2,000,000 B into host 0; lossless input queues (PFC) at htsim's default thresholds,
# ECMP on host FIBs with one path. Header bytes differ: htsim adds 64 B to each packet,
# fabtop 82 B (RoCEv2 headers, preamble and gap) plus 16 B of RETH on a message's first.
set -eu
htsim=${HTSIM:-}
if [ "${1:-}" = "--htsim" ]; then
    htsim=${2:?--htsim needs the path of an htsim_roce binary}
    shift 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-21}
bench=$build/bench/bench_sim
[ -x "$bench" ] || { echo "build first: cmake --build $build --target bench_sim"; exit 1; }
if [ -n "$htsim" ]; then
    [ -x "$htsim" ] || { echo "htsim: $htsim is not an executable (give the path of htsim_roce)"; exit 66; }
    command -v python3 >/dev/null || { echo "needs python3 for the comparison with htsim"; exit 1; }
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "fabtop simulator, ${cpu:-unknown CPU}, $(nproc) CPUs, build type ${type:-RelWithDebInfo (the default)}, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# One core: the last CPU.
last=$(($(nproc) - 1))
pin=""
if command -v taskset >/dev/null 2>&1; then
    pin="taskset -c $last"
fi
$pin "$bench" "$runs"

[ -n "$htsim" ] || exit 0
bench=$(cd "$(dirname "$bench")" && pwd)/bench_sim
htsim=$(cd "$(dirname "$htsim")" && pwd)/$(basename "$htsim")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for g in 400 100; do
    delay=$([ $g = 400 ] && echo 500 || echo 1000)
    cat >"$tmp/star$g.topo" <<T
Nodes 16
Tiers 2
Podsize 16

Tier 0
Downlink_speed_Gbps $g
Radix_Down 16
Radix_Up 1
Oversubscribed 16
Downlink_Latency_ns $delay
Switch_Latency_ns 300

Tier 1
Downlink_speed_Gbps $g
Radix_Down 1
Downlink_Latency_ns $delay
Switch_Latency_ns 300
T
done
{
    echo "Nodes 16"
    echo "Connections 15"
    for i in $(seq 1 15); do echo "$i->0 id $i start 0 size 2000000"; done
} >"$tmp/incast.cm"
printf 'Nodes 16\nConnections 0\n' >"$tmp/none.cm"

python3 - "$bench" "$htsim" "$tmp" "$runs" "$last" "${CALLGRIND:-0}" <<'PY'
import os, re, shutil, statistics, subprocess, sys, time

bench, htsim, tmp, runs, cpu, callgrind = sys.argv[1:7]
runs, cpu = int(runs), int(cpu)
os.sched_setaffinity(0, {cpu})  # the children inherit the one CPU


def cmd(tool, g, flows):
    if tool == "fabtop":
        c = [bench, "--once", str(g)]
        return c if flows else c + ["--no-flows"]
    return [htsim, "-nodes", "16", "-topo", f"{tmp}/star{g}.topo",
            "-tm", f"{tmp}/{'incast' if flows else 'none'}.cm", "-strat", "ecmp_host",
            "-paths", "1", "-mtu", "4096" if g == 400 else "1000", "-q", "1000",
            "-end", "100000", "-o", f"{tmp}/htsim.log"]


def last_flow_us(tool, out):
    """Simulated completion of the last of the 15 flows, us."""
    if tool == "fabtop":
        m = re.search(r"last flow done at ([0-9.]+) us", out)
        return float(m.group(1)) if m else None
    done = [float(x) for x in re.findall(r"finished at ([0-9.]+)", out)]
    return max(done) if done else None


def once(tool, g, flows):
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(cmd(tool, g, flows), cwd=tmp, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter_ns() - t0) / 1e6
    if status:
        sys.exit(f"{tool}: {' '.join(cmd(tool, g, flows))} failed:\n{out[-2000:]}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3, out


def q(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2, v[n // 4], v[(3 * n) // 4]


def fmt(v, unit="ms"):
    m, lo, hi = q(v)
    return f"{m:8.3f} {unit} (p25-p75 {lo:.3f}-{hi:.3f}, n={len(v)})"


print(f"Against htsim ({htsim}): whole processes on CPU {cpu}, {runs} alternating rounds, "
      "each round both tools with and without the 15 flows")
for g in (400, 100):
    res = {(t, f): [] for t in ("fabtop", "htsim") for f in (True, False)}
    last = {}
    for i in range(runs):
        order = ("fabtop", "htsim") if i % 2 == 0 else ("htsim", "fabtop")
        for t in order:
            for f in (True, False):
                wall, cpu_ms, out = once(t, g, f)
                res[(t, f)].append((wall, cpu_ms))
                if f:
                    last[t] = last_flow_us(t, out)
    mtu = "4 KB MTU" if g == 400 else "1000 B payloads"
    print(f"16-host {g} Gb/s star, 15 -> 1 x 2 MB, {mtu}")
    for t in ("fabtop", "htsim"):
        print(f"  {t:6} last flow done at {last[t]:.3f} us simulated")
    d = (last["fabtop"] - last["htsim"]) / last["htsim"] * 100
    print(f"  completion, fabtop against htsim: {d:+.2f}%")
    for k, name in ((0, "wall"), (1, "CPU")):
        net = {}
        for t in ("fabtop", "htsim"):
            whole = [x[k] for x in res[(t, True)]]
            empty = [x[k] for x in res[(t, False)]]
            net[t] = q(whole)[0] - q(empty)[0]
            print(f"  {t:6} {name:4} whole process {fmt(whole)}")
            print(f"  {t:6} {name:4} no flows      {fmt(empty)}")
            print(f"  {t:6} {name:4} net of start-up (difference of the medians) {net[t]:.3f} ms")
        whole_r = [h[k] / f[k] for h, f in zip(res[("htsim", True)], res[("fabtop", True)])]
        print(f"  ratio htsim/fabtop, {name}, whole process, per round: {fmt(whole_r, 'x')}")
        print(f"  ratio htsim/fabtop, {name}, net of start-up: {net['htsim'] / net['fabtop']:.2f} x")
    if callgrind == "1" and shutil.which("valgrind"):
        ir = {}
        for t in ("fabtop", "htsim"):
            for f in (True, False):
                out = f"{tmp}/cg.out"
                p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                                   + cmd(t, g, f), cwd=tmp, capture_output=True, text=True)
                m = re.search(r"refs:\s+([0-9,]+)", p.stderr)
                ir[(t, f)] = int(m.group(1).replace(",", ""))
        for t in ("fabtop", "htsim"):
            print(f"  {t:6} instructions: {ir[(t, True)] / 1e6:.2f} M whole process, "
                  f"{ir[(t, False)] / 1e6:.2f} M without flows, "
                  f"{(ir[(t, True)] - ir[(t, False)]) / 1e6:.2f} M net")
        print(f"  ratio htsim/fabtop, instructions: whole process "
              f"{ir[('htsim', True)] / ir[('fabtop', True)]:.2f}x, net "
              f"{(ir[('htsim', True)] - ir[('htsim', False)]) / (ir[('fabtop', True)] - ir[('fabtop', False)]):.2f}x")
PY
