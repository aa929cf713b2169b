# ibsim_lib.sh: helpers for tests that run fabtop's InfiniBand discovery against ibsim, the
# MAD-level fabric simulator (Debian ibsim-utils): start ibsim on a topology file with a
# console we can type into, run OpenSM once to assign LIDs and program the forwarding
# tables, and run fabtop, ibtracert and perfquery with libumad2sim.so preloaded.
# Packages missing are installed as root (apt-get update first); the tests skip (77) only
# when that cannot be done. Everything started here is stopped on exit.

set -u
FABTOP=${FABTOP_BIN:?FABTOP_BIN must point at the fabtop binary}
SRC=${FABTOP_SRC:?FABTOP_SRC must point at the source tree}
NETS=$SRC/tests/fabric/nets
CHECK="python3 $SRC/tests/fabric/check_fabric.py"
TMP=$(mktemp -d /tmp/fabtop-ibsim.XXXXXX)
# Each test gets its own simulator sockets (abstract unix names), so tests run in parallel.
IBSIM_SOCKNAME="fabtop$$"
export IBSIM_SOCKNAME
IBSIM_PID=""
SIM_SO=""

cleanup() {
    if [ -n "$IBSIM_PID" ]; then
        kill "$IBSIM_PID" 2>/dev/null
        wait "$IBSIM_PID" 2>/dev/null
    fi
    exec 9>&- 2>/dev/null
    [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

skip() { echo "SKIP: $*"; exit 77; }
fail() {
    echo "FAIL: $*"
    [ -f "$TMP/ibsim.log" ] && { echo "--- ibsim log (tail)"; tail -n 15 "$TMP/ibsim.log"; }
    exit 1
}
pass() { echo "PASS: $*"; }

pkg_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# need_pkgs PKG...: install what is missing (root, apt-get update first) or skip.
need_pkgs() {
    command -v dpkg-query >/dev/null 2>&1 || skip "not a Debian host (no dpkg-query)"
    missing=""
    for p in "$@"; do pkg_installed "$p" || missing="$missing $p"; done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        skip "missing packages (install as root):$missing"
    fi
    echo "installing$missing"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$TMP/apt.log" 2>&1 ||
        skip "apt-get update failed; cannot install:$missing"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
        >>"$TMP/apt.log" 2>&1
    still=""
    for p in $missing; do pkg_installed "$p" || still="$still $p"; done
    [ -z "$still" ] || skip "could not install:$still"
}

need_ibsim() {
    need_pkgs ibsim-utils libumad2sim0 opensm infiniband-diags python3
    SIM_SO=$(dpkg -L libumad2sim0 2>/dev/null | grep '/libumad2sim\.so$' | head -n 1)
    [ -n "$SIM_SO" ] && [ -f "$SIM_SO" ] || skip "libumad2sim.so not found in libumad2sim0"
}

# wait_for WHAT CMD [SECONDS]: poll CMD every 50 ms until it succeeds.
wait_for() {
    what=$1 cmd=$2 limit=${3:-10}
    end=$(($(date +%s) + limit))
    while ! eval "$cmd" >/dev/null 2>&1; do
        [ "$(date +%s)" -ge "$end" ] && fail "timed out waiting for $what"
        sleep 0.05
    done
}

# start_ibsim NETFILE: the simulator with its console on a FIFO we hold open (fd 9).
start_ibsim() {
    mkfifo "$TMP/console"
    exec 9<>"$TMP/console"
    (cd "$TMP" && exec ibsim -s "$1" <"$TMP/console" >"$TMP/ibsim.log" 2>&1) &
    IBSIM_PID=$!
    wait_for "ibsim to start" "grep -q 'Network simulator ready' '$TMP/ibsim.log'"
}

# console CMD: type a command at ibsim's prompt and wait until it has been processed
# (ibsim prints its prompt again after each command).
console() {
    before=$(grep -o 'sim> ' "$TMP/ibsim.log" | wc -l)
    printf '%s\n' "$*" >&9
    wait_for "ibsim to run '$*'" \
        "[ \$(grep -o 'sim> ' '$TMP/ibsim.log' | wc -l) -gt $before ]"
}

# sim CMD...: run a program as a client of the simulator, attached at node ${SIM_HOST:-H1}.
# In a sanitizer build the preloaded shim comes before ASan's runtime, the shim's own read()
# copies past its buffer, and libibnetdisc (rdma-core 44) leaks 64-byte objects inside
# ibnd_discover_fabric once LIDs are assigned, which ibnd_destroy_fabric does not free (a
# five-line program calling only those two shows it). Allow those; report fabtop's own code.
printf 'interceptor_via_lib:libumad2sim.so\n' >"$TMP/asan.supp"
printf 'leak:libumad2sim.so\nleak:libibnetdisc.so\n' >"$TMP/lsan.supp"
sim() {
    (cd "$TMP" && LD_PRELOAD=$SIM_SO SIM_HOST=${SIM_HOST:-H1} \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:suppressions=$TMP/asan.supp" \
        LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TMP/lsan.supp" "$@")
}

# run_opensm: one OpenSM sweep (opensm -o): LIDs, then the forwarding tables.
run_opensm() {
    mkdir -p "$TMP/osm"
    sim env OSM_CACHE_DIR="$TMP/osm" timeout 60 opensm -o -f "$TMP/opensm.log" \
        >"$TMP/opensm.out" 2>&1 || fail "opensm -o failed: $(tail -n 3 "$TMP/opensm.out")"
    grep -q 'SUBNET UP' "$TMP/opensm.out" "$TMP/opensm.log" 2>/dev/null ||
        grep -q 'MASTER' "$TMP/opensm.out" || fail "opensm did not bring the subnet up"
}

# fabtop_fabric OUT.json [ARGS...]: fabtop topo --fabric --json under the simulator.
fabtop_fabric() {
    out=$1
    shift
    sim timeout 120 "$FABTOP" topo --fabric --json --lldp-socket "$TMP/no-lldpd.sock" "$@" \
        >"$out" 2>"$out.err"
}

# json FILE PYTHON-EXPR: evaluate an expression over the document `d`.
json() {
    python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
PY
}

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
