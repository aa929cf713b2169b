#!/bin/sh
# xml_helper: an hwloc XML is parsed in the fabtop-hwloc-xml helper process. A file that
# makes libhwloc 2.9 itself crash (one misspelled attribute; lstopo-no-graphics dies on it
# too) gets one line naming the file and exit 65 instead of fabtop dying with SIGSEGV;
# every good XML gives exactly the topology that parsing it inside fabtop gives.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
data=${FABTOP_SHARED_DATA:-}
tmp=$(mktemp -d /tmp/fabtop-xmlhelper.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "PASS: $*"; }
command -v lstopo-no-graphics >/dev/null || { echo "SKIP: lstopo-no-graphics (hwloc-nox) missing"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ -x "$(dirname "$bin")/fabtop-hwloc-xml" ] || { echo "FAIL: no fabtop-hwloc-xml beside $bin"; exit 1; }

# This machine's own topology, exported by hwloc, and the same file with the Machine
# object's complete_cpuset attribute misspelled.
lstopo-no-graphics --of xml "$tmp/live.xml" || { echo "FAIL: lstopo-no-graphics --of xml"; exit 1; }
sed '0,/ complete_cpuset=/s// complete_cpusetx=/' "$tmp/live.xml" >"$tmp/crash.xml"
lstopo-no-graphics --if xml --input "$tmp/crash.xml" "$tmp/lstopo.txt" >/dev/null 2>&1
lst=$?
if [ $lst -lt 128 ]; then
    echo "note: libhwloc here does not crash on the misspelled attribute (lstopo exit $lst)"
else
    echo "libhwloc crashes on the misspelled attribute: lstopo-no-graphics exit $lst"
fi

(cd "$tmp" && "$bin" topo --input "$tmp/crash.xml" >"$tmp/out" 2>"$tmp/err")
st=$?
if [ $lst -ge 128 ]; then
    if [ $st -eq 65 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
        grep -q "crash.xml: libhwloc crashed (" "$tmp/err"; then
        pass "a file libhwloc crashes on: exit 65, $(cat "$tmp/err")"
    else
        fail "a file libhwloc crashes on: exit $st (want 65), stderr: $(cat "$tmp/err")"
    fi
    ls "$tmp"/core* >/dev/null 2>&1 && fail "the helper left a core file"
fi
# The same through --json and the other commands that take --input.
"$bin" topo --input "$tmp/crash.xml" --json --lint >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $lst -ge 128 ]; then
    [ $st -eq 65 ] && [ ! -s "$tmp/out" ] && pass "topo --json --lint: exit 65" ||
        fail "topo --json --lint on the crashing file: exit $st, $(cat "$tmp/err")"
fi

# The explorer on the same file stays up and says why at the bottom line (tmux, 100x30).
if [ $lst -ge 128 ] && command -v tmux >/dev/null; then
    sock=fabtop-xmlh-$$
    tm() { tmux -L "$sock" -f /dev/null "$@"; }
    mkdir -p "$tmp/home"
    tm new-session -d -x 100 -y 30 \
        "HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home $bin --input $tmp/crash.xml; echo EXITED \$?; sleep 30"
    seen=0 i=0
    while [ $i -lt 100 ]; do
        tm capture-pane -p >"$tmp/screen" 2>/dev/null
        grep -q "topology: .*crash.xml: libhwloc crashed" "$tmp/screen" && seen=1 && break
        sleep 0.1
        i=$((i + 1))
    done
    tm send-keys q
    i=0
    while [ $i -lt 50 ] && ! tm capture-pane -p 2>/dev/null | grep -q "EXITED"; do
        sleep 0.1
        i=$((i + 1))
    done
    tm capture-pane -p >"$tmp/screen2" 2>/dev/null
    tm kill-server 2>/dev/null
    [ $seen -eq 1 ] && grep -q "EXITED 0" "$tmp/screen2" &&
        pass "the explorer shows the crash as a message and quits with 0" ||
        fail "the explorer on the crashing file: $(tail -3 "$tmp/screen") / $(grep EXITED "$tmp/screen2")"
fi

# A helper that cannot run: one line, exit 69.
FABTOP_XML_HELPER=$tmp/no-such-helper "$bin" topo --input "$tmp/live.xml" >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 69 ] && grep -q "cannot run the XML helper" "$tmp/err" &&
    pass "missing helper: exit 69, $(cat "$tmp/err")" ||
    fail "missing helper: exit $st (want 69): $(cat "$tmp/err")"

# A helper stopped by its CPU limit (a stand-in that sends itself SIGXCPU, as RLIMIT_CPU does).
printf '#!/bin/sh\nkill -XCPU $$\n' >"$tmp/xcpu-helper"
chmod +x "$tmp/xcpu-helper"
FABTOP_XML_HELPER=$tmp/xcpu-helper "$bin" topo --input "$tmp/live.xml" >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 65 ] && grep -q "more than 20 s of CPU" "$tmp/err" &&
    pass "CPU limit: exit 65, $(cat "$tmp/err")" ||
    fail "CPU limit: exit $st (want 65): $(cat "$tmp/err")"

# The same model through the helper and in process. A copy of fabtop with no helper beside
# it parses in process (and says so in a note, which is left out of the comparison).
cp "$bin" "$tmp/fabtop-alone"
compare() {
    f=$1
    "$bin" topo --input "$f" --json >"$tmp/a.json" 2>"$tmp/a.err"
    sa=$?
    "$tmp/fabtop-alone" topo --input "$f" --json >"$tmp/b.json" 2>"$tmp/b.err"
    sb=$?
    if [ $sa -ne $sb ]; then
        fail "$(basename "$f"): helper exit $sa, in process exit $sb"
        return
    fi
    if [ $sa -ge 64 ]; then
        cmp -s "$tmp/a.err" "$tmp/b.err" && pass "$(basename "$f"): refused alike ($sa)" ||
            fail "$(basename "$f"): different refusals: $(cat "$tmp/a.err") / $(cat "$tmp/b.err")"
        return
    fi
    python3 - "$tmp/a.json" "$tmp/b.json" <<'EOF' && pass "$(basename "$f"): same model" ||
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
notes = b["notes"]
inproc = [n for n in notes if "parsed inside fabtop" in n]
if not inproc:
    print("in-process copy did not parse in process (an installed helper?)")
    sys.exit(0)
b["notes"] = [n for n in notes if n not in inproc]
if a != b:
    print("models differ")
    sys.exit(1)
if a["source"]["kind"] != "xml":
    print("source is", a["source"])
    sys.exit(1)
EOF
        fail "$(basename "$f"): the helper's model differs from the in-process one"
}
compare "$tmp/live.xml"
if [ -n "$data" ] && [ -d "$data/hwloc-xml" ]; then
    for f in "$data"/hwloc-xml/*.xml "$data"/nccl-topo/*.xml; do
        [ -f "$f" ] && compare "$f"
    done
else
    echo "note: no reference data ($data): only this machine's XML compared"
fi

[ $fails -eq 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo "PASS: all"
