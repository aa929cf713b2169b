#!/usr/bin/env python3
"""check_fabric: oracles for the ibsim tests. Reads an ibsim topology file the way ibsim
does (node headers, port lines, w= options, GUIDs handed out in file order) and fabtop's
JSON, and compares: the discovered graph, hop counts, routes against ibtracert, counters
against perfquery. Prints what differs and exits 1, or prints a one-line summary."""

import json
import re
import sys
from collections import deque

HEADER = re.compile(r'^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"(.*)$')
PORT = re.compile(r'^\[(\d+)\]\s*"([^"]+)"(?:\[(\d+)\])?(.*)$')
DESC = re.compile(r'#\s*"([^"]*)"')


def parse_net(path):
    """Nodes {id: {type, nports, desc, guid}} and links {frozenset((id, port), (id, port)):
    width}. ibsim gives switches GUIDs from 0x200000 and CAs from 0x100000 in file order,
    a CA taking nports + 1 of them (ibsim/sim_net.c new_node)."""
    nodes, links, cur = {}, {}, None
    guid = {"Switch": 0x200000, "Hca": 0x100000}
    enabled = {}
    for line in open(path):
        line = line.rstrip("\n")
        m = HEADER.match(line)
        if m:
            kind = "Switch" if m.group(1) == "Switch" else "Hca"
            nports = int(m.group(2))
            d = DESC.search(m.group(4))
            cur = m.group(3)
            nodes[cur] = {"type": "switch" if kind == "Switch" else "CA", "nports": nports,
                          "desc": d.group(1) if d else cur, "guid": guid[kind]}
            guid[kind] += 1 if kind == "Switch" else nports + 1
            continue
        m = PORT.match(line)
        if m and cur:
            port, remote = int(m.group(1)), m.group(2)
            rport = int(m.group(3)) if m.group(3) else 1
            w = re.search(r'\bw=(\d+)', m.group(4))
            # LinkWidthEnabled bits (1 1X, 2 4X, 8 12X); ibsim's default enables 4X only.
            enabled[(cur, port)] = int(w.group(1)) if w else 2
            links[frozenset([(cur, port), (remote, rport)])] = None
    lanes = {1: 1, 2: 4, 4: 8, 8: 12}
    for key in links:
        (a, b) = tuple(key)
        both = enabled.get(a, 2) & enabled.get(b, 2)
        links[key] = max((lanes[bit] for bit in lanes if both & bit), default=0)
    return nodes, links


def fabric(doc):
    ib = doc["fabric"]["ib"]
    return ib, ib["nodes"], ib["ports"]


def graph(net, js, state="ACTIVE"):
    nodes, links = parse_net(net)
    doc = json.load(open(js))
    ib, fnodes, fports = fabric(doc)
    errors = []
    by_desc = {n["desc"]: n for n in fnodes}
    if len(by_desc) != len(fnodes):
        errors.append("node descriptions are not unique in the discovered fabric")
    want = {n["desc"]: n for n in nodes.values()}
    for d in sorted(set(want) | set(by_desc)):
        if d not in by_desc:
            errors.append(f"node {d!r} is in the file but was not discovered")
            continue
        if d not in want:
            errors.append(f"node {d!r} was discovered but is not in the file")
            continue
        a, b = want[d], by_desc[d]
        if a["type"] != b["type"] or a["nports"] != b["nports"]:
            errors.append(f"{d}: file says {a['type']} with {a['nports']} ports, "
                          f"discovered {b['type']} with {b['nports']}")
        if int(b["guid"], 16) != a["guid"]:
            errors.append(f"{d}: GUID {b['guid']}, ibsim assigns {a['guid']:#x}")
    got = {}
    for i, p in enumerate(fports):
        r = p["remote"]
        if r is None or r < i:
            continue
        q = fports[r]
        key = frozenset([(fnodes[p["node"]]["desc"], p["num"]),
                         (fnodes[q["node"]]["desc"], q["num"])])
        got[key] = (p["width"], q["width"], p["state"], q["state"])
    exp = {frozenset((nodes[n]["desc"], port) for (n, port) in key): w
           for key, w in links.items()}
    for key in exp.keys() - got.keys():
        errors.append(f"link {sorted(key)} is in the file but was not discovered")
    for key in got.keys() - exp.keys():
        errors.append(f"link {sorted(key)} was discovered but is not in the file")
    for key in exp.keys() & got.keys():
        wa, wb, sa, sb = got[key]
        if wa != exp[key] or wb != exp[key]:
            errors.append(f"link {sorted(key)}: width {wa}X/{wb}X, expected {exp[key]}X")
        if sa != state or sb != state:
            errors.append(f"link {sorted(key)}: state {sa}/{sb}")
    if len(ib["links"]) != len(exp):
        errors.append(f"{len(ib['links'])} links listed, {len(exp)} in the file")
    # Hop counts: cables on the shortest path from the local port's node (ibsim's SIM_HOST).
    local = ib["locals"][0]
    start = fnodes[fports[local["fport"]]["node"]]["desc"]
    adj = {}
    for key in exp:
        (a, _), (b, _) = tuple(key)
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    dist, queue = {start: 0}, deque([start])
    while queue:
        u = queue.popleft()
        for v in adj.get(u, ()):
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    for n in fnodes:
        if dist.get(n["desc"]) != n["hops"]:
            errors.append(f"{n['desc']}: {n['hops']} hops, expected {dist.get(n['desc'])}")
    return errors, f"{len(fnodes)} nodes, {len(got)} links, hop counts match {net}"


