#!/bin/sh
# report_html: `fabtop report FILE --html OUT --png OUT --svg OUT` on a real loopback run
# (quiet-vs-loaded, 1 s a phase) and on the committed sweep and drill documents, checked the
# way a reader sees them: headless Chromium renders each page (--dump-dom: the rendered text
# against the JSON's numbers, formatted as `fabtop report` prints them; --screenshot: not
# blank, both series' colours drawn); the page names no resource outside itself; the PNG has
# its size and a drawn plot with quiet's and loaded's colours (decoded with zlib,
# pngcheck.py); the SVG parses as XML. Bad input: a truncated or foreign file (65), an output
# directory that is missing (73), read-only or full (73, on a tmpfs of its own as root), each
# with one line on stderr and nothing at OUT (an existing OUT kept as it was).
set -u
bin=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
src=${FABTOP_SRC:?}
here=$src/tests/report
for t in chromium python3; do
    command -v "$t" >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
. "$(dirname "$0")/../common/cli_lib.sh"
# bad STATUS NEEDLE ARGS...: one line on stderr holding NEEDLE, nothing on stdout.
bad() {
    want=$1 needle=$2
    shift 2
    run "$want" "$@" || return
    [ -s "$tmp/out" ] && fail "fabtop $*: unexpected stdout"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "fabtop $*: not one line on stderr: $(cat "$tmp/err")"
    grep -qF -- "$needle" "$tmp/err" || fail "fabtop $*: '$needle' not in: $(cat "$tmp/err")"
}
# Chromium with a profile and HOME of its own (as root it needs --no-sandbox).
mkdir -p "$tmp/chrome/home"
chrome() {
    HOME=$tmp/chrome/home timeout 60 chromium --headless --no-sandbox --disable-gpu \
        --user-data-dir="$tmp/chrome/profile" --hide-scrollbars "$@" 2>>"$tmp/chrome.log"
}
# selfcontained FILE: no scripts, stylesheets, imports or remote references.
selfcontained() {
    if grep -iqE '<script|<link|@import|<iframe|<img|(src|href)[[:space:]]*=[[:space:]]*["'"'"']?[[:space:]]*(https?:|//|file:|data:)|url\([[:space:]]*["'"'"']?(https?:|//)' "$1"; then
        fail "$1 refers to something outside itself: $(grep -ioE '.{0,40}(<script|<link|@import|<iframe|<img|src=|href=|url\().{0,60}' "$1" | grep -ivE 'href="#' | head -3)"
    else
        echo "PASS: $(basename "$1") refers to nothing outside itself"
    fi
}
# page KIND DOC HTML [TEXT]: render HTML, check its text against DOC, and a screenshot.
page() {
    kind=$1 doc=$2 html=$3 text=${4:-}
    selfcontained "$html"
    chrome --dump-dom "file://$html" >"$tmp/dom.html" || fail "chromium --dump-dom $html failed"
    python3 "$here/domcheck.py" "$tmp/dom.html" "$kind" "$doc" $text || fail "$kind page: DOM"
    rm -f "$tmp/shot.png"
    chrome --screenshot="$tmp/shot.png" --window-size=1200,2000 "file://$html" >/dev/null ||
        fail "chromium --screenshot $html failed"
    shift 4 2>/dev/null || shift $#
    python3 "$here/pngcheck.py" "$tmp/shot.png" --size 1200x2000 --min-drawn 0.01 "$@" ||
        fail "$kind page: the screenshot"
}

# ---- a real run on loopback ----
run=$tmp/run.json
"$bin" run --mix quiet-vs-loaded --duration 1 -o "$run" >"$tmp/run.out" 2>&1 ||
    { fail "fabtop run: $(tail -5 "$tmp/run.out")"; exit 1; }
run 0 report "$run" && cp "$tmp/out" "$tmp/run.txt"
run 0 report "$run" --html "$tmp/run.html" --png "$tmp/run.png" --svg "$tmp/run.svg"
[ -s "$tmp/out" ] && fail "report --html printed on stdout"
ls -a "$tmp" | grep -q '^\.run\.\|\.tmp' && fail "a temporary file was left: $(ls -a "$tmp")"
page run "$run" "$tmp/run.html" "$tmp/run.txt" --min-drawn 0.05 --colour 0072B2:12 --colour D55E00:12
python3 "$here/pngcheck.py" "$tmp/run.png" --size 900x460 --min-drawn 0.05 \
    --colour 0072B2 --colour D55E00 || fail "--png: the figure"
python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert r.tag == "{http://www.w3.org/2000/svg}svg", r.tag
assert r.get("viewBox") == "0 0 900 460", r.get("viewBox")
n = sum(1 for e in r.iter() if e.tag.endswith("path"))
assert n > 20, n
print("PASS: --svg: an SVG of 900x460 points, %d paths" % n)' "$tmp/run.svg" || fail "--svg"
selfcontained "$tmp/run.svg"
# Both series' colours are drawn (cairo writes rgb() in percent: #0072B2, #D55E00).
grep -q 'stroke:rgb(0%,44.705882%,69.803922%)' "$tmp/run.svg" || fail "--svg: no quiet line"
grep -q 'stroke:rgb(83.529412%,36.862745%,0%)' "$tmp/run.svg" || fail "--svg: no loaded line"

