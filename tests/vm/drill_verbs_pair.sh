#!/bin/sh
# vm_drill_verbs_pair: fault drills of a verbs WRITE ping-pong between two Soft-RoCE guests
# on two wires (rxe-vm.sh --mode pair --wires 2; drill_verbs_pair.guest.sh): b serves on its
# control address (eth0), a's lane runs over rxe0 on the data wire (eth1). Judged here:
# `--device eth0 --owned` (the control connection's netdev) refused with exit 77, a veth that
# rxe0 does not sit on refused with 69 (the lane's GID is on eth1); two
# link-downs of a's eth1 (2 s each), each detected by the queue pair's own completion error
# within the verbs bound (on Linux 6.1 a local QP operation error: the route to the peer's
# GID went with the link, rxe_find_route4 finds none), recovered on new queue pairs only once
# the link was back and within the policy's deadline, every request accounted for, rxe0's
# port DOWN while the link was (its GID kept), its link_downed counter up by one per fault,
# the control wire up throughout and the drill's own control session alive to the end; one
# peer-kill and one 2 s blackhole by the agent (its queue pairs to the error state): retry
# exceeded within the bound, recovered on new queue pairs, retry_exceeded_err moved. Exit 0
# pass, 77 skip, 1 fail.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -x "${FABTOP_BIN:-}" ] || { echo "vm_drill_verbs_pair: FABTOP_BIN is not an executable" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_drill_verbs_pair.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${FABTOP_BUILD:-$tmp}/vm-logs
out=$logdir/vm_drill_verbs_pair.out
rm -rf "$out"
"$FABTOP_BIN" serve --gen-key "$tmp/key" >/dev/null
rc=0
sh "$here/rxe-vm.sh" --mode pair --wires 2 --pkg python3 --timeout 480 --bin "$FABTOP_BIN" \
    --file "$tmp/key:/usr/share/fabtop-test/key" \
    --guest-script "$here/drill_verbs_pair.guest.sh" --outdir "$out" \
    --log "$logdir/vm_drill_verbs_pair.console.log" || rc=$?
[ $rc != 77 ] || exit 77
[ $rc = 0 ] || { echo "vm_drill_verbs_pair: the VM run failed (exit $rc); console logs in $logdir" >&2; exit 1; }
python3 - "$out/a" <<'PY'
import json, sys
out = sys.argv[1]
bad = []


def text(name):
    with open(out + "/" + name) as f:
        return f.read().strip()


def counters(name):
    return {k: int(v) for k, v in (l.split() for l in text(name + ".counters").splitlines())}


data_dev, data_ip, data_peer, gid_index, ctl_dev, ctl_ip, ctl_peer = text("env").split()
if data_dev == ctl_dev:
    bad.append("one netdev for data and control (%s): not the two-wire mode" % data_dev)

# The control connection's netdev is refused before any traffic.
rc, msg = text("refuse.rc"), text("refuse.out")
if rc != "77" or "%s in this process's namespace carries the control connection to %s" % (ctl_dev, ctl_peer) not in msg:
    bad.append("--device %s --owned: exit %s: %s" % (ctl_dev, rc, msg))
# A netdev rxe0 does not sit on: refused (69) by the lane's queue pair, the link left up.
rc, msg = text("other.rc"), text("other.out")
if rc != "69" or "is on %s, not on --device vx0" % data_dev not in msg or \
        ",UP," not in text("other.link") + ",":
    bad.append("--device vx0 --owned: exit %s: %s (%s)" % (rc, msg, text("other.link")))


def judge(name, fault, reps):
    rc = text(name + ".rc")
    if rc != "0":
        bad.append("%s: fabtop drill exited %s: %s" % (name, rc, text(name + ".out")))
        return None
    d = json.load(open(out + "/" + name + ".json"))
    if d["complete"] is not True or len(d["repetitions"]) != reps or d["fault"]["kind"] != fault \
            or d["transport"] != "verbs":
        bad.append("%s: complete %s, %d repetitions, fault %s, transport %s"
                   % (name, d["complete"], len(d["repetitions"]), d["fault"]["kind"], d["transport"]))
    for r in d["repetitions"]:
        f = r["flows"][0]
        q = f["requests"]
        i = r["index"]
        det = f["detection"] or ""
        # The queue pair's bound: (retry_cnt 3 + 1) x 4 x T_o (4.096 us x 2^14 = 67.1 ms) =
        # 1.074 s, and the liveness probe sent after one T_o: 1.141 s; the drill adds 0.1 s.
        if not (1.2 < f["detect_bound_s"] < 1.3):
            bad.append("%s rep %d: detect bound %s s, not the verbs bound" % (name, i, f["detect_bound_s"]))
        # The queue pair's own completion error, not the request's deadline.
        want = ["retry counter exceeded"] if fault != "link-down" else \
            ["local QP operation error", "retry counter exceeded"]
        if not (f["detect_ok"] and det.startswith("error: queue pair") and any(w in det for w in want)
                and f["detect_s"] <= f["detect_bound_s"]):
            bad.append("%s rep %d: detected %s after %s s (bound %s) by %r"
                       % (name, i, f["detect_ok"], f["detect_s"], f["detect_bound_s"], det))
        since = (f["recovered_at_s"] or 0) - r["injected_at_s"]
        # A link-down or a blackhole ends after --for 2: nothing answers before it does (the
        # link-down's injection is when the netdev went down, the blackhole's when the agent
        # answered fault.inject, a little after its window began).
        least = {"link-down": 1.95, "blackhole": 1.9}.get(fault, 0)
        if not (f["recovered"] and f["recover_ok"] and f["reconnects"] >= 1 and since >= least):
            bad.append("%s rep %d: recovered %s (%s s after the detection, %.3f s after the "
                       "injection), %s reconnects" % (name, i, f["recovered"], f["recover_s"], since,
                                                      f["reconnects"]))
        if f["returned_at_s"] is None:
            bad.append("%s rep %d: never back at the quiet p99" % (name, i))
        lost = q["failed"] + q["abandoned"]
        if q["hanging"] != 0 or q["issued"] != q["completed"] + lost or lost < 1 or q["completed"] < 20:
            bad.append("%s rep %d: requests %s" % (name, i, q))
    p = d["process"]
    if p["fds_after"] > p["fds_before"] or p["threads_after"] > p["threads_before"]:
        bad.append("%s: left behind: %s" % (name, p))
    return d


