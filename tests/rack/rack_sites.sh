#!/bin/sh
# rack_sites: fabtop sweep --sites on a rack of 4 hosts on two leaves, the leaves given as two
# sites by a sites file (each host's /32), under a real mpirun: every pair within a site keeps
# the class the path shows (one L2 segment: leaf), every pair across the sites is a wide-area
# path (wan) in the document; without --groups the sites place the ranks (each rank's group is
# its site); one event counts the pairs across sites and, for the ring pattern, one names the
# rule for tightly coupled ranks. A sites file that does not parse is refused before any test
# (65, its line named); a missing one is 66.
# Usage: rack_sites.sh FABTOP_SWEEP (skipped without it, root, OpenMPI, Slurm and munge).
set -u
SWEEP=${1:-}
RACK_LIB_DIR=$(cd "$(dirname "$0")" && pwd)
. "$RACK_LIB_DIR/rack_test.sh"
rack_test_needs fabtop-sweep "$SWEEP"
rack_test_workdir racksites
rack_test_sweep "$SWEEP"
P=rz$(($$ % 100000))
rack_up -p "$P" -s 10.88.0 -n 4 -l 2 -u 1gbit -r 100mbit
rc=$?
[ $rc -eq 0 ] || fail "rack_up exited $rc"
echo "rack $P: $(tr '\n' ';' <"$RACK_STATE/hosts")"
# Hosts 1-2 (leaf 0) are site east, 3-4 (leaf 1) site west.
{
    echo "# two sites of the test rack"
    printf 'east'
    for h in $(echo "$RACK_HOSTS" | tr ' ' '\n' | head -2); do printf ' %s/32' "$(rack_addr "$h")"; done
    printf '\nwest'
    for h in $(echo "$RACK_HOSTS" | tr ' ' '\n' | tail -2); do printf ' %s/32' "$(rack_addr "$h")"; done
    echo
} >"$W/sites"
cat "$W/sites"
mpi() { rack_test_mpi 4 "$SWEEP" --rails eth0 "$@"; }
mpi --sites "$W/sites" --pattern pairs --pattern ring --duration 0.5 --publish none \
    -o "$W/sites.json" >"$W/sites.out" 2>&1
rc=$?
cat "$W/sites.out"
[ $rc -eq 0 ] || fail "mpirun fabtop-sweep --sites exited $rc"
python3 - "$W/sites.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
site = {}
for r in d["ranks"]:
    site[r["rank"]] = r.get("group")
if sorted(set(site.values())) != ["east", "west"] or list(site.values()).count("east") != 2:
    bad.append("ranks' groups from the sites: %s" % site)
pairs = [p for p in d["pairs"] if p.get("transport", "tcp") == "tcp"]
if len(pairs) != 6:
    bad.append("%d pairs, want 6" % len(pairs))
for p in pairs:
    want = "wan" if site[p["a"]] != site[p["b"]] else "leaf"
    if p.get("path_class") != want:
        bad.append("pair %d-%d (%s, %s): path_class %s, want %s"
                   % (p["a"], p["b"], site[p["a"]], site[p["b"]], p.get("path_class"), want))
cross = [e for e in d["events"] if "pairs cross sites (path class wan)" in e]
if not cross or "4 of 6 pairs" not in cross[0]:
    bad.append("no event counting 4 of 6 pairs across sites: %s" % cross)
if not any("keep tightly coupled ranks inside one validated site" in e for e in d["events"]):
    bad.append("no ring event with the rule")
# A test's own run says which sites it crossed (the path's evidence).
t = [t for t in d["tests"] if t["pattern"] == "pairs" and t["status"] == "ok"
     and site[t["src"]] != site[t["dst"]]][0]
path = t["run"]["path"]
print("a cross-site test's path: class %s, sites %s / %s, %s" % (
    path["class"], path.get("site_local"), path.get("site_peer"), path.get("site_from")))
if path["class"] != "wan" or {path.get("site_local"), path.get("site_peer")} != {"east", "west"}:
    bad.append("the cross-site test's path: %s" % path)
if d["status"] != "ok":
    bad.append("status %s" % d["status"])
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
print("ok: 6 pairs, 2 within the sites (leaf), 4 across (wan); groups from the sites; events")
PY
pass "fabtop sweep --sites: pairs across sites are wide-area, the sites place the ranks"

# Bad input, refused by rank 0 before any test: one line each.
printf 'east 10.88.0.1/33\n' >"$W/bad-sites"
mpi --sites "$W/bad-sites" --duration 0.3 --publish none >"$W/bad.out" 2>&1
rc=$?
[ $rc -eq 65 ] || { cat "$W/bad.out"; fail "a sites file that does not parse: exit $rc, want 65"; }
grep -q "bad-sites:1: .10.88.0.1/33. is not a network prefix" "$W/bad.out" || { cat "$W/bad.out"; fail "the bad line is not named"; }
mpi --sites "$W/no-such-sites" --duration 0.3 --publish none >"$W/missing.out" 2>&1
rc=$?
[ $rc -eq 66 ] || { cat "$W/missing.out"; fail "a missing sites file: exit $rc, want 66"; }
pass "a sites file that does not parse: 65, its line named; a missing one: 66"
