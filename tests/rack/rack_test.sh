# rack_test.sh: what the rack's test scripts share (sourced after set -u): skip (exit 77),
# fail, pass; rack_test_needs PROGRAM_DESC PROGRAM: root, the program the test runs, the
# rack's tools (ip, tc, unshare, ss, python3, OpenMPI, Slurm, munge) and a network namespace
# that can be made, else skipped; rack_test_workdir NAME: a work directory W under /var/tmp
# (every host has a private /tmp), removed on exit unless KEEP_TMP=1, with the traps until
# rack_up installs its own cleanup; rack_test_sweep PATH: the sweep binary where every host
# sees it; rack_test_mpi and rack_test_rank_pid: mpirun on the rack and a rank's process;
# rack_lib.sh sourced.
skip() {
    echo "SKIP: $*"
    exit 77
}
fail() {
    echo "FAIL: $*"
    exit 1
}
pass() { echo "PASS: $*"; }

rack_test_needs() {
    [ "$(id -u)" -eq 0 ] || skip "the rack of network namespaces needs root"
    [ -n "$2" ] && [ -x "$2" ] ||
        skip "$1 is not built (OpenMPI's development files, libopenmpi-dev, were missing at configure)"
    for c in ip tc unshare ss python3 mpirun srun sinfo slurmctld slurmd munge munged; do
        command -v $c >/dev/null 2>&1 ||
            skip "$c is not installed (scripts/deps.sh installs the test packages)"
    done
    ip netns add "rkprobe$$" 2>/dev/null || skip "cannot create a network namespace here"
    ip netns del "rkprobe$$"
}

rack_test_workdir() {
    W=$(mktemp -d "/var/tmp/fabtop-$1.XXXXXX") || fail "mktemp in /var/tmp"
    RACK_EXTRA_CLEANUP='[ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$W"'
    # Until rack_up installs rack_cleanup (which runs RACK_EXTRA_CLEANUP first).
    trap 'eval "$RACK_EXTRA_CLEANUP"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM HUP
}

# rack_test_sweep PATH: SWEEP is PATH, copied into W when it lies under /tmp (every host has
# a private /tmp: a binary there is not there inside a host). After rack_test_workdir.
rack_test_sweep() {
    SWEEP=$1
    case $SWEEP in /tmp/*)
        cp "$SWEEP" "$W/fabtop-sweep" || fail "copy fabtop-sweep to $W"
        SWEEP=$W/fabtop-sweep
        ;;
    esac
}

# rack_test_mpi NP ARGS...: OpenMPI's mpirun of NP ranks on the rack's hosts (after rack_up),
# through the namespace-entering rsh agent, its own traffic on the rack's subnet; ARGS are
# further mpirun options, then the program and its arguments.
rack_test_mpi() {
    _np=$1
    shift
    rack_local timeout 300 mpirun --allow-run-as-root --host "$(echo "$RACK_HOSTS" | tr ' ' ',')" \
        -np "$_np" --mca plm_rsh_agent "$RACK_LIB_DIR/rack_rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "$RACK_CIDR" --mca btl_tcp_if_include "$RACK_CIDR" \
        --mca btl tcp,self "$@"
}

# rack_test_rank_pid RANK: the PID of the fabtop-sweep process of that rank (its environment's
# OMPI_COMM_WORLD_RANK), waited for up to 20 s; empty when none appeared.
rack_test_rank_pid() {
    for _ in $(seq 1 200); do
        for _p in $(pgrep -f "fabtop-sweep"); do
            if tr '\0' '\n' <"/proc/$_p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
                echo "$_p"
                return 0
            fi
        done
        sleep 0.1
    done
}

RACK_LIB_DIR=${RACK_LIB_DIR:-$(cd "$(dirname "$0")" && pwd)}
. "$RACK_LIB_DIR/rack_lib.sh"
