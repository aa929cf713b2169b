#!/usr/bin/env python3
"""check_doctor_pair: judge the doctor runs of doctor_pair.guest.sh (argv[1]: its $OUT)."""
import json
import os
import sys

out = os.path.join(sys.argv[1], "a")
bad = []


def run(name):
    with open(os.path.join(out, name + ".rc")) as f:
        rc = int(f.read().strip())
    with open(os.path.join(out, name + ".json")) as f:
        return rc, json.load(f)


def rules(doc):
    return {f["rule"]: f for f in doc["findings"]}


rc, doc = run("mismatch")
r = rules(doc)
print("mismatch:", rc, sorted(r))
if rc != 2:
    bad.append("mismatch: exit %d, not 2" % rc)
if "roce-netdev-mtu" not in r or r["roce-netdev-mtu"]["local"] != "1500" \
        or r["roce-netdev-mtu"]["peer"] != "4200":
    bad.append("mismatch: the netdev MTUs 1500 / 4200 not named")
pm = r.get("path-mtu")
if not pm or "path MTU 4096 > rxe0 active MTU 1024 on" not in pm["message"]:
    bad.append("mismatch: path MTU 4096 against rxe0's 1024 not named: %s" % pm)
else:
    print("  ", pm["message"])
walk = doc.get("qp_walk") or {"tries": [], "works": None}
t = walk["tries"]
print("  walk:", [(x["path_mtu_bytes"], x["reached"], x["messages_delivered"], x["error"]) for x in t])
# rdma_rxe accepts path MTU 4096 at RTR (it checks the port's maximum, not its active MTU);
# the 4096-byte messages then die at a's 1500-byte netdev: retry exceeded. 1024 works.
if len(t) < 2 or t[0]["path_mtu_bytes"] != 4096 or not t[0]["setup_ok"] \
        or t[0]["messages_delivered"] != 0 or "retry" not in (t[0]["error"] or ""):
    bad.append("mismatch: the walk at path MTU 4096 did not reach RTS and then lose its "
               "messages to retry exceeded: %s" % t[:1])
elif walk["works"] != 1 or t[1]["path_mtu_bytes"] != 1024 or t[1]["messages_delivered"] != 5:
    bad.append("mismatch: the walk did not prove path MTU 1024: %s" % t[1:])
qw = r.get("qp-walk")
if not qw or "use path MTU 1024" not in qw["message"]:
    bad.append("mismatch: no qp-walk finding naming path MTU 1024: %s" % qw)
else:
    print("  ", qw["message"])
rc, doc = run("gid")
r = rules(doc)
print("gid:", rc, sorted(r))
if rc != 2 or "gid-index" not in r or "GID index 9 does not exist" not in r["gid-index"]["message"]:
    bad.append("gid: a missing GID index 9 not named (exit %d)" % rc)
walk = doc.get("qp_walk") or {"tries": [], "works": None}
t = walk["tries"]
print("  walk:", [(x["gid_index_asked"], x["gid_index"], x["reached"], x["error"]) for x in t])
if len(t) != 2 or t[0]["setup_ok"] or t[0]["reached"] == "RTS" or t[1]["gid_index_asked"] != -1 \
        or walk["works"] != 1 or t[1]["messages_delivered"] != 5:
    bad.append("gid: the walk did not fail on index 9 and then work with the port's own GID")
elif "use GID index %d" % t[1]["gid_index"] not in r.get("qp-walk", {}).get("message", ""):
    bad.append("gid: the qp-walk finding does not name the GID that worked: %s" % r.get("qp-walk"))
rc, doc = run("matched")
print("matched:", rc, [f["message"] for f in doc["findings"]])
if rc != 0:
    bad.append("matched: exit %d, not 0" % rc)
walk = doc.get("qp_walk") or {"tries": [], "works": None}
t = walk["tries"]
print("  walk:", [(x["path_mtu_bytes"], x["messages_delivered"], x["rtt_p50_us"]) for x in t])
if len(t) != 1 or walk["works"] != 0 or t[0]["path_mtu_bytes"] != 4096 \
        or t[0]["messages_delivered"] != 5:
    bad.append("matched: one walk at path MTU 4096 with 5 messages delivered expected: %s" % t)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
