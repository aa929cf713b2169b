# rack_lib.sh: a "rack" of hosts on one machine for launcher tests (mpirun, srun): each host a
# network namespace with its own address, its own hostname (UTS namespace) and a private /tmp
# for every process started in it; hosts hang off leaf bridges, leaves off a spine bridge
# through htb-shaped uplinks; the switches live in a fabric namespace of their own, and the
# root namespace reaches the rack through one veth at the spine's address (SUBNET.254).
# Sourced (POSIX sh). Root only. Functions:
#
#   rack_up [-p PREFIX] [-s SUBNET] [-n HOSTS] [-l LEAVES] [-u UPLINK_RATE] [-r HOST_RATE]
#           [-d HOST:RATE]... [-R RAIL_SUBNET] [-D HOST:RATE]...
#       defaults: -p rk -s 10.79.0 -n 8 -l 2 -u 1gbit, host ports unshaped. Hosts are
#       PREFIX-h1..PREFIX-hN at SUBNET.1..N, spread over the leaves in order (h1..h4 on leaf 1
#       of 2 for 8 hosts). -r shapes every host port in both directions; -d (repeatable;
#       HOST is PREFIX-hI or hI) gives one host's port its own rate, both directions (a port
#       trained down, a bad cable). Rates are tc rates: 25mbit, 1gbit, 500kbit.
#       -R gives every host a second NIC, eth1 at RAIL_SUBNET.I/24, on a rail switch of its
#       own (one bridge, no spine: a second rail of a multi-rail cluster), shaped like eth0
#       (-r); -D (repeatable) gives one host's eth1 its own rate.
#       Sets RACK_PREFIX RACK_NET RACK_CIDR RACK_SPINE RACK_HOSTS RACK_STATE RACK_FABRIC and
#       installs an EXIT trap that runs rack_cleanup (slurm_down, then rack_down).
#   rack_enter HOST CMD [ARGS...]   run a command on a host (namespace, hostname, private /tmp,
#                                   the rack's names in /etc/hosts)
#   rack_local CMD [ARGS...]        run a command here with the rack's names in /etc/hosts
#                                   (for mpirun, which resolves every --host name)
#   rack_addr HOST                  the host's address on the rack subnet
#   rack_down                       remove what rack_up made (it kills what runs in its hosts)
#   slurm_up [-P SLURMCTLD_PORT]    slurmctld here (on the spine address) plus one slurmd per
#       host; configuration in RACK_STATE/slurm (SLURM_CONF is exported), munge: the machine's
#       munged when one answers, otherwise one of its own (own key and socket)
#   slurm_down                      stop what slurm_up started, by PID
#
# Each host's /tmp is RACK_STATE/HOST/tmp bind-mounted over /tmp: every host sees its own,
# so OpenMPI's and PMIx's session directories (named after the hostname) never collide, and
# a program and its files must not live under the launching shell's /tmp.
# The prefix names the namespaces (PREFIX-hI, PREFIX-fab), the state directory
# (/var/tmp/PREFIX-rack) and the one interface made in the root namespace (PREFIX-sp), so
# two racks with different prefixes and subnets coexist.

RACK_LIB_DIR=${RACK_LIB_DIR:-$(cd "$(dirname "$0")" && pwd)}
RACK_EXTRA_CLEANUP=${RACK_EXTRA_CLEANUP:-}

rack_say() { echo "rack: $*" >&2; }

# _rk CMD...: run a step of building the rack; on failure one line naming it.
_rk() {
    "$@" || {
        rack_say "failed: $*"
        return 1
    }
}

_rack_rate_ok() { echo "$1" | grep -Eq '^[0-9]+(\.[0-9]+)?(kbit|mbit|gbit)$'; }