down = judge("down", "link-down", 2)
kill = judge("kill", "peer-kill", 1)
hole = judge("hole", "blackhole", 1)
if down and down["fault"].get("device") != data_dev:
    bad.append("link-down: the document names device %s, not %s" % (down["fault"].get("device"), data_dev))

# What rdma_rxe did, sampled every 0.1 s during the link-down drill: rxe0's port DOWN while
# eth1 was, ACTIVE again after; the lane's GID entry kept (IPv4 addresses stay on a downed
# link, so roce_gid_mgmt removes nothing); the connected route to the data wire gone while down;
# the control wire up in every sample.
samples = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in text("samples").splitlines()]
downs = 0
prev = None
for s in samples:
    st = s["port"].split(":")[-1]
    if st == "DOWN" and prev != "DOWN":
        downs += 1
    prev = st
if downs != 2:
    bad.append("rxe0's port went DOWN %d times in %d samples, not 2" % (downs, len(samples)))
if not any(s["port"].endswith("DOWN") and s["data"] == "down" and s["routes"] == "0" for s in samples):
    bad.append("no sample with rxe0 DOWN, %s down and no route through it" % data_dev)
if not samples or not samples[-1]["port"].endswith("ACTIVE") or samples[-1]["data"] != "up":
    bad.append("rxe0 / %s not back up at the end: %s" % (data_dev, samples[-1:]))
if any(s["ctl"] != "up" for s in samples):
    bad.append("the control wire %s was not up in every sample" % ctl_dev)
gids = {s["gid"] for s in samples}
if len(gids) != 1 or "none" in gids:
    bad.append("the lane's GID index %s changed: %s" % (gid_index, sorted(gids)))
if text("data.after") != "up":
    bad.append("%s is %s after the drills" % (data_dev, text("data.after")))

c0, c1, k0, k1 = counters("down0"), counters("down1"), counters("kill0"), counters("kill1")
linkd = c1["link_downed"] - c0["link_downed"]
if linkd != 2:
    bad.append("rxe0 link_downed moved %d over two link-downs, not 2" % linkd)
kre = k1["retry_exceeded_err"] - k0["retry_exceeded_err"]
if kre < 1:
    bad.append("rxe0 retry_exceeded_err moved %d over a peer-kill" % kre)
h0, h1 = counters("hole0"), counters("hole1")
hre = h1["retry_exceeded_err"] - h0["retry_exceeded_err"]
if hre < 1:
    bad.append("rxe0 retry_exceeded_err moved %d over a blackhole" % hre)
dmesg = text("dmesg")
if dmesg.count("rxe0: set down") != 2:
    bad.append("dmesg has %d 'rxe0: set down' lines, not 2" % dmesg.count("rxe0: set down"))
# A local QP operation error on a downed link is rxe's route lookup failing (rxe_find_route4):
# with its dynamic debug on, the kernel says so once per link-down at least.
noroute = dmesg.count("rxe_find_route4: no route to %s" % data_peer)
local = down and sum("local QP operation error" in (r["flows"][0]["detection"] or "")
                     for r in down["repetitions"])
try:
    dyndbg = "no route" in text("dyndbg")
except OSError:
    dyndbg = False
if dyndbg and local and noroute < local:
    bad.append("%d local QP operation errors but %d 'no route to %s' lines from rdma_rxe"
               % (local, noroute, data_peer))

for b in bad:
    print("FAIL: " + b)
if bad:
    sys.exit(1)
fd = [r["flows"][0] for r in down["repetitions"]]
fk = kill["repetitions"][0]["flows"][0]
print("PASS: 2 link-downs of %s: detected in %.3f-%.3f s by %r (bound %.2f s), recovered %.3f-%.3f s "
      "after the detection; rxe0 link_downed +%d, completer_retry_err +%d, retry_exceeded_err +%d; "
      "rdma_rxe 'no route to' %s x%s; control on %s up throughout" % (
          data_dev, min(f["detect_s"] for f in fd), max(f["detect_s"] for f in fd),
          fd[0]["detection"].split(":")[2].split("(")[0].strip(), fd[0]["detect_bound_s"],
          min(f["recover_s"] for f in fd), max(f["recover_s"] for f in fd), linkd,
          c1["completer_retry_err"] - c0["completer_retry_err"],
          c1["retry_exceeded_err"] - c0["retry_exceeded_err"], data_peer,
          noroute if dyndbg else "? (no dynamic debug)", ctl_dev))
print("PASS: peer-kill: detected in %.3f s by retry exceeded, recovered in %.3f s, retry_exceeded_err +%d"
      % (fk["detect_s"], fk["recover_s"], kre))
fh = hole["repetitions"][0]["flows"][0]
print("PASS: blackhole (the agent's, 2 s): detected in %.3f s by retry exceeded, recovered %.3f s after "
      "the detection, retry_exceeded_err +%d" % (fh["detect_s"], fh["recover_s"], hre))
PY
