# prom_lib: what the Prometheus tests share. Sourced after the caller defines fail().
# promcheck FILE: promtool must accept FILE and say nothing at all, and FILE is not empty.
promcheck() {
    out=$(promtool check metrics <"$1" 2>&1)
    prc=$?
    [ "$prc" -eq 0 ] && [ -z "$out" ] || { echo "$out" | head -20; fail "promtool check metrics on $1: exit $prc"; }
    [ -s "$1" ] || fail "$1 is empty"
}