# ---- the committed sweep and drill documents ----
sweep=$src/tests/results/sweep-4ranks.json
run 0 report "$sweep" && cp "$tmp/out" "$tmp/sweep.txt"
run 0 report "$sweep" --html "$tmp/sweep.html" --png "$tmp/sweep.png"
page sweep "$sweep" "$tmp/sweep.html" "$tmp/sweep.txt" --min-drawn 0.05 --colour fde725:8 --colour 440154:8
python3 "$here/pngcheck.py" "$tmp/sweep.png" --size 900x460 --min-drawn 0.05 \
    --colour fde725:8 --colour 440154:8 || fail "sweep --png"
for d in "$src"/tests/results/drill-*.json; do
    run 0 report "$d" --html "$tmp/drill.html" --svg "$tmp/drill.svg" --png "$tmp/drill.png"
    page drill "$d" "$tmp/drill.html" "" --min-drawn 0.02 --colour 009E73:30
    python3 "$here/pngcheck.py" "$tmp/drill.png" --size 900x460 --min-drawn 0.02 \
        --colour 009E73 || fail "drill --png $d"
done

# ---- bad input ----
head -c 3000 "$run" >"$tmp/trunc.json"
bad 65 trunc.json report "$tmp/trunc.json" --html "$tmp/t.html"
[ -e "$tmp/t.html" ] && fail "a truncated document left $tmp/t.html"
echo '{"format": "something-else", "version": 1}' >"$tmp/foreign.json"
bad 65 foreign.json report "$tmp/foreign.json" --png "$tmp/t.png"
[ -e "$tmp/t.png" ] && fail "a foreign document left $tmp/t.png"
bad 66 missing.json report "$tmp/missing.json" --html "$tmp/t.html"
bad 73 "$tmp/nodir/r.html" report "$run" --html "$tmp/nodir/r.html"
bad 73 "$tmp/nodir/r.png" report "$run" --html "$tmp/ok.html" --png "$tmp/nodir/r.png"
[ -e "$tmp/ok.html" ] && fail "a refused --png still wrote --html's file"
run 64 report "$run" --json --html "$tmp/t.html" &&
    grep -qF -- "--json prints the document" "$tmp/err" || fail "--json with --html: $(cat "$tmp/err")"
if [ "$(id -u)" != 0 ]; then
    mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
    bad 73 "$tmp/ro/r.html" report "$run" --html "$tmp/ro/r.html"
    [ -e "$tmp/ro/r.html" ] && fail "read-only directory: a file was written"
elif command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
    # As root, permissions do not stop a write: a read-only and a full tmpfs of our own, in a
    # mount namespace of our own (nothing outside sees them).
    mkdir -p "$tmp/ro" "$tmp/full"
    cat >"$tmp/fs.sh" <<'EOS'
set -u
bin=$1 run=$2 tmp=$3
mount -t tmpfs -o size=64k,ro none "$tmp/ro" || exit 77
mount -t tmpfs -o size=128k none "$tmp/full" || exit 77
echo "old report" >"$tmp/full/r.html"
dd if=/dev/zero of="$tmp/full/fill" bs=4k count=1000 2>/dev/null
"$bin" report "$run" --html "$tmp/ro/r.html" >"$tmp/ro.out" 2>"$tmp/ro.err"
echo $? >"$tmp/ro.rc"
ls -A "$tmp/ro" >"$tmp/ro.ls"
"$bin" report "$run" --html "$tmp/full/r.html" >"$tmp/full.out" 2>"$tmp/full.err"
echo $? >"$tmp/full.rc"
ls -A "$tmp/full" >"$tmp/full.ls"
cat "$tmp/full/r.html" >"$tmp/full.kept"
EOS
    unshare -m --propagation private sh "$tmp/fs.sh" "$bin" "$run" "$tmp"
    frc=$?
    if [ "$frc" = 77 ]; then
        echo "SKIP (part): cannot mount a tmpfs here"
    else
        for k in ro full; do
            [ "$(cat "$tmp/$k.rc")" = 73 ] || fail "$k file system: status $(cat "$tmp/$k.rc"), want 73: $(cat "$tmp/$k.err")"
            [ "$(wc -l <"$tmp/$k.err")" -eq 1 ] || fail "$k: not one line on stderr: $(cat "$tmp/$k.err")"
            grep -qF "$tmp/$k/r.html" "$tmp/$k.err" || fail "$k: the path is not named: $(cat "$tmp/$k.err")"
            echo "PASS: $k file system -> 73: $(cat "$tmp/$k.err")"
        done
        [ -s "$tmp/ro.ls" ] && fail "read-only: left $(cat "$tmp/ro.ls")"
        [ "$(cat "$tmp/full.ls")" = "$(printf 'fill\nr.html')" ] ||
            fail "full: the directory holds $(cat "$tmp/full.ls")"
        [ "$(cat "$tmp/full.kept")" = "old report" ] || fail "full: the old file was not kept"
    fi
else
    echo "SKIP (part): no unshare for the read-only and full file systems"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS: report_html"
