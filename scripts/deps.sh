#!/bin/sh
# deps.sh: install the Debian packages fabtop needs to build, run and test (only what is
# missing; apt-get update first). Sourced by start.sh and test.sh; run as root.
set -eu

# Build and run.
FABTOP_BUILD_DEPS="build-essential cmake pkg-config libhwloc-dev hwloc-nox libibverbs-dev \
librdmacm-dev ibverbs-providers rdma-core libncurses-dev libcjson-dev libsodium-dev \
libibnetdisc-dev libibumad-dev libibmad-dev liblldpctl-dev libcairo2-dev libmicrohttpd-dev"
# Tests: unit framework, formatting, terminal tests, fixtures (python3, jq), network
# namespaces and nftables (the doctor's and the drill's rules), the
# InfiniBand fabric simulator (ibsim, OpenSM, infiniband-diags) and lldpd; the libFuzzer
# build (tests/fuzz): clang, libFuzzer's runtime (libclang-rt-14-dev) and llvm-symbolizer
# (llvm-14) for the symbolized stacks the fuzz runs blame crashes by; OpenMPI
# (libopenmpi-dev, openmpi-bin) for fabtop-sweep and its tests (tests/sweep_start) and the test
# rack (tests/rack: mpirun, rack_hello), Slurm (slurmctld, slurmd, srun with its pmix plugin),
# munge, and util-linux for unshare and setpriv. The package's tests (tests/package): mandoc
# for -Tlint, man-db, zsh for the zsh completion, debhelper, dpkg-dev and lintian to build and
# check the .deb, adduser for its postinst, systemd for systemd-analyze verify; the Prometheus
# tests (tests/prom): promtool (in prometheus), node_exporter and curl to scrape it; the
# report tests (tests/report): headless chromium renders the HTML; python3-jsonschema for the
# schema tests (tests/schema). The main job
# does not need OpenMPI: fabtop-sweep is built when it is found (FABTOP_SWEEP=AUTO), and a node that runs `fabtop sweep` installs
# libopenmpi-dev and openmpi-bin.
FABTOP_TEST_DEPS="libcmocka-dev clang-format tmux bzip2 python3 jq iproute2 procps nftables \
ibsim-utils libumad2sim0 opensm infiniband-diags lldpd clang libclang-rt-14-dev llvm-14 \
openmpi-bin libopenmpi-dev slurmd slurmctld slurm-client munge util-linux \
mandoc man-db zsh debhelper dpkg-dev lintian adduser systemd prometheus \
prometheus-node-exporter curl chromium python3-jsonschema strace"

fabtop_missing() {
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    echo "$missing"
}

fabtop_install() {
    missing=$(fabtop_missing "$@")
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "fabtop: missing Debian packages:$missing" >&2
        echo "fabtop: run this script as root (sudo) to install them, or install them yourself" >&2
        return 69
    fi
    echo "fabtop: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    # The tests need promtool and the node_exporter binary, not the servers: where systemd
    # runs and these packages were just installed (and so started), stop and disable them.
    for p in $missing; do
        case $p in
        prometheus | prometheus-node-exporter)
            if [ -d /run/systemd/system ]; then
                systemctl disable --now "$p.service" >/dev/null 2>&1 &&
                    echo "fabtop: stopped and disabled $p.service (the tests run their own)"
            fi
            ;;
        esac
    done
}
