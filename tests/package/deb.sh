#!/bin/sh
# The Debian package as a user gets it: dpkg-buildpackage -b builds fabtop and fabtop-sweep
# from a copy of this tree; lintian reports no error (its warnings are printed); apt-get
# installs the .deb; the installed fabtop (which reads only installed files: the package is
# built with FABTOP_BUILD_TREE_DATA=OFF and the copy it was built from is gone by then) prints
# its version, reads a topology export, runs quiet-vs-loaded, has its man pages and
# completion; systemd-analyze verify finds nothing in the installed unit; the agent, started
# the way the unit starts it (its ExecStart, FABTOP_SERVE_OPTS from /etc/default/fabtop-serve,
# the unit's user and capabilities through setpriv, the key as a systemd credential) answers
# a run; then the packages are purged and the system user the package made is removed.
# Without systemd as PID 1 the unit's sandboxing itself is not exercised.
set -eu
SRC=${FABTOP_SRC:?}
for t in dpkg-buildpackage dh lintian apt-get setpriv systemd-analyze; do
    command -v "$t" >/dev/null || { echo "skip: no $t (scripts/deps.sh FABTOP_TEST_DEPS)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "skip: installing a package needs root"; exit 77; }
if dpkg-query -W -f='${Status}' fabtop 2>/dev/null | grep -q "install ok installed"; then
    echo "skip: a fabtop package is installed on this machine; this test would replace it"
    exit 77
fi
T=$(mktemp -d)
user_before=$(getent passwd fabtop || true)
agent=""
installed=0
cleanup() {
    [ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
    if [ "$installed" = 1 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq fabtop fabtop-sweep >/dev/null 2>&1 || true
        [ -z "$user_before" ] && getent passwd fabtop >/dev/null && deluser --system fabtop >/dev/null 2>&1
        getent group fabtop >/dev/null && [ -z "$user_before" ] && delgroup --system fabtop >/dev/null 2>&1
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- build ----
mkdir -p "$T/src/fabtop"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$SRC" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$T/src/fabtop"
else
    tar -C "$SRC" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -xf - -C "$T/src/fabtop"
fi
(cd "$T/src/fabtop" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" dpkg-buildpackage -b -uc -us \
    > "$T/build.log" 2>&1) || { tail -30 "$T/build.log"; fail "dpkg-buildpackage failed"; }
deb=$(ls "$T"/src/fabtop_*_*.deb)
[ -f "$deb" ] || fail "no fabtop_VERSION_ARCH.deb"
ls "$T"/src/fabtop-sweep_*_*.deb >/dev/null || fail "no fabtop-sweep package"
# Depends from the shared libraries the binary links (shlibs), the optional parts suggested.
dpkg-deb -f "$deb" Depends | grep -q "libhwloc" || fail "Depends lacks the shlibs: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Recommends | grep -q "lldpd" || fail "Recommends lacks lldpd"
dpkg-deb -f "$deb" Suggests | grep -q "libnccl2" || fail "Suggests lacks libnccl2"
lintian --allow-root --fail-on error "$T"/src/fabtop_*.changes > "$T/lintian.txt" 2>&1 ||
    { cat "$T/lintian.txt"; fail "lintian reports errors"; }
echo "lintian (no errors):"
sed 's/^/  /' "$T/lintian.txt"
cp "$T"/src/*.deb "$T/"
rm -rf "$T/src"

# ---- install and use ----
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$T"/fabtop_*.deb \
    > "$T/apt.log" 2>&1 || { cat "$T/apt.log"; fail "apt-get install ./fabtop_*.deb failed"; }
FT=/usr/bin/fabtop
want=$(sed -n 's/^project(fabtop VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ "$($FT --version)" = "fabtop $want" ] || fail "installed fabtop --version: $($FT --version)"
# Built with FABTOP_BUILD_TREE_DATA=OFF (debian/rules): no path of the tree it was built in
# (cmake/FabtopFlags.cmake's fabtop_tree_data).
if grep -qaF "$T/src/fabtop" "$FT"; then fail "the installed fabtop holds its build tree's path $T/src/fabtop"; fi
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_DATA_HOME="$T/home/.local/share"
mkdir -p "$HOME"
cd "$T"
# A topology export: the DGX-2's from the reference data when present, else this node's own
# snapshot written by the installed fabtop.
export_file=${FABTOP_SHARED_DATA:-/nonexistent}/hwloc-xml/hwloc-tests_nvidiaDGX2.xml
if [ -f "$export_file" ]; then
    $FT topo --input "$export_file" > "$T/topo.txt" || fail "topo --input $export_file"
    grep -q "GPU" "$T/topo.txt" || fail "topo of the DGX-2 export shows no GPU"
else
    $FT topo --json > "$T/snap.json" || fail "topo --json"
    $FT topo --input "$T/snap.json" > "$T/topo.txt" || fail "topo --input snapshot"
fi
# The presets and themes come from /usr/share/fabtop.
$FT run --list | grep -q "^quiet-vs-loaded" || fail "installed fabtop lists no quiet-vs-loaded"
$FT run --mix quiet-vs-loaded --duration 1 -o "$T/run.json" > "$T/run.txt" 2>&1 ||
    { cat "$T/run.txt"; fail "installed fabtop run --mix quiet-vs-loaded"; }
grep -q "p99" "$T/run.txt" || fail "the run printed no p99"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['format']=='fabtop-results' and d['phases'][0]['flows'][0]['points'][0]['latency']['count']>0" "$T/run.json" ||
    fail "the run's results lack measured latency"
[ "$(man -w fabtop-run 2>/dev/null)" = /usr/share/man/man1/fabtop-run.1.gz ] || fail "man -w fabtop-run"
[ -f /usr/share/bash-completion/completions/fabtop ] || fail "no installed bash completion"
[ -f /usr/share/zsh/vendor-completions/_fabtop ] || fail "no installed zsh completion"
if [ -e /usr/bin/fabtop-sweep ]; then fail "fabtop-sweep installed without its package"; fi

# ---- the agent's unit ----
UNIT=/lib/systemd/system/fabtop-serve.service
[ -f "$UNIT" ] || fail "no $UNIT"
# systemd-analyze verify exits 0 on a misspelled directive (it only warns): any output fails.
out=$(systemd-analyze verify --man=false "$UNIT" 2>&1 || echo "exit status $?")
[ -z "$out" ] || fail "systemd-analyze verify $UNIT: $out"
getent passwd fabtop >/dev/null || fail "the package made no fabtop user"
[ "$(stat -c %a /etc/fabtop)" = 700 ] || fail "/etc/fabtop is not 0700"
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
user=$(sed -n 's/^User=//p' "$UNIT")
caps=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
# The credential systemd would hand over: the key, owned by the service's user, mode 0400.
$FT serve --gen-key "$T/key" >/dev/null
mkdir -p "$T/creds"
cp "$T/key" "$T/creds/key"
chown "$user:" "$T/creds" "$T/creds/key"
chmod 0400 "$T/creds/key"
chmod 0500 "$T/creds"
chmod 0755 "$T"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# FABTOP_SERVE_OPTS from the shipped defaults, then this test's loopback listener (the last
# --listen wins) so the agent is not reachable from outside the machine.
. /etc/default/fabtop-serve
set -f
# shellcheck disable=SC2086
set -- $(eval "printf '%s\n' $exec_start") --listen "127.0.0.1:$port"
set +f
CREDENTIALS_DIRECTORY="$T/creds" setpriv --reuid "$user" --regid "$user" --init-groups \
    --no-new-privs --inh-caps "$caps" --ambient-caps "$caps" --bounding-set "-all,$caps" \
    "$@" 2> "$T/agent.log" &
agent=$!
i=0
until grep -q "listening on" "$T/agent.log" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 100 ] || { cat "$T/agent.log"; fail "the agent did not start: $*"; }
    kill -0 "$agent" 2>/dev/null || { cat "$T/agent.log"; fail "the agent exited: $*"; }
    sleep 0.1
done
[ "$(ps -o user= -p "$agent" | tr -d ' ')" = "$user" ] || fail "the agent does not run as $user"
grep -q "NoNewPrivs:.*1" "/proc/$agent/status" || fail "the agent may gain privileges"
$FT run --mix quiet-vs-loaded --duration 0.5 --peer "127.0.0.1:$port" --key-file "$T/key" \
    -o "$T/remote.json" > "$T/remote.txt" 2>&1 || { cat "$T/remote.txt" "$T/agent.log"; fail "a run against the agent"; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any('127.0.0.1:$port' in p for p in d['hosts']['peers']), d['hosts']" "$T/remote.json" ||
    fail "the run did not go to the agent"
grep -q "session" "$T/agent.log" || fail "the agent logged no session line"
kill "$agent"
wait "$agent" || true
agent=""
# A key others could read is refused, with the permissions' exit status.
chmod 0444 "$T/creds/key"
rc=0
CREDENTIALS_DIRECTORY="$T/creds" setpriv --reuid "$user" --regid "$user" --init-groups \
    --no-new-privs "$@" 2> "$T/refused.log" || rc=$?
[ "$rc" = 77 ] || fail "a world-readable key: exit $rc, want 77 ($(cat "$T/refused.log"))"
grep -q "chmod 600" "$T/refused.log" || fail "the refusal does not say what to do: $(cat "$T/refused.log")"

# ---- removal ----
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq fabtop > "$T/purge.log" 2>&1 || { cat "$T/purge.log"; fail "purge"; }
[ ! -e /usr/bin/fabtop ] && [ ! -e "$UNIT" ] && [ ! -e /usr/share/fabtop ] || fail "files left after purge"
[ ! -e /etc/default/fabtop-serve ] || fail "/etc/default/fabtop-serve left after purge"
echo "ok: built $(basename "$deb"), lintian clean of errors, installed, ran, served a run as $user, purged"
