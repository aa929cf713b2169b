#!/usr/bin/env python3
"""Checks the `fabtop topo` output brought back from the rxe-vm guest (vm_topo_live).

usage: check_topo_live.py OUTDIR   (OUTDIR has topo.json, topo.txt and their .rc files)
Prints PASS/FAIL per check; exits 0 when all pass, 1 otherwise.
"""
import json
import os
import sys


def read(outdir, name):
    try:
        with open(os.path.join(outdir, name), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: check_topo_live.py OUTDIR\n")
        return 64
    outdir = sys.argv[1]
    results = []

    def check(name, ok, detail=""):
        results.append(bool(ok))
        line = ("PASS" if ok else "FAIL") + ": " + name
        if not ok and detail:
            line += " (" + detail + ")"
        print(line)

    json_rc = (read(outdir, "topo.json.rc") or "").strip()
    txt_rc = (read(outdir, "topo.txt.rc") or "").strip()
    text = read(outdir, "topo.txt") or ""
    check("fabtop topo --json exits 0", json_rc == "0", "exit " + (json_rc or "unknown"))
    check("fabtop topo exits 0", txt_rc == "0", "exit " + (txt_rc or "unknown"))
    check("fabtop topo (text) names rxe0", "rxe0" in text)

    doc = None
    try:
        doc = json.loads(read(outdir, "topo.json") or "")
    except ValueError as e:
        check("topo --json is valid JSON", False, str(e))
        doc = {}
    else:
        check("topo --json is valid JSON", isinstance(doc, dict))
        if not isinstance(doc, dict):
            doc = {}

    nics = doc.get("nics") or []
    ports = doc.get("ports") or []
    netdevs = doc.get("netdevs") or []
    nic_i = next((i for i, n in enumerate(nics) if n.get("rdma_dev") == "rxe0"), None)
    check('RDMA NIC "rxe0" present', nic_i is not None,
          "rdma_devs: %s" % [n.get("rdma_dev") for n in nics])
    nic = nics[nic_i] if nic_i is not None else {}
    check('rxe0 "pci" is null', nic_i is not None and "pci" in nic and nic["pci"] is None,
          "pci=%r" % nic.get("pci", "absent"))

    port = next((p for p in ports if nic_i is not None and p.get("nic") == nic_i
                 and p.get("num") == 1), None)
    check("rxe0 port 1 present", port is not None)
    port = port or {}
    for key, want in (("state", "ACTIVE"), ("phys_state", "LinkUp"),
                      ("link_layer", "Ethernet"), ("active_mtu", 1024)):
        check('rxe0 port 1 "%s" is %r' % (key, want), port.get(key) == want,
              "got %r" % port.get(key))

    gids = port.get("gids") or []
    roce = [g for g in gids if g.get("type") == "RoCE v2" and g.get("ip") == "10.0.0.1"]
    check('rxe0 port 1 has a "RoCE v2" GID with ip 10.0.0.1', roce,
          "gids: %s" % [(g.get("index"), g.get("type"), g.get("ip")) for g in gids])
    check('that GID\'s "ndev" is veth0', any(g.get("ndev") == "veth0" for g in roce),
          "ndev: %s" % [g.get("ndev") for g in roce])

    names = [d.get("name") for d in netdevs]
    check('netdev "veth0" present', "veth0" in names, "netdevs: %s" % names)
    pn = port.get("netdev")
    check("rxe0 port 1 netdev is veth0",
          isinstance(pn, int) and 0 <= pn < len(netdevs) and names[pn] == "veth0",
          "netdev=%r" % pn)

    failed = results.count(False)
    print("%d of %d checks passed" % (len(results) - failed, len(results)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
