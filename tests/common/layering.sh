#!/bin/sh
# layering: the libraries (common/, topology/, engine/) never include curses, and only the
# front end (tui/) links it.
set -u
src=${FABTOP_SRC:?}
bad=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"](n?curses|ncursesw/|term\.h|panel\.h)' \
    "$src/common" "$src/topology" "$src/engine" 2>/dev/null)
if [ -n "$bad" ]; then
    echo "FAIL: curses included outside tui/: $bad"
    exit 1
fi
bad=$(grep -lE 'NCURSES|Curses' "$src/common/CMakeLists.txt" "$src/topology/CMakeLists.txt" \
    "$src/engine/CMakeLists.txt")
if [ -n "$bad" ]; then
    echo "FAIL: a library links curses: $bad"
    exit 1
fi
echo "PASS: engine/, topology/ and common/ are curses-free"

# ---- Front end: cli/, text/, tui/ (issue 15, item 4) ----
# text/ (plain-text renderings) includes neither curses nor tui/ nor cli/; tui/ (the
# explorer) never includes cli/; the libraries link the same way: fabtop_text links neither
# curses nor fabtop_tui nor fabtop_cli, fabtop_tui never links fabtop_cli.
inc='#[[:space:]]*include[[:space:]]*[<"]'
bad=$(grep -lE "$inc(n?curses|ncursesw/|term\.h|panel\.h|tui/|cli/)" "$src"/text/*.[ch] 2>/dev/null)
if [ -n "$bad" ]; then
    echo "FAIL: text/ includes curses, tui/ or cli/: $bad"
    exit 1
fi
bad=$(grep -lE "${inc}cli/" "$src"/tui/*.[ch] 2>/dev/null)
if [ -n "$bad" ]; then
    echo "FAIL: tui/ includes cli/ headers: $bad"
    exit 1
fi
bad=$(grep -lE 'NCURSES|Curses|fabtop_tui|fabtop_cli' "$src/text/CMakeLists.txt")
bad="$bad$(grep -lE 'fabtop_cli' "$src/tui/CMakeLists.txt")"
if [ -n "$bad" ]; then
    echo "FAIL: a front-end library links a layer above it: $bad"
    exit 1
fi
# Every file a cli/ source names outside its #include lines exists (beside it or from the
# top of the tree).
for f in "$src"/cli/*.[ch]; do
    for name in $(grep -vE '^#[[:space:]]*include' "$f" | grep -oE '[A-Za-z0-9_/-]+\.(c|h|md|sh)\b' | sort -u); do
        if [ ! -e "$src/$name" ] && [ ! -e "$src/cli/$name" ]; then
            echo "FAIL: $f names $name, which does not exist"
            exit 1
        fi
    done
done
echo "PASS: text/ is curses-free and tui/-free, tui/ never uses cli/; cli/ cites files that exist"