TRACE = re.compile(r'^\[(\d+)\] -> (?:switch|ca) port \{(0x[0-9a-f]+)\}\[(\d+)\]')


def tracert(js, index, trace):
    """ibtracert prints one line per cable: out port, next node (port GUID) and in port.
    The switch entered on line k leaves by the out port printed on line k + 1."""
    doc = json.load(open(js))
    ib, fnodes, fports = fabric(doc)
    route = ib["routes"][int(index)]
    steps = [TRACE.match(line) for line in open(trace)]
    steps = [(int(m.group(1)), int(m.group(2), 16), int(m.group(3))) for m in steps if m]
    if not steps:
        return [f"no hops in {trace}"], ""
    want = [(steps[k][1], steps[k][2], steps[k + 1][0]) for k in range(len(steps) - 1)]
    got = [(int(fnodes[h["node"]]["guid"], 16), h["in"], h["out"]) for h in route["hops"]]
    errors = []
    if route["status"] != "ok":
        errors.append(f"route {route['from']} -> {route['to']}: {route['status']} "
                      f"({route['detail']})")
    if got != want:
        errors.append(f"route {route['from']} -> {route['to']}: fabtop walked "
                      f"{[(hex(g), i, o) for g, i, o in got]}, ibtracert "
                      f"{[(hex(g), i, o) for g, i, o in want]}")
    last = fports[route["dst"]]
    dst_guid = int(fnodes[last["node"]]["guid"], 16) + last["num"]
    if steps[-1][1] != dst_guid or steps[-1][2] != last["num"]:
        errors.append(f"ibtracert ends at {steps[-1][1]:#x}[{steps[-1][2]}], fabtop's "
                      f"destination is {dst_guid:#x}[{last['num']}]")
    return errors, f"route {route['from']} -> {route['to']}: {len(got)} switches as ibtracert"


PQ = re.compile(r'^(\w+):\.+(\d+)$')
NAMES = {"SymbolErrorCounter": "symbol_error", "LinkDownedCounter": "link_downed",
         "PortRcvErrors": "port_rcv_errors", "PortXmitDiscards": "port_xmit_discards",
         "PortXmitWait": "port_xmit_wait", "LinkErrorRecoveryCounter": "link_error_recovery",
         "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
         "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
         "VL15Dropped": "VL15_dropped"}


def counters(js, desc, port, pq, nonzero):
    """Error counters fabtop read for DESC port PORT equal perfquery's (read afterwards,
    with no traffic in between); the named counter must also be non-zero."""
    doc = json.load(open(js))
    ib, fnodes, fports = fabric(doc)
    idx = [i for i, p in enumerate(fports)
           if fnodes[p["node"]]["desc"] == desc and p["num"] == int(port)]
    if not idx:
        return [f"no port {desc} {port}"], ""
    ours = {c["name"]: c for c in ib["counters"]["values"] if c["port"] == idx[0]}
    theirs = {}
    for line in open(pq):
        m = PQ.match(line.strip())
        if m and m.group(1) in NAMES:
            theirs[NAMES[m.group(1)]] = int(m.group(2))
    errors = []
    if len(theirs) < 5:
        errors.append(f"perfquery output has {len(theirs)} known counters")
    for name, v in theirs.items():
        c = ours.get(name)
        if c is None:
            errors.append(f"{name}: perfquery {v}, fabtop did not read it")
        elif c["v1"] != v or c["v0"] != v:
            errors.append(f"{name}: fabtop {c['v0']} -> {c['v1']}, perfquery {v}")
    if nonzero and not theirs.get(nonzero):
        errors.append(f"{nonzero} is 0: the test did not make errors")
    return errors, f"{desc} port {port}: {len(theirs)} counters equal perfquery's"


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "graph":
        errors, ok = graph(*args)
    elif cmd == "tracert":
        errors, ok = tracert(*args)
    elif cmd == "counters":
        errors, ok = counters(args[0], args[1], args[2], args[3],
                              args[4] if len(args) > 4 else None)
    else:
        sys.exit(f"unknown check {cmd}")
    for e in errors:
        print("  " + e)
    if errors:
        sys.exit(1)
    print(ok)


if __name__ == "__main__":
    main()
