#!/bin/sh
# format: every C source and header matches the committed .clang-format.
set -u
src=${FABTOP_SRC:?}
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format not installed"; exit 77; }
cd "$src" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.c' '*.h')
else
    files=$(find common topology engine tui tests bench -name '*.[ch]' 2>/dev/null)
fi
# shellcheck disable=SC2086
if clang-format --dry-run --Werror $files; then
    echo "PASS: $(echo "$files" | wc -w) files formatted"
else
    echo "FAIL: run clang-format -i on the files above"
    exit 1
fi
