#!/bin/sh
# sweep_rack.sh: fabtop sweep against the same pairs run one after another with
# `fabtop run --peer`, on an 8-host rack of network namespaces (tests/rack/rack_lib.sh: two
# leaves of four, 600 Mbit/s uplinks, every host port 100 Mbit/s), in one run:
#   1. the whole matrix by `mpirun fabtop-sweep --pattern pairs` (N-1 = 7 rounds);
#   2. the same 28 pairs, each its three steps (ping-pong latency, stream a to b, b to a) with
#      the same mixes, by `fabtop run --peer` from host a to a `fabtop serve` on host b, one
#      after another;
#   3. the same pairs by `fabtop run` again, in the sweep's rounds (a round's pairs at once),
#      so that the machine carries the load it carried during the sweep;
# and prints the wall-clock ratio of 1 and 2 (issue 16's target: at least 3.5x) and, per pair,
# the sweep's bandwidth and latency p50 against fabtop run's in 2 and in 3 (target: within
# 5%), as medians over the pairs with their spread. The sweep runs as users run it, its second pass included (counted in
# its time). Root only (network namespaces).
#   sudo bench/sweep_rack.sh [BUILD_DIR] [SECONDS_PER_STEP] [HOSTS]   (default build/, 1, 8)
# SWEEP_RACK=loopback runs the same comparison with HOSTS ranks on this machine's loopback
# (`mpirun -np HOSTS fabtop-sweep --listen 127.0.0.1`; rank r's `fabtop serve` on
# 127.0.0.1:7470+r): no namespaces, no root, for a machine with a core per rank and no
# iproute2. Every pair then shares one path (loopback), so it shows whether the sweep measures a
# pair as `fabtop run` does, not a fabric.
# PIN=1 runs each rank on CPUs of its own, nproc / HOSTS of them (rank r from CPU r x that),
# and in passes 2 and 3 what stands for rank r (its `fabtop serve`, and `fabtop run` from it)
# on the same CPUs, so that the passes differ in the tool, not in where the scheduler put it
# (not done when there are fewer CPUs than ranks). Off by default: on the 16-vCPU hosts
# measured (bench/RESULTS.md) it did not narrow the spread.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
DUR=${2:-1}
HOSTS=${3:-8}
SWEEP=$build/bin/fabtop-sweep
FABTOP=$build/bin/fabtop
MODE=${SWEEP_RACK:-netns}
case $MODE in
netns) [ "$(id -u)" -eq 0 ] || { echo "root is needed for the rack of network namespaces"; exit 77; } ;;
loopback) ;;
*) echo "SWEEP_RACK=$MODE: give netns or loopback"; exit 64 ;;
esac
[ -x "$SWEEP" ] && [ -x "$FABTOP" ] || { echo "build first (fabtop and fabtop-sweep in $build/bin)"; exit 1; }
RACK_LIB_DIR=$here/tests/rack
. "$RACK_LIB_DIR/rack_lib.sh"
W=$(mktemp -d /var/tmp/fabtop-sweepbench.XXXXXX) || exit 1
RACK_EXTRA_CLEANUP='rm -rf "$W"'
trap 'eval "$RACK_EXTRA_CLEANUP"' EXIT
trap 'exit 130' INT
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "fabtop sweep vs fabtop run --peer one pair at a time, ${cpu:-unknown CPU}, $(nproc) CPUs, $(date -u +%Y-%m-%d)"
if [ "$MODE" = netns ]; then
    P=sb$(($$ % 100000))
    rack_up -p "$P" -s 10.86.0 -n "$HOSTS" -l 2 -u 600mbit -r 100mbit || exit 1
    hostlist=$(echo "$RACK_HOSTS" | tr ' ' ',')
    echo "rack: $HOSTS hosts, 100 Mbit/s ports, 600 Mbit/s uplinks; $DUR s measured per step"
    # Rank r's host (as the sweep's document says) and how to reach it.
    on() { _r=$1 && shift && rack_enter "$(rank_host "$_r")" "$@"; }
    rank_host() { awk -v r="$1" '$1 == r { print $2 }' "$W/ranks"; }
    rank_addr() { echo "$(rack_addr "$(rank_host "$1")"):7470"; }
    listening() { ip netns exec "$(rank_host "$1")" ss -ltn | grep -q "$(rank_addr "$1")"; }
else
    echo "loopback: $HOSTS ranks on this machine, every pair on 127.0.0.1; $DUR s measured per step"
    on() { shift && "$@"; }
    rank_addr() { echo "127.0.0.1:$((7470 + $1))"; }
    listening() { ss -ltn 2>/dev/null | grep -q "$(rank_addr "$1") " ||
        { ! command -v ss >/dev/null && grep -qi ":$(printf %04X $((7470 + $1))) 00000000:0000 0A" /proc/net/tcp; }; }