# _rack_shape NS DEV RATE: the egress of DEV in namespace NS held at RATE: one htb class and
# a byte-limited FIFO under it (a veth never pushes back on its own, so the queue must be a
# qdisc's; 256 KB is about 80 ms at 25 Mbit/s, 20 ms at 100 Mbit/s). See tc-htb(8), tc-bfifo(8).
_rack_shape() {
    _rk ip -n "$1" link set "$2" txqueuelen 1000 &&
        _rk tc -n "$1" qdisc replace dev "$2" root handle 1: htb default 1 &&
        _rk tc -n "$1" class add dev "$2" parent 1: classid 1:1 htb rate "$3" ceil "$3" \
            quantum 60000 &&
        _rk tc -n "$1" qdisc add dev "$2" parent 1:1 handle 10: bfifo limit 256000
}

# _rack_made KIND NAME: remember something made, for rack_down (also from another shell).
_rack_made() { echo "$1 $2" >>"$RACK_STATE/made"; }

rack_state_of() { echo "/var/tmp/${1%-h*}-rack"; }

rack_addr() { awk -v h="$1" '$1 == h { print $2 }' "$RACK_STATE/hosts"; }

rack_enter() {
    _h=$1
    shift
    _t="$(rack_state_of "$_h")/$_h/tmp"
    [ -d "$_t" ] || {
        rack_say "$_h is not a host of a rack that is up (no $_t)"
        return 69
    }
    # ip netns exec gives the command the host's network namespace (and a mount namespace of
    # its own); unshare adds a UTS namespace for the hostname and keeps the /tmp mount private.
    # The host's /tmp is its own, but a checkout or build that lives under /tmp (RACK_SHARE,
    # by default the tests' FABTOP_SRC and FABTOP_BUILD) stays visible at its path: bound
    # into the private /tmp before it goes over /tmp.
    ip netns exec "$_h" unshare --uts --mount --propagation private \
        sh -c 'hostname "$1" || exit
            for d in $4; do
                case $d in /tmp/?*) ;; *) continue ;; esac
                mkdir -p "$2${d#/tmp}" && mount --bind "$d" "$2${d#/tmp}" || exit
            done
            mount --rbind "$2" /tmp && mount --bind "$3" /etc/hosts && shift 4 && exec "$@"' \
        rack-enter "$_h" "$_t" "$(rack_state_of "$_h")/hosts.etc" \
        "${RACK_SHARE-${FABTOP_SRC:-} ${FABTOP_BUILD:-}}" "$@"
}

# rack_local CMD [ARGS...]: run a command here (the root namespace, the launcher's side) with
# the rack's names resolvable: the rack's /etc/hosts bind-mounted in a mount namespace of its
# own. mpirun resolves every --host name; without this those lookups go to the machine's DNS
# resolver (out of the rack; one that does not answer costs 5 s each).
rack_local() {
    unshare --mount --propagation private \
        sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
        rack-local "$RACK_STATE/hosts.etc" "$@"
}

