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
rc, doc = run("gid")
r = rules(doc)
print("gid:", rc, sorted(r))
if rc != 2 or "gid-index" not in r or "GID index 9 does not exist" not in r["gid-index"]["message"]:
    bad.append("gid: a missing GID index 9 not named (exit %d)" % rc)
rc, doc = run("matched")
print("matched:", rc, [f["message"] for f in doc["findings"]])
if rc != 0:
    bad.append("matched: exit %d, not 0" % rc)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