fi
PER=$(($(nproc) / HOSTS))
if [ "${PIN:-0}" != 0 ] && [ "$PER" -ge 1 ] && command -v taskset >/dev/null; then
    # Rank from PIN_RANK, or from mpirun's environment for the sweep's ranks.
    cat >"$W/pin.sh" <<EOF
#!/bin/sh
r=\${PIN_RANK:-\${OMPI_COMM_WORLD_RANK:?}}
exec taskset -c \$((r * $PER))-\$((r * $PER + $PER - 1)) "\$@"
EOF
    echo "pinned: rank r and its stand-ins on CPUs r x $PER to r x $PER + $((PER - 1)) (taskset)"
else
    printf '#!/bin/sh\nexec "$@"\n' >"$W/pin.sh"
    echo "not pinned (PIN=${PIN:-0}, $(nproc) CPUs for $HOSTS ranks)"
fi
chmod +x "$W/pin.sh"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The sweep.
t0=$(date +%s.%N)
if [ "$MODE" = netns ]; then
    rack_local timeout 600 mpirun --allow-run-as-root --host "$hostlist" -np "$HOSTS" \
        --mca plm_rsh_agent "$RACK_LIB_DIR/rack_rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "$RACK_CIDR" --mca btl_tcp_if_include "$RACK_CIDR" \
        --mca btl tcp,self --bind-to none "$W/pin.sh" "$SWEEP" --duration "$DUR" --publish none -o "$W/sweep.json" \
        >"$W/sweep.out" 2>&1 || { cat "$W/sweep.out"; echo "the sweep failed"; exit 1; }
else
    XDG_RUNTIME_DIR=$W timeout 600 mpirun --allow-run-as-root --oversubscribe --bind-to none \
        -np "$HOSTS" -x XDG_RUNTIME_DIR "$W/pin.sh" "$SWEEP" --listen 127.0.0.1 --duration "$DUR" \
        --publish none -o "$W/sweep.json" >"$W/sweep.out" 2>&1 ||
        { cat "$W/sweep.out"; echo "the sweep failed"; exit 1; }
fi
t1=$(date +%s.%N)

# Rank -> host, and the pairs, from the sweep's document.
python3 - "$W/sweep.json" "$W/ranks" >"$W/pairs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    for r in d["ranks"]:
        f.write("%d %s\n" % (r["rank"], r["host"]))
for p in d["pairs"]:
    print(p["a"], p["b"])
# The first pass's rounds: "round a b" for each pair test (tcp, pattern pairs).
seen = set()
with open(sys.argv[2] + ".rounds", "w") as f:
    for t in d["tests"]:
        k = (t["round"], t["src"], t["dst"])
        if t["pattern"] == "pairs" and t.get("transport", "tcp") == "tcp" and k not in seen \
                and (t["dst"], t["src"]) not in {(x[1], x[2]) for x in seen if x[0] == t["round"]}:
            seen.add(k)
            f.write("%d %d %d\n" % k)
PY

# 2. The same pairs, one after another. The mixes are the sweep's own (rack_conduct_mix).
mix() { # NAME FLOW-JSON
    printf '{"format": "fabtop-mix", "version": 1, "name": "sweep-%s", "phases": ["loaded"], "progress_deadline_s": 3, "fail_bound_s": 3, "flows": [%s]}\n' \
        "$1" "$2" >"$W/$1.json"
}
flow() { # NAME OP DIR SIZE
    printf '{"name": "%s", "transport": "tcp", "op": "%s"%s, "size": %s, "warmup_s": 0.3, "duration_s": %s}' \
        "$1" "$2" "${3:+, \"direction\": \"$3\"}" "$4" "$DUR"
}
mix latency "$(flow latency pingpong "" 64)"
mix bandwidth-ab "$(flow a-to-b stream tx 131072)"
mix bandwidth-ba "$(flow b-to-a stream rx 131072)"
"$FABTOP" serve --gen-key "$W/key" >/dev/null || exit 1
# Uncapped, as the sweep's own agents are (rack_node): `fabtop serve` caps a client key at
# AGENT_DEF_MAX_RATE_GBPS (10 Gb/s) unless told, which a loopback path exceeds.
SERVE_PIDS=
RACK_EXTRA_CLEANUP='for p in $SERVE_PIDS; do kill "$p" 2>/dev/null; done; wait; rm -rf "$W"'
r=0
while [ $r -lt "$HOSTS" ]; do
    if [ "$MODE" = netns ]; then # the rack's teardown ends what runs in its namespaces
        rack_enter "$(rank_host $r)" env PIN_RANK=$r "$W/pin.sh" "$FABTOP" serve --listen "$(rank_addr $r)" --max-rate 100000 \
            --key-file "$W/key" >"$W/serve$r.log" 2>&1 &
    else
        PIN_RANK=$r "$W/pin.sh" "$FABTOP" serve --listen "$(rank_addr $r)" --max-rate 100000 --key-file "$W/key" \
            >"$W/serve$r.log" 2>&1 &
    fi
    SERVE_PIDS="$SERVE_PIDS $!"
    r=$((r + 1))
