#!/bin/sh
# cli_errors: every bad input to `fabtop topo` gets one clear message on stderr naming the
# file and the problem, nothing on stdout, and the sysexits status (64 usage, 65 bad data,
# 66 missing input); and the machine we run on always gives a sensible tree.
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect STATUS NEEDLE -- ARGS...: exit status, one stderr line containing NEEDLE, no stdout.
expect() {
    want=$1 needle=$2
    shift 3
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$got" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/err" || [ -s "$tmp/out" ] ||
        [ "$lines" -gt 2 ]; then
        echo "FAIL: fabtop $* -> status $got (want $want), stderr:"
        sed 's/^/    /' "$tmp/err"
        [ -s "$tmp/out" ] && echo "    (and unexpected stdout)"
        fails=$((fails + 1))
    else
        echo "PASS: fabtop $* -> $got: $(head -1 "$tmp/err")"
    fi
}

printf '' >"$tmp/empty.xml"
printf 'hello, not a topology\n' >"$tmp/garbage.txt"
printf '<html><body>no</body></html>\n' >"$tmp/page.xml"
printf '<?xml version="1.0"?>\n<topology version="3.0">\n<object type="Machine"/>\n</topology>\n' \
    >"$tmp/v3.xml"
printf '<?xml version="1.0"?>\n<topology version="2.0">\n  <object type="Machine" os_index="0"\n' \
    >"$tmp/truncated.xml"
printf '{"format": "fabtop-topology", "version": 1,\n "pci": [\n' >"$tmp/truncated.json"
printf '{"hello": "world"}\n' >"$tmp/other.json"
mkdir "$tmp/adir"
# Numbers out of range: one line naming the field and its range (a bus range [870,-95] used
# to load silently as [102,161]).
printf '%s\n' '{"format": "fabtop-topology", "version": 1, "pci": [{"kind": "hostbridge",' \
    '"bdf": "0000:00:00.0", "buses": [870, -95]}]}' >"$tmp/buses.json"

expect 66 "$tmp/missing.xml" -- topo --input "$tmp/missing.xml"
expect 65 "empty file" -- topo --input "$tmp/empty.xml"
expect 65 "neither an hwloc XML nor a fabtop JSON" -- topo --input "$tmp/garbage.txt"
# hwloc parses XML with its own parser, or with libxml2 where libhwloc-plugins is installed
# (OpenMPI pulls it in); the two fail at different steps: the same lines either way.
for libxml in 0 1; do
    export HWLOC_LIBXML_IMPORT=$libxml
    expect 65 "not an hwloc topology XML" -- topo --input "$tmp/page.xml"
    expect 65 "hwloc 3.x XML" -- topo --input "$tmp/v3.xml"
    expect 65 "hwloc could not parse this topology XML" -- topo --input "$tmp/truncated.xml"
done
unset HWLOC_LIBXML_IMPORT
expect 65 "truncated.json:3:" -- topo --input "$tmp/truncated.json"
expect 65 "not a fabtop topology snapshot" -- topo --input "$tmp/other.json"
expect 65 "buses.json: pci[0].buses[0] = 870 is out of range 0-255" -- topo --input "$tmp/buses.json"
expect 65 "is a directory" -- topo --input "$tmp/adir"
expect 66 "no sys/ directory" -- topo --sysfs-root "$tmp/adir"
expect 64 "unknown option or missing argument: '--bogus'" -- topo --bogus
expect 64 "exclusive" -- topo --input a --sysfs-root b
expect 64 "--window" -- topo --window -3
expect 64 "unknown command" -- frobnicate
if [ "$(id -u)" -ne 0 ]; then
    printf '{}' >"$tmp/secret.json" && chmod 000 "$tmp/secret.json"
    expect 77 "Permission denied" -- topo --input "$tmp/secret.json"
fi
# -o into a directory that does not exist: the run's output is not lost silently.
"$bin" topo -o "$tmp/nodir/x.json" >/dev/null 2>"$tmp/err"
st=$?
if [ "$st" -eq 73 ] && grep -q "nodir/x.json" "$tmp/err"; then
    echo "PASS: -o into a missing directory -> 73: $(head -1 "$tmp/err")"
else
    echo "FAIL: -o into a missing directory -> $st"
    fails=$((fails + 1))
fi

# The live machine (no GPU, maybe no RDMA here): a tree, and what was not found.
"$bin" topo >"$tmp/live" 2>"$tmp/err"
st=$?
if [ "$st" -eq 0 ] && grep -q "^Package" "$tmp/live" && grep -q "NUMA node" "$tmp/live" &&
    { grep -q "GPU0" "$tmp/live" || grep -q "No GPUs" "$tmp/live"; } &&
    { grep -q "port 1:" "$tmp/live" || grep -q "No RDMA devices" "$tmp/live"; }; then
    echo "PASS: live fabtop topo prints a tree and says what is missing"
else
    echo "FAIL: live fabtop topo (status $st):"
    cat "$tmp/live" "$tmp/err"
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
