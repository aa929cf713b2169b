#!/bin/sh
# ibsim_degraded: two switches joined by two cables, one at reduced width (ibsim's w=1
# leaves one end's LinkWidthEnabled at 1X, so the link trains 1X). Discovery must see 1X on
# exactly that link and 4X elsewhere, the lint must name it (fabric-link-degraded, WARN)
# and nothing else, and the text view must show the narrow link. Discovery runs before any
# subnet manager (directed-route SMPs need no LIDs): OpenSM's sweep enables every width
# the ports support, after which ibsim retrains the link at 4X, and the lint must then
# fall silent.
. "$(dirname "$0")/ibsim_lib.sh"

need_ibsim
start_ibsim "$NETS/narrow.net"

fabtop_fabric "$TMP/f.json" --window 0 --lint
rc=$?
[ $rc = 1 ] || fail "fabtop --lint exit $rc, expected 1 (warnings): $(cat "$TMP/f.json.err")"
# No subnet manager yet: the links are up (LinkUp) but INIT, not ACTIVE.
$CHECK graph "$NETS/narrow.net" "$TMP/f.json" INIT || fail "discovered graph differs from the file"
warn=$(json "$TMP/f.json" "[f['message'] for f in d['lint'] if f['rule'] == 'fabric-link-degraded' and f['severity'] == 'warning']")
case $warn in
"['the link edge-a port 8 <-> edge-b port 8 runs 1X: LinkWidthEnabled on edge-a port 8 allows only 1X while edge-b port 8 allows 4X (both support 12X)']") ;;
*) fail "degraded-link findings: $warn" ;;
esac
pass "the 1X link is discovered and reported; the 4X links are not"

sim timeout 60 "$FABTOP" topo --fabric --window 0 --lldp-socket "$TMP/none.sock" \
    >"$TMP/f.txt" 2>/dev/null || fail "fabtop topo --fabric (text)"
grep -qF "port 8   -> edge-b port 8, 1X SDR, 2.5 Gb/s, INIT/LinkUp" "$TMP/f.txt" ||
    { cat "$TMP/f.txt"; fail "text does not show the 1X link"; }
grep -qF "port 7   -> edge-b port 7, 4X SDR, 10 Gb/s, INIT/LinkUp" "$TMP/f.txt" ||
    fail "text does not show the 4X link"
pass "text view shows 1X SDR at 2.5 Gb/s beside 4X SDR at 10 Gb/s"

run_opensm
fabtop_fabric "$TMP/g.json" --window 0 --lint
rc=$?
[ $rc = 0 ] || fail "after OpenSM's sweep: exit $rc, expected 0"
[ "$(json "$TMP/g.json" "sorted(set(p['width'] for p in d['fabric']['ib']['ports'] if p['width']))")" = "[4]" ] ||
    fail "after OpenSM's sweep the link is still narrow"
[ "$(json "$TMP/g.json" "[f['message'] for f in d['lint'] if f['severity'] == 'warning']")" = "[]" ] ||
    fail "warnings after the link came back: $(json "$TMP/g.json" "[f['message'] for f in d['lint']]")"
pass "once OpenSM enabled 4X the link runs 4X and the warning is gone"
