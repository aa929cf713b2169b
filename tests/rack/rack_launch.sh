#!/bin/sh
# rack_launch: an 8-host rack of network namespaces (tests/rack/rack_lib.sh: two leaves of
# four, 400 Mbit/s uplinks, every host port 100 Mbit/s, host 3's at 25 Mbit/s), and on it:
#  1. OpenMPI's mpirun (rack_rsh.sh as its rsh agent) starts rack_hello on all 8 hosts: 8
#     ranks, each once, each on its own host (8 distinct hostnames), each with its host's
#     address, and the hostnames gathered at rank 0 through MPI;
#  2. the same through a real Slurm (slurmctld here, one slurmd per host), srun --mpi=pmix;
#  3. the rack is what it says: `fabtop run --peer` from host 1 streams to and from a
#     `fabtop serve` on the degraded host 3 and to one on the healthy host 5 on the other leaf:
#     goodput within 15% of each port's rate, and the stream to host 5 crossed both uplinks
#     (their htb classes' byte counters).
# Usage: rack_launch.sh RACK_HELLO (the binary; skipped without it, without root or without
# OpenMPI, Slurm and munge).
set -u
HELLO=${1:-}
FABTOP=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
RACK_LIB_DIR=$(cd "$(dirname "$0")" && pwd)
. "$RACK_LIB_DIR/rack_test.sh"
rack_test_needs rack_hello "$HELLO"
T0=$(date +%s)
# Not under /tmp: every host has a private /tmp, so programs and files live in /var/tmp.
rack_test_workdir rack
cp "$HELLO" "$W/rack_hello" || fail "copy rack_hello to $W"
case $FABTOP in /tmp/*)
    cp "$FABTOP" "$W/fabtop" || fail "copy fabtop to $W"
    FABTOP=$W/fabtop
    ;;
esac
P=rl$(($$ % 100000))
HOST_MBIT=100 DEG_MBIT=25
rack_up -p "$P" -s 10.83.0 -n 8 -l 2 -u 400mbit -r ${HOST_MBIT}mbit -d "$P-h3:${DEG_MBIT}mbit"
rc=$?
[ $rc -eq 0 ] || fail "rack_up exited $rc"
echo "rack $P: $(tr '\n' ';' <"$RACK_STATE/hosts")"
T1=$(date +%s)

# check_hello OUT LAUNCHER: 8 rank lines, every rank once, 8 distinct hostnames that are the
# rack's hosts, each rank's address its host's; rank 0's gather saw the 8 hostnames.
check_hello() {
    python3 - "$1" "$2" "$RACK_STATE/hosts" <<'PY'
import re, sys
out, launcher, hosts_file = sys.argv[1], sys.argv[2], sys.argv[3]
hosts = {l.split()[0]: l.split()[1] for l in open(hosts_file) if l.strip()}
ranks, bad, world = {}, [], None
for line in open(out):
    m = re.match(r"rank (\d+) size (\d+) host (\S+) addr (\S+)$", line.strip())
    if m:
        r, size, host, addr = int(m[1]), int(m[2]), m[3], m[4]
        if r in ranks:
            bad.append("rank %d twice" % r)
        ranks[r] = host
        if size != len(hosts):
            bad.append("rank %d: size %d" % (r, size))
        if hosts.get(host) != addr:
            bad.append("rank %d on %s has address %s (the rack gave it %s)" % (r, host, addr, hosts.get(host)))
    m = re.match(r"world (\d+) hosts (\d+)$", line.strip())
    if m:
        world = (int(m[1]), int(m[2]))
if sorted(ranks) != list(range(len(hosts))):
    bad.append("ranks seen: %s" % sorted(ranks))
if sorted(ranks.values()) != sorted(hosts):
    bad.append("hostnames seen: %s" % sorted(ranks.values()))
if world != (len(hosts), len(hosts)):
    bad.append("rank 0's gather: %s" % (world,))
if bad:
    print("FAIL: %s: %s" % (launcher, "; ".join(bad)))
    sys.exit(1)
print("%s: %d ranks, each once, on %d distinct hosts with their own addresses" % (launcher, len(ranks), len(set(ranks.values()))))
PY
}

# 1. mpirun through the rsh agent, kept on the rack subnet, the rack's names in its /etc/hosts.
hostlist=$(echo "$RACK_HOSTS" | tr ' ' ',')
t=$(date +%s.%N)
rack_local timeout 120 mpirun --allow-run-as-root --host "$hostlist" -np 8 \
    --mca plm_rsh_agent "$RACK_LIB_DIR/rack_rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "$RACK_CIDR" --mca btl_tcp_if_include "$RACK_CIDR" \
    --mca btl tcp,self "$W/rack_hello" "$RACK_CIDR" >"$W/mpirun.out" 2>&1
rc=$?
mpi_s=$(python3 -c "import time; print('%.1f' % (time.time() - $t))")
cat "$W/mpirun.out"
[ $rc -eq 0 ] || fail "mpirun exited $rc"
check_hello "$W/mpirun.out" mpirun || exit 1
pass "mpirun launched rack_hello on 8 hosts in $mpi_s s"

# 2. srun --mpi=pmix through a real Slurm over the same hosts.
t=$(date +%s.%N)
slurm_up
rc=$?
[ $rc -eq 0 ] || fail "slurm_up exited $rc"
srun --mpi=list 2>&1 | grep -q pmix || skip "this Slurm has no pmix plugin (srun --mpi=list)"
up_s=$(python3 -c "import time; print('%.1f' % (time.time() - $t))")
# Open MPI 4.1 under srun --mpi=pmix (not under mpirun) has a race: a rank still inside
# MPI_Init that a faster rank already sends to can crash (SIGSEGV through a null pointer
# from mca_btl_tcp's event callback, seen in gdb; about 1 launch in 20 of 8 ranks on a loaded
# 2-core machine, 0 in 40 under mpirun). That one signature, a segfault while some rank
# never printed its line, is retried once and said; anything else, or twice, fails. Under
# AddressSanitizer (the CI's second stage) the same crash reads "AddressSanitizer: SEGV"
# (pc 0: the null callback) instead of the shell's "Segmentation fault".
srun_hello() {
    timeout 120 srun -K1 -N 8 -n 8 --mpi=pmix "$W/rack_hello" "$RACK_CIDR" >"$W/srun.out" 2>&1
}
t=$(date +%s.%N)
srun_hello
rc=$?
if [ $rc -ne 0 ] && grep -qE "Segmentation fault|AddressSanitizer: SEGV" "$W/srun.out" &&
    [ "$(grep -c '^rank ' "$W/srun.out")" -lt 8 ]; then
    grep -E "Segmentation|AddressSanitizer: SEGV|srun: error" "$W/srun.out" | head -3
    echo "NOTE: a rank crashed before it printed (Open MPI's MPI_Init race under srun); once more"
    t=$(date +%s.%N)
    srun_hello
    rc=$?
fi
srun_s=$(python3 -c "import time; print('%.1f' % (time.time() - $t))")
cat "$W/srun.out"
[ $rc -eq 0 ] || fail "srun exited $rc"
check_hello "$W/srun.out" "srun --mpi=pmix" || exit 1
pass "srun --mpi=pmix launched rack_hello on 8 hosts in $srun_s s (Slurm up in $up_s s)"
slurm_down

# 3. The shaped ports, measured by fabtop between hosts.
"$FABTOP" serve --gen-key "$W/key" >/dev/null || fail "fabtop serve --gen-key"
# One stream of 3 s after 0.5 s of warm-up; tx sends from h1, rx makes the peer send.
mix() {
    printf '{"format": "fabtop-mix", "version": 1, "name": "port-%s", "flows": [{"name": "%s", "op": "stream", "direction": "%s", "size": "64KiB", "warmup_s": 0.5, "duration_s": 3}]}\n' \
        "$1" "$1" "$1" >"$W/$1.json"
}
mix tx
mix rx
for i in 3 5; do
    h=$P-h$i
    a=$(rack_addr "$h")
    rack_enter "$h" "$FABTOP" serve --listen "$a:7470" --key-file "$W/key" >"$W/serve$i.log" 2>&1 &
    k=0
    until ip netns exec "$h" ss -ltn | grep -q "$a:7470"; do
        k=$((k + 1))
        [ $k -ge 100 ] && fail "fabtop serve on $h did not listen on $a:7470 ($(cat "$W/serve$i.log"))"
        sleep 0.05
    done
done
# The uplinks' byte counters before and after: the stream to h5 crosses them.
upbytes() {
    for d in u1 d2; do tc -n "$RACK_FABRIC" -s class show dev $d | awk '/Sent/ { print $2; exit }'; done |
        paste -sd' '
}
up0=$(upbytes)
# run I DIR: from h1 to host I, results in res-I-DIR.json.
run() {
    rack_enter "$P-h1" "$FABTOP" run --mix "$W/$2.json" --peer "$(rack_addr "$P-h$1")" \
        --key-file "$W/key" -o "$W/res-$1-$2.json" >"$W/run-$1-$2.out" 2>&1
    rc=$?
    cat "$W/run-$1-$2.out"
    [ $rc -eq 0 ] || fail "fabtop run ($2) from h1 to h$1 exited $rc"
}
run 3 tx
run 3 rx
run 5 tx
up1=$(upbytes)
python3 - "$W" "$DEG_MBIT" "$HOST_MBIT" "$up0" "$up1" <<'PY' || exit 1
import json, sys
w, deg, host = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
bad = []
for name, mbit, who in (("3-tx", deg, "h1 -> h3 (degraded port, towards h3)"),
                        ("3-rx", deg, "h3 -> h1 (degraded port, from h3)"),
                        ("5-tx", host, "h1 -> h5 (healthy port, across the uplinks)")):
    f = json.load(open("%s/res-%s.json" % (w, name)))["phases"][0]["flows"][0]
    pt = f["points"][0]
    good = pt["goodput_gbps"] * 1000
    print("%s: status %s, goodput %.1f Mbit/s, wire %.1f Mbit/s, port %.0f Mbit/s"
          % (who, f["status"], good, pt["wire_gbps"] * 1000, mbit))
    if f["status"] != "ok" or abs(good - mbit) > 0.15 * mbit:
        bad.append("%s: goodput %.1f Mbit/s is not within 15%% of its port's %.0f Mbit/s" % (who, good, mbit))
u0 = [int(x) for x in sys.argv[4].split()]
u1 = [int(x) for x in sys.argv[5].split()]
moved = [b - a for a, b in zip(u0, u1)]
print("uplink leaf 1 -> spine and spine -> leaf 2 carried %d and %d bytes" % tuple(moved))
# 3 s at 100 Mbit/s is 37.5 MB: the measured part alone must have crossed both uplinks.
if len(moved) != 2 or min(moved) < 30e6:
    bad.append("the stream to h5 did not cross the uplinks (%s bytes)" % moved)
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
PY
pass "fabtop sees the degraded port at ${DEG_MBIT} Mbit/s and a healthy one at ${HOST_MBIT} Mbit/s"
T2=$(date +%s)
echo "timing: rack up $((T1 - T0)) s, whole test $((T2 - T0)) s"
[ $((T2 - T0)) -le 300 ] || fail "the test took $((T2 - T0)) s, more than 5 minutes"