rack_up() {
    if [ -n "${RACK_STATE:-}" ]; then
        rack_say "a rack is up in this shell already ($RACK_STATE): one rack per shell, rack_down first"
        return 64
    fi
    _p=rk _net=10.79.0 _n=8 _l=2 _up=1gbit _hr="" _deg="" _rail="" _rdeg=""
    OPTIND=1
    while getopts p:s:n:l:u:r:d:R:D: _o; do
        case $_o in
        p) _p=$OPTARG ;;
        s) _net=$OPTARG ;;
        n) _n=$OPTARG ;;
        l) _l=$OPTARG ;;
        u) _up=$OPTARG ;;
        r) _hr=$OPTARG ;;
        d) _deg="$_deg $OPTARG" ;;
        R) _rail=$OPTARG ;;
        D) _rdeg="$_rdeg $OPTARG" ;;
        *)
            rack_say "usage: rack_up [-p PREFIX] [-s SUBNET] [-n HOSTS] [-l LEAVES] [-u RATE] [-r RATE] [-d HOST:RATE] [-R RAIL_SUBNET] [-D HOST:RATE]"
            return 64
            ;;
        esac
    done
    echo "$_p" | grep -Eq '^[a-z][a-z0-9]{0,7}$' || {
        rack_say "prefix '$_p': 1 to 8 lowercase letters or digits, a letter first"
        return 64
    }
    for _s in "$_net" ${_rail:+"$_rail"}; do
        echo "$_s" | grep -Eq '^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){2}$' || {
            rack_say "subnet '$_s': the first three octets of a /24, like 10.79.0"
            return 64
        }
    done
    [ "$_rail" != "$_net" ] || {
        rack_say "the rail subnet (-R) must differ from the rack's (-s $_net)"
        return 64
    }
    case $_n in '' | *[!0-9]*) _n=0 ;; esac
    case $_l in '' | *[!0-9]*) _l=0 ;; esac
    [ "$_n" -ge 2 ] && [ "$_n" -le 253 ] || {
        rack_say "hosts (-n): 2 to 253"
        return 64
    }
    [ "$_l" -ge 1 ] && [ "$_l" -le "$_n" ] || {
        rack_say "leaves (-l): 1 to the number of hosts ($_n)"
        return 64
    }
    for _r in "$_up" ${_hr:+"$_hr"}; do
        _rack_rate_ok "$_r" || {
            rack_say "rate '$_r': a tc rate such as 100mbit, 1gbit or 500kbit"
            return 64
        }
    done
    for _d in $_deg $_rdeg; do
        _dh=${_d%%:*}
        _dh=${_dh#"$_p"-}
        _di=${_dh#h}
        case $_di in '' | *[!0-9]*) _di=0 ;; esac
        [ "$_dh" = "h$_di" ] && [ "$_di" -ge 1 ] && [ "$_di" -le "$_n" ] &&
            _rack_rate_ok "${_d#*:}" || {
            rack_say "degraded host '$_d': HOST:RATE with HOST $_p-h1..$_p-h$_n, like $_p-h3:25mbit"
            return 64
        }
    done
    [ "$(id -u)" -eq 0 ] || {
        rack_say "a rack of network namespaces needs root"
        return 77
    }
    # Refuse to adopt anything: what exists under this prefix is someone else's.
    if [ -e "/var/tmp/$_p-rack" ] || ip netns list | grep -q "^$_p-" ||
        ip link show "$_p-sp" >/dev/null 2>&1; then
        rack_say "a rack with prefix '$_p' exists already (/var/tmp/$_p-rack, namespaces $_p-*, link $_p-sp): take it down (rack_down) or choose another -p"
        return 73
    fi
    for _s in "$_net" ${_rail:+"$_rail"}; do
        if ip route get "$_s.254" 2>/dev/null | grep -q " dev lo " ||
            ip -4 route show | grep -q "^$_s\.0/24 "; then
            rack_say "subnet $_s.0/24 is in use here (an address or route of this machine, or another rack): choose another -s or -R"
            return 64
        fi
    done
    RACK_PREFIX=$_p
    RACK_NET=$_net
    RACK_STATE=/var/tmp/$RACK_PREFIX-rack
    RACK_FABRIC=$RACK_PREFIX-fab
    RACK_SPINE=$RACK_NET.254
    RACK_CIDR=$RACK_NET.0/24
    RACK_HOSTS=""
    export RACK_PREFIX RACK_NET RACK_CIDR RACK_SPINE
    _rk mkdir -m 0755 "$RACK_STATE" || return 73
    : >"$RACK_STATE/made"
    : >"$RACK_STATE/hosts"
    trap rack_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM HUP

    _f=$RACK_FABRIC
    _rk ip netns add "$_f" || return 1
    _rack_made netns "$_f"
    _rk ip -n "$_f" link set lo up || return 1
    _rk ip -n "$_f" link add sp type bridge || return 1
    _rk ip -n "$_f" link set sp up || return 1
    # The root namespace's way in: PREFIX-sp here, r0 on the spine.
    _rk ip link add "$RACK_PREFIX-sp" type veth peer name r0 netns "$_f" || return 1
    _rack_made link "$RACK_PREFIX-sp"
    _rk ip -n "$_f" link set r0 master sp up || return 1
    _rk ip addr add "$RACK_SPINE/24" dev "$RACK_PREFIX-sp" || return 1
    _rk ip link set "$RACK_PREFIX-sp" up || return 1
    _i=1
    while [ $_i -le "$_l" ]; do
        _rk ip -n "$_f" link add "l$_i" type bridge || return 1
        _rk ip -n "$_f" link set "l$_i" up || return 1
        # The uplink: u on the leaf, d on the spine, each end's egress shaped.
        _rk ip -n "$_f" link add "u$_i" type veth peer name "d$_i" || return 1
        _rk ip -n "$_f" link set "u$_i" master "l$_i" up || return 1
        _rk ip -n "$_f" link set "d$_i" master sp up || return 1
        _rack_shape "$_f" "u$_i" "$_up" || return 1
        _rack_shape "$_f" "d$_i" "$_up" || return 1
        _i=$((_i + 1))
    done
    # The second rail's switch: one bridge for every host's eth1.
    [ -z "$_rail" ] || _rk ip -n "$_f" link add rail1 type bridge || return 1
    [ -z "$_rail" ] || _rk ip -n "$_f" link set rail1 up || return 1
    _i=1
    while [ $_i -le "$_n" ]; do
        _h=$RACK_PREFIX-h$_i
        _leaf=$(((_i - 1) * _l / _n + 1))
        _rk ip netns add "$_h" || return 1
        _rack_made netns "$_h"
        _rk mkdir -p "$RACK_STATE/$_h/tmp" || return 1
        chmod 1777 "$RACK_STATE/$_h/tmp"
        _rk ip -n "$_h" link set lo up || return 1
        _rk ip -n "$_f" link add "p$_i" type veth peer name eth0 netns "$_h" || return 1
        _rk ip -n "$_f" link set "p$_i" master "l$_leaf" up || return 1
        _rk ip -n "$_h" addr add "$RACK_NET.$_i/24" dev eth0 || return 1
        _rk ip -n "$_h" link set eth0 up || return 1
        _rate=$_hr
        for _d in $_deg; do
            _dh=${_d%%:*}
            [ "${_dh#"$RACK_PREFIX"-}" = "h$_i" ] && _rate=${_d#*:}
        done
        if [ -n "$_rate" ]; then # the host's port, both directions
            _rack_shape "$_f" "p$_i" "$_rate" || return 1
            _rack_shape "$_h" eth0 "$_rate" || return 1
        fi
        if [ -n "$_rail" ]; then
            _rk ip -n "$_f" link add "q$_i" type veth peer name eth1 netns "$_h" || return 1
            _rk ip -n "$_f" link set "q$_i" master rail1 up || return 1
            _rk ip -n "$_h" addr add "$_rail.$_i/24" dev eth1 || return 1
            _rk ip -n "$_h" link set eth1 up || return 1
            _rrate=$_hr
            for _d in $_rdeg; do
                _dh=${_d%%:*}
                [ "${_dh#"$RACK_PREFIX"-}" = "h$_i" ] && _rrate=${_d#*:}
            done
            if [ -n "$_rrate" ]; then
                _rack_shape "$_f" "q$_i" "$_rrate" || return 1
                _rack_shape "$_h" eth1 "$_rrate" || return 1
            fi
        fi
        echo "$_h $RACK_NET.$_i leaf$_leaf ${_rate:-unshaped}" >>"$RACK_STATE/hosts"
        RACK_HOSTS="$RACK_HOSTS $_h"
        _i=$((_i + 1))
    done
    RACK_HOSTS=${RACK_HOSTS# }
    # The machine's /etc/hosts plus the rack's names, for rack_enter and rack_local to mount
    # over /etc/hosts in their mount namespaces (the machine's own file is never changed).
    {
        cat /etc/hosts 2>/dev/null
        echo "# the rack $RACK_PREFIX (tests/rack/rack_lib.sh)"
        awk '{ print $2, $1 }' "$RACK_STATE/hosts"
    } >"$RACK_STATE/hosts.etc" || return 1
    return 0
}

# _rack_signal_wait SIG TENTHS PID...: send SIG to the PIDs, then wait up to TENTHS tenths of a
# second until none of them is left.
_rack_signal_wait() {
    _ws=$1 _wt=$2
    shift 2
    kill -"$_ws" "$@" 2>/dev/null
    _k=0
    while [ $_k -lt "$_wt" ]; do
        _still=""
        for _wp in "$@"; do kill -0 "$_wp" 2>/dev/null && _still=1; done
        [ -z "$_still" ] && return 0
        sleep 0.1
        _k=$((_k + 1))
    done
    return 0
}

# rack_down: stop every process left in the rack's hosts (all started there by this rack's
# user), remove its namespaces, its root-namespace link and its state directory.
rack_down() {
    [ -n "${RACK_STATE:-}" ] && [ -f "$RACK_STATE/made" ] || return 0
    _ns=$(awk '$1 == "netns" { print $2 }' "$RACK_STATE/made")
    for _sig in TERM KILL; do
        _left=""
        for _x in $_ns; do _left="$_left $(ip netns pids "$_x" 2>/dev/null)"; done
        [ -z "$(echo "$_left" | tr -d ' ')" ] && break
        # shellcheck disable=SC2086
        _rack_signal_wait $_sig 20 $_left
    done
    for _x in $_ns; do ip netns del "$_x" 2>/dev/null; done
    for _x in $(awk '$1 == "link" { print $2 }' "$RACK_STATE/made"); do
        ip link del "$_x" 2>/dev/null
    done
    rm -rf "$RACK_STATE"
    RACK_STATE=""
}

rack_cleanup() {
    _rc=$?
    [ -n "$RACK_EXTRA_CLEANUP" ] && eval "$RACK_EXTRA_CLEANUP"
    slurm_down
    rack_down
    return $_rc
}

# --- Slurm over the rack -------------------------------------------------------------------

# _slurm_munge_ok [SOCKET]: a credential made and decoded through that munged socket.
_slurm_munge_ok() {
    if [ -n "${1:-}" ]; then
        munge -S "$1" -n </dev/null 2>/dev/null | unmunge -S "$1" >/dev/null 2>&1
    else
        munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1
    fi
}

_slurm_pid() { [ -s "$1" ] && cat "$1"; }

# _slurm_wait_pidfile FILE WHAT: a daemon that forks writes its PID file once it runs.
_slurm_wait_pidfile() {
    _k=0
    until [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; do
        _k=$((_k + 1))
        [ $_k -ge 100 ] && {
            rack_say "$2 did not start (no live PID in $1); its log: $3"
            [ -f "$3" ] && tail -n 5 "$3" >&2
            return 1
        }
        sleep 0.1
    done
}

slurm_up() {
    _port=6817
    OPTIND=1
    while getopts P: _o; do
        case $_o in
        P) _port=$OPTARG ;;
        *)
            rack_say "usage: slurm_up [-P SLURMCTLD_PORT]"
            return 64
            ;;
        esac
    done
    [ -n "${RACK_STATE:-}" ] && [ -f "$RACK_STATE/hosts" ] || {
        rack_say "slurm_up: no rack is up (call rack_up first)"
        return 64
    }
    for _c in slurmctld slurmd srun sinfo munge unmunge munged; do
        command -v $_c >/dev/null 2>&1 || {
            rack_say "$_c is not installed (apt-get install slurmd slurmctld slurm-client munge)"
            return 69
        }
    done
    if ss -ltn "sport = :$_port" 2>/dev/null | grep -q LISTEN; then
        rack_say "port $_port is taken here: another slurmctld? pass slurm_up -P PORT"
        return 69
    fi
    _st=$RACK_STATE/slurm
    _rk mkdir -p -m 0700 "$_st" "$_st/ctld" "$_st/log" || return 73
    SLURM_CONF=$_st/slurm.conf
    export SLURM_CONF
    _auth=""
    if _slurm_munge_ok; then
        rack_say "using this machine's munged"
    else
        # Our own munged: its own key, socket, PID, log and seed, all in the state directory.
        _m=$_st/munge
        _rk mkdir -p -m 0700 "$_m" || return 73
        _rk dd if=/dev/urandom of="$_m/munge.key" bs=1024 count=1 status=none || return 1
        chmod 0400 "$_m/munge.key"
        # --force: root may own it, and the state directory is under the sticky /var/tmp.
        _rk munged --force --socket="$_m/munge.sock" --key-file="$_m/munge.key" \
            --pid-file="$_m/munged.pid" --log-file="$_m/munged.log" \
            --seed-file="$_m/munged.seed" 2>"$_m/munged.err" || {
            cat "$_m/munged.err" >&2
            return 1
        }
        _slurm_wait_pidfile "$_m/munged.pid" munged "$_m/munged.log" || return 1
        echo "$(cat "$_m/munged.pid")" >"$_st/munged.ours"
        _slurm_munge_ok "$_m/munge.sock" || {
            rack_say "our munged ($_m/munge.sock) does not decode its own credential"
            return 1
        }
        _auth="AuthInfo=socket=$_m/munge.sock"
    fi
    _cpus=$(nproc)
    {
        echo "ClusterName=$RACK_PREFIX"
        # SlurmctldHost must name this machine; slurmctld is reached at the spine's address.
        echo "SlurmctldHost=$(hostname -s)($RACK_SPINE)"
        echo "SlurmctldPort=$_port"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        [ -n "$_auth" ] && echo "$_auth"
        echo "StateSaveLocation=$_st/ctld"
        echo "SlurmdSpoolDir=$_st/spool-%n"
        echo "SlurmctldPidFile=$_st/slurmctld.pid"
        echo "SlurmdPidFile=$_st/slurmd-%n.pid"
        echo "SlurmctldLogFile=$_st/log/slurmctld.log"
        echo "SlurmdLogFile=$_st/log/slurmd-%n.log"
        # No cgroups: linuxproc tracks a job's processes by parentage.
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "MailProg=/bin/true"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "SlurmdTimeout=30"
        while read -r _h _a _rest; do
            echo "NodeName=$_h NodeAddr=$_a CPUs=$_cpus State=UNKNOWN"
        done <"$RACK_STATE/hosts"
        echo "PartitionName=rack Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE"
    } >"$SLURM_CONF"
    # Slurm 22.05 rejects cgroup v1 hierarchies mounted under a tmpfs when it autodetects:
    # name the plugin (nothing uses it with the plugins above).
    printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' >"$_st/cgroup.conf"
    _rk slurmctld -i -f "$SLURM_CONF" || return 1
    _slurm_wait_pidfile "$_st/slurmctld.pid" slurmctld "$_st/log/slurmctld.log" || return 1
    while read -r _h _a _rest; do
        mkdir -p "$_st/spool-$_h"
        _rk rack_enter "$_h" env SLURM_CONF="$SLURM_CONF" slurmd -N "$_h" || return 1
        _slurm_wait_pidfile "$_st/slurmd-$_h.pid" "slurmd on $_h" "$_st/log/slurmd-$_h.log" ||
            return 1
    done <"$RACK_STATE/hosts"
    _want=$(wc -l <"$RACK_STATE/hosts")
    _k=0
    while :; do
        _idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
        [ "$_idle" -eq "$_want" ] && break
        _k=$((_k + 1))
        [ $_k -ge 60 ] && {
            rack_say "only $_idle of $_want slurmd are idle after 30 s:"
            sinfo -N >&2
            return 1
        }
        sleep 0.5
    done
    return 0
}

# slurm_down: stop the slurmd, slurmctld (and our own munged) that slurm_up started, by the
# PIDs in their PID files; nothing else.
slurm_down() {
    [ -n "${RACK_STATE:-}" ] && [ -d "$RACK_STATE/slurm" ] || return 0
    _st=$RACK_STATE/slurm
    _pids=""
    for _pf in "$_st"/slurmd-*.pid "$_st/slurmctld.pid" "$_st/munged.ours"; do
        _p=$(_slurm_pid "$_pf" 2>/dev/null) && _pids="$_pids $_p"
    done
    for _sig in TERM KILL; do
        _alive=""
        for _p in $_pids; do kill -0 "$_p" 2>/dev/null && _alive="$_alive $_p"; done
        [ -z "$_alive" ] && break
        # shellcheck disable=SC2086
        _rack_signal_wait $_sig 50 $_alive
    done
    [ "${KEEP_RACK_LOGS:-0}" = 1 ] && cp -r "$_st/log" "/var/tmp/$RACK_PREFIX-slurm-logs.$$"
    rm -rf "$_st"
    unset SLURM_CONF
}
