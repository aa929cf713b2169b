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