done
r=0
while [ $r -lt "$HOSTS" ]; do
    k=0
    until listening $r; do
        k=$((k + 1))
        [ $k -ge 100 ] && { cat "$W"/serve*.log; echo "fabtop serve of rank $r did not listen"; exit 1; }
        sleep 0.05
    done
    r=$((r + 1))
done
t2=$(date +%s.%N)
while read -r a b; do
    for m in latency bandwidth-ab bandwidth-ba; do
        on "$a" env PIN_RANK="$a" "$W/pin.sh" "$FABTOP" run --mix "$W/$m.json" --peer "$(rank_addr "$b")" \
            --key-file "$W/key" -o "$W/run-$a-$b-$m.json" >"$W/run.out" 2>&1 ||
            { cat "$W/run.out"; echo "fabtop run rank $a -> rank $b ($m) failed"; exit 1; }
    done
done <"$W/pairs"
t3=$(date +%s.%N)

# 3. The same pairs again, in the sweep's rounds: a round's pairs at once, each step after the
# last one of all of them ended, as the sweep runs them. The per-pair comparison is made
# against these (the same load on the machine as in the sweep), and against step 2 too.
for rd in $(cut -d' ' -f1 "$W/ranks.rounds" | sort -un); do
    for m in latency bandwidth-ab bandwidth-ba; do
        pids=
        while read -r x a b; do
            [ "$x" = "$rd" ] || continue
            on "$a" env PIN_RANK="$a" "$W/pin.sh" "$FABTOP" run --mix "$W/$m.json" --peer "$(rank_addr "$b")" \
                --key-file "$W/key" -o "$W/rnd-$a-$b-$m.json" >"$W/rnd-$a-$b.out" 2>&1 &
            pids="$pids $!"
        done <"$W/ranks.rounds"
        for p in $pids; do
            wait "$p" || { cat "$W"/rnd-*.out; echo "fabtop run in round $rd ($m) failed"; exit 1; }
        done
    done
done

python3 - "$W" "$t0" "$t1" "$t2" "$t3" <<'PY'
import json, statistics, sys
w, t0, t1, t2, t3 = sys.argv[1], *map(float, sys.argv[2:6])
d = json.load(open(w + "/sweep.json"))
def point(path, flow):
    run = json.load(open(path))
    for ph in run["phases"]:
        for f in ph["flows"]:
            if f["name"] == flow:
                return f["points"][0]
def ratios(prefix):
    bw, lat = [], []
    for p in d["pairs"]:
        if p.get("transport", "tcp") != "tcp":
            continue
        a, b = p["a"], p["b"]
        base = "%s/%s-%s-%s-" % (w, prefix, a, b)
        ab = point(base + "bandwidth-ab.json", "a-to-b")["goodput_gbps"]
        ba = point(base + "bandwidth-ba.json", "b-to-a")["goodput_gbps"]
        l50 = point(base + "latency.json", "latency")["latency"]["p50"]
        bw += [p["bw_ab_gbps"] / ab, p["bw_ba_gbps"] / ba]
        lat.append(p["lat_p50_us"] / l50)
    return bw, lat
def q(x):
    x = sorted(x)
    return "median %.3f (p10-p90 %.3f-%.3f, n=%d)" % (statistics.median(x), x[len(x) // 10], x[(9 * len(x)) // 10], len(x))
sweep_s, seq_s = t1 - t0, t3 - t2
n = len(d["ranks"])
base_rounds = n - 1 if n % 2 == 0 else n
print("fabtop sweep, %d pairs in %d rounds (%d re-test rounds):  %.1f s wall (launch to exit)"
      % (len(d["pairs"]), d["rounds_done"], d["rounds_done"] - base_rounds, sweep_s))
print("fabtop run --peer, the same %d pairs one after another: %.1f s wall" % (len(d["pairs"]), seq_s))
print("  ratio sequential/sweep: %.2fx (target >= 3.5x)" % (seq_s / sweep_s))
got = {}
for what, prefix in (("one pair at a time", "run"), ("in the sweep's rounds, a round's pairs at once", "rnd")):
    bw, lat = got[prefix] = ratios(prefix)
    print("per pair, sweep / fabtop run %s, same path, same run:" % what)
    print("  bandwidth (each direction): " + q(bw))
    print("  latency p50:                " + q(lat))
# The noise floor: fabtop run against itself on the same pair (pass 2 / pass 3), what a 5%
# agreement has to be read against.
print("per pair, fabtop run one at a time / fabtop run in rounds (the tool against itself):")
print("  bandwidth (each direction): " + q([b / a for a, b in zip(*[got[k][0] for k in ("run", "rnd")])]))
print("  latency p50:                " + q([b / a for a, b in zip(*[got[k][1] for k in ("run", "rnd")])]))
PY
