#!/bin/sh
# rxe-vm.sh: boot Debian's kernel in qemu (TCG) with Soft-RoCE (rdma_rxe) on a veth pair and
# run a command inside the guest. Exits with the guest command's status: 0 pass, 77 skip
# (also when qemu or the kernel cannot be had), anything else fail. See README.md.
set -eu

PROG=rxe-vm
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
SCRIPT=$SCRIPT_DIR/$(basename "$0")
TRIPLET=x86_64-linux-gnu
# The kernel modules the guest loads, in this order; each brings its dependencies.
# crc32_generic is no link-time dependency of rdma_rxe, but rxe looks the "crc32" hash up at
# run time ("rdma_rxe: failed to init crc32 algorithm"), so it goes first.
RXE_MODULES="crc32_generic rdma_rxe rdma_ucm veth"
VIRTIO_MODULES="virtio_pci virtio_net"   # MODE=pair only
PKGS="qemu-system-x86 busybox-static kmod cpio iproute2 rdma-core ibverbs-providers
      ibverbs-utils perftest libibverbs1 librdmacm1"
# Programs every guest has (beside busybox): iproute2, the verbs utilities and perftest.
BASE_BINS="/usr/bin/ip /usr/bin/rdma /usr/bin/ibv_devices /usr/bin/ibv_devinfo
      /usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong
      /usr/bin/ib_write_lat /usr/bin/ib_write_bw /usr/bin/ib_send_lat /usr/bin/ib_send_bw
      /usr/bin/ib_read_lat /usr/bin/ib_read_bw"
NL='
'

usage() {
    cat <<EOF
usage: $0 [options] (--guest-script FILE | -- COMMAND [ARG]...)
Boot a qemu (TCG) guest with rxe0 on veth0 (10.0.0.1/24) and run the command there.
  --bin PATH           carry a program to /usr/bin/NAME, with its ldd closure (repeatable)
  --file SRC:DEST      carry a file or folder to DEST; ELF files (a folder's too) bring
                       their libraries
  --guest-script FILE  run FILE with the guest's sh
  --outdir DIR         copy what the command leaves in \$OUT (/out) back into DIR
  --log FILE           keep the serial console log at FILE
  --cache DIR          kernel/initramfs cache (default \$FABTOP_BUILD/vm-cache, else
                       <checkout>/build/vm-cache)
  --timeout SEC        hard limit on the VM run, boot included (default 240)
  --pkg NAME           one more Debian package the caller needs on the host
  --mode single|pair   one VM (default), or two VMs on one virtio wire (both run the command)
  --wires 1|2          pair mode: 1 (default) one wire, eth0 10.0.0.1/.2, rxe0 on eth0; 2 a
                       second wire: eth0 stays the control wire (10.0.0.1/.2), eth1 is the
                       data wire (10.0.1.1/.2) and rxe0 sits on eth1, so the data NIC can go
                       down while the control connection stays up
  --refresh            rebuild the cached kernel and base initramfs
  -v, --verbose        print the whole console log, not only the command's output
Guest environment: RXE_DEV RXE_NETDEV RXE_IP RXE_GID_INDEX RXE_ROLE RXE_PEER OUT IP
(IP=/usr/bin/ip: busybox applets win over \$PATH, so run iproute2 by absolute path).
RXE_NETDEV, RXE_IP and RXE_GID_INDEX describe rxe0 (with --wires 2: eth1, 10.0.1.x), RXE_PEER
the other guest's address on that wire. Also RXE_WIRES, RXE_CTL_NETDEV RXE_CTL_IP RXE_CTL_PEER
(the control wire) and RXE_DATA_NETDEV RXE_DATA_IP RXE_DATA_PEER (rxe0's wire); with one wire
both name the same one.
Environment: RXE_VM_CACHE RXE_VM_TIMEOUT MODE WIRES SMP (4) MEM (1024, MiB).
EOF
}

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { say "error: $*"; exit 1; }
skip() { say "skipped: $*"; exit 77; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
# Single-quote one word for sh.
shquote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# ---------------------------------------------------------------- options
BINS=
FILES=
GUEST_SCRIPT=
GUEST_CMD=
OUTDIR=
LOG=
CACHE=${RXE_VM_CACHE:-}
VM_TIMEOUT=${RXE_VM_TIMEOUT:-240}
EXTRA_PKGS=
MODE=${MODE:-single}
WIRES=${WIRES:-1}
SMP=${SMP:-4}
MEM=${MEM:-1024}
REFRESH=0
VERBOSE=0
need_arg() { [ $# -ge 2 ] || { say "error: $1 needs an argument"; exit 64; }; }
while [ $# -gt 0 ]; do
    case $1 in
    --bin) need_arg "$@"; BINS=$BINS$2$NL; shift 2 ;;
    --file) need_arg "$@"; case $2 in *:?*) ;; *) say "error: --file wants SRC:DEST, got '$2'"; exit 64 ;; esac
        FILES=$FILES$2$NL; shift 2 ;;
    --guest-script) need_arg "$@"; GUEST_SCRIPT=$2; shift 2 ;;
    --outdir) need_arg "$@"; OUTDIR=$2; shift 2 ;;
    --log) need_arg "$@"; LOG=$2; shift 2 ;;
    --cache) need_arg "$@"; CACHE=$2; shift 2 ;;
    --timeout) need_arg "$@"; VM_TIMEOUT=$2; shift 2 ;;
    --pkg) need_arg "$@"; EXTRA_PKGS="$EXTRA_PKGS $2"; shift 2 ;;
    --mode) need_arg "$@"; MODE=$2; shift 2 ;;
    --wires) need_arg "$@"; WIRES=$2; shift 2 ;;
    --refresh) REFRESH=1; shift ;;
    -v | --verbose) VERBOSE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; [ $# -gt 0 ] || { say "error: nothing after --"; exit 64; }
        for a in "$@"; do GUEST_CMD="$GUEST_CMD $(shquote "$a")"; done
        break ;;
    *) say "error: unknown option '$1' (see --help)"; exit 64 ;;
    esac
done
if [ -n "$GUEST_SCRIPT" ] && [ -n "$GUEST_CMD" ]; then say "error: give --guest-script or -- COMMAND, not both"; exit 64; fi
if [ -z "$GUEST_SCRIPT" ] && [ -z "$GUEST_CMD" ]; then say "error: no guest command (see --help)"; exit 64; fi
[ -z "$GUEST_SCRIPT" ] || [ -r "$GUEST_SCRIPT" ] || { say "error: cannot read guest script $GUEST_SCRIPT"; exit 66; }
case $MODE in single | pair) ;; *) say "error: --mode is single or pair, not '$MODE'"; exit 64 ;; esac
case $WIRES in 1 | 2) ;; *) say "error: --wires is 1 or 2, not '$WIRES'"; exit 64 ;; esac
if [ "$WIRES" = 2 ] && [ "$MODE" != pair ]; then say "error: --wires 2 goes with --mode pair"; exit 64; fi
case $VM_TIMEOUT in '' | *[!0-9]*) say "error: --timeout wants seconds, got '$VM_TIMEOUT'"; exit 64 ;; esac
if [ -z "$CACHE" ]; then
    if [ -n "${FABTOP_BUILD:-}" ]; then CACHE=$FABTOP_BUILD/vm-cache
    else CACHE=$(cd "$SCRIPT_DIR/../.." && pwd)/build/vm-cache; fi
fi
mkdir -p "$CACHE" || die "cannot create cache dir $CACHE"
CACHE=$(cd "$CACHE" && pwd)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm.XXXXXX")
QPIDS=
cleanup() {
    for p in $QPIDS; do kill "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
T_START=$(now)

# ---------------------------------------------------------------- 1. host packages
pkg_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}
APT_UPDATED=0
apt_update() {
    [ $APT_UPDATED = 1 ] && return 0
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$WORK/apt.log" 2>&1 || {
        tail -n 3 "$WORK/apt.log" >&2; return 1; }
    APT_UPDATED=1
}
ensure_packages() {
    command -v dpkg-query >/dev/null 2>&1 || skip "not a Debian host (no dpkg-query)"
    missing=
    for p in $PKGS $EXTRA_PKGS; do pkg_installed "$p" || missing="$missing $p"; done
    [ -n "$missing" ] || return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        skip "missing packages (install as root):$missing"
    fi
    t=$(now)
    apt_update || skip "apt-get update failed; cannot install:$missing"
    say "apt-get install$missing"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=120 $missing \
        >"$WORK/apt.log" 2>&1 || tail -n 3 "$WORK/apt.log" >&2
    still=
    for p in $missing; do pkg_installed "$p" || still="$still $p"; done
    [ -z "$still" ] || skip "could not install:$still"
    say "packages installed in $(since "$t") s"
}
ensure_packages
QEMU=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found"
for t in /bin/busybox /usr/bin/ip /usr/bin/rdma; do [ -x "$t" ] || skip "$t is missing"; done
/bin/busybox --list | grep -qx base64 || skip "/bin/busybox has no base64 applet"

# Everything below builds into the shared cache: one run at a time.
exec 9>"$CACHE/.lock"
flock 9 || die "cannot lock $CACHE/.lock"

# ---------------------------------------------------------------- 2. kernel + modules (cached)
KDIR=$CACHE/kernel
# copy_modules ROOT KV LISTFILE MODULE...: copy each module and its dependencies (depmod
# order) from ROOT's module tree into $KDIR/modules and append new names to LISTFILE.
copy_modules() {
    root=$1 kv=$2 list=$3; shift 3
    for m in "$@"; do
        modprobe -d "$root" -S "$kv" --show-depends "$m" >"$WORK/deps" ||
            die "module $m not found in kernel $kv"
        while read -r verb ko _; do
            [ "$verb" = insmod ] || continue
            name=$(basename "$ko")
            case $name in *.xz | *.zst | *.gz) name=${name%.*} ;; esac
            grep -qxF "$name" "$KDIR/modules/all" 2>/dev/null && continue
            case $ko in
            *.xz) xz -dc "$ko" >"$KDIR/modules/$name" ;;
            *.zst) zstd -qdc "$ko" >"$KDIR/modules/$name" ;;
            *.gz) gzip -dc "$ko" >"$KDIR/modules/$name" ;;
            *) cp "$ko" "$KDIR/modules/$name" ;;
            esac
            echo "$name" >>"$KDIR/modules/all"
            echo "$name" >>"$list"
        done <"$WORK/deps"
    done
}
build_kernel() {
    t=$(now)
    command -v apt-get >/dev/null 2>&1 || skip "no apt-get to fetch Debian's kernel"
    kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
    if [ -z "$kpkg" ] && [ "$(id -u)" = 0 ]; then
        apt_update || true
        kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
            awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
    fi
    [ -n "$kpkg" ] || skip "cannot resolve the kernel package behind linux-image-amd64 (no apt lists?)"
    say "apt-get download $kpkg"
    (cd "$WORK" && apt-get download -q "$kpkg" >"$WORK/apt.log" 2>&1) ||
        { tail -n 3 "$WORK/apt.log" >&2; skip "cannot download kernel package $kpkg"; }
    deb=$(ls "$WORK/${kpkg}"_*.deb)
    # Only the kernel image and the module tree; the rest of the package is not needed.
    mkdir "$WORK/kroot"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK/kroot" --wildcards './boot/vmlinuz-*' './lib/modules/*' ||
        die "cannot unpack $deb"
    kv=$(ls "$WORK/kroot/lib/modules" | head -n 1)
    [ -f "$WORK/kroot/boot/vmlinuz-$kv" ] || die "$deb has no boot/vmlinuz-$kv"
    depmod -b "$WORK/kroot" "$kv" || die "depmod failed on $kpkg"
    rm -rf "$KDIR" "$KDIR.new"
    KDIR=$KDIR.new
    mkdir -p "$KDIR/modules"
    copy_modules "$WORK/kroot" "$kv" "$KDIR/modules/order.rxe" $RXE_MODULES
    copy_modules "$WORK/kroot" "$kv" "$KDIR/modules/order.virtio" $VIRTIO_MODULES
    cp "$WORK/kroot/boot/vmlinuz-$kv" "$KDIR/vmlinuz"
    printf '%s\n' "$kv" >"$KDIR/version"
    printf '%s\n' "$(basename "$deb")" >"$KDIR/package"
    rm -rf "$WORK/kroot" "$deb"
    KDIR=$CACHE/kernel
    mv "$KDIR.new" "$KDIR"
    say "kernel $kv cached in $(since "$t") s ($(tr '\n' ' ' <"$KDIR/modules/order.rxe"))"
}
[ $REFRESH = 0 ] && [ -f "$KDIR/version" ] && [ -f "$KDIR/vmlinuz" ] || build_kernel
KV=$(cat "$KDIR/version")

# ---------------------------------------------------------------- 3. initramfs
# Paths inside the guest are canonical /usr paths: /bin /sbin /lib /lib64 are symlinks into
# /usr in the base archive, and an overlay archive must not replace them with folders.
canon() {
    case $1 in
    /bin/* | /sbin/* | /lib/* | /lib64/*) printf '/usr%s' "$1" ;;
    *) printf '%s' "$1" ;;
    esac
}
# libs_of FILE...: the shared libraries (and the dynamic loader) the files need.
libs_of() {
    for f in "$@"; do
        ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' || true
    done | sort -u
}
# put ROOT SRC DEST: copy SRC (following links) to ROOT/DEST, making folders.
put() {
    d=$(canon "$3")
    mkdir -p "$1$(dirname "$d")"
    cp -L "$2" "$1$d"
}
# put_libs ROOT SKIPLIST FILE...: the ldd closure of FILEs into ROOT, minus SKIPLIST's paths.
put_libs() {
    root=$1 skiplist=$2; shift 2
    libs_of "$@" | while read -r lib; do
        [ -e "$lib" ] || continue
        g=$(canon "$lib")
        if [ -n "$skiplist" ] && grep -qxF "$g" "$skiplist"; then continue; fi
        put "$root" "$lib" "$g"
    done
}
# The guest's /init. Kept in this file so that changing it changes the cache key.
write_init() {
    cat >"$1" <<'INIT'
#!/bin/sh
# rxe-vm guest init: modules, veth pair (or virtio wire), rxe0, then the command.
export PATH=/usr/bin:/usr/sbin HOME=/root TERM=vt100 IP=/usr/bin/ip
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# Own the console as /dev/ttyS0 (not /dev/console) so that the last close below waits
# until the UART has sent everything.
exec </dev/null >/dev/ttyS0 2>&1
hostname rxe-vm
echo "RXE-VM-INIT uptime=$(cut -d' ' -f1 /proc/uptime)"
mode=single role=a ip=10.0.0.1 peer=10.0.0.2 out=0 wires=1 dip= dpeer=
for kv in $(cat /proc/cmdline); do
    case $kv in
    rxevm.mode=*) mode=${kv#*=} ;;
    rxevm.role=*) role=${kv#*=} ;;
    rxevm.ip=*) ip=${kv#*=} ;;
    rxevm.peer=*) peer=${kv#*=} ;;
    rxevm.out=*) out=${kv#*=} ;;
    rxevm.wires=*) wires=${kv#*=} ;;
    rxevm.dip=*) dip=${kv#*=} ;;
    rxevm.dpeer=*) dpeer=${kv#*=} ;;
    esac
done
finish() {
    echo "RXE-VM-EXIT=$1"
    kill -9 -1 2>/dev/null   # leftovers would keep the tty open and stop the drain
    exec >/dev/null 2>&1     # last close of ttyS0: waits until it is sent
    poweroff -f
}
setup_fail() {
    echo "RXE-VM-SETUP-FAIL $*"
    finish 1
}
orders=/rxevm/modules/order.rxe
[ "$mode" = pair ] && orders="$orders /rxevm/modules/order.virtio"
for m in $(cat $orders); do insmod /rxevm/modules/$m || setup_fail "insmod $m"; done
$IP link set lo up
if [ "$mode" = single ]; then
    # rxe's port state follows the carrier, and a veth has carrier only with both ends up.
    $IP link add veth0 type veth peer name veth1 || setup_fail "ip link add veth0"
    $IP addr add 10.0.0.1/24 dev veth0
    $IP link set veth1 up
    $IP link set veth0 up
    netdev=veth0 ip=10.0.0.1 peer=10.0.0.1
    cnetdev=$netdev cip=$ip cpeer=$peer
else
    $IP addr add "$ip/24" dev eth0 || setup_fail "no eth0"
    $IP link set eth0 up
    netdev=eth0
    cnetdev=eth0 cip=$ip cpeer=$peer
    if [ "$wires" = 2 ]; then
        # The data wire: rxe0 goes on eth1, so that eth1 can go down (a drill's link-down)
        # while the control connection on eth0 stays up.
        $IP addr add "$dip/24" dev eth1 || setup_fail "no eth1 (the data wire)"
        $IP link set eth1 up
        netdev=eth1 ip=$dip peer=$dpeer
    fi
fi
/usr/bin/rdma link add rxe0 type rxe netdev $netdev || setup_fail "rdma link add rxe0 netdev $netdev"
# The port turns ACTIVE and the RoCE v2 GID of the IPv4 address appears asynchronously.
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$ip" | tr . ' '))
port=/sys/class/infiniband/rxe0/ports/1
gidx= n=0
while :; do
    if [ -z "$gidx" ]; then   # one grep over the 1024 slots; a fork per slot is slow here
        f=$(grep -lx "$want" $port/gids/* 2>/dev/null | head -n 1)
        gidx=${f##*/}
    fi
    case $(cat $port/state 2>/dev/null) in *ACTIVE*) [ -n "$gidx" ] && break ;; esac
    n=$((n + 1))
    [ $n -le 200 ] || setup_fail "rxe0 port 1 not ACTIVE with GID $want after 10 s: $(cat $port/state)"
    sleep 0.05
done
export RXE_DEV=rxe0 RXE_NETDEV=$netdev RXE_IP=$ip RXE_GID_INDEX=$gidx RXE_ROLE=$role RXE_PEER=$peer OUT=/out
export RXE_WIRES=$wires RXE_CTL_NETDEV=$cnetdev RXE_CTL_IP=$cip RXE_CTL_PEER=$cpeer \
    RXE_DATA_NETDEV=$netdev RXE_DATA_IP=$ip RXE_DATA_PEER=$peer
mkdir -p /out /root
cd /root
echo "RXE-VM-READY uptime=$(cut -d' ' -f1 /proc/uptime) dev=rxe0 netdev=$netdev ip=$ip gid_index=$gidx wires=$wires"
echo "@@RXE-VM-GUEST-BEGIN@@"
sh /rxevm/guest.sh
rc=$?
echo "@@RXE-VM-GUEST-END@@"
if [ "$out" = 1 ]; then
    # Files travel on the second serial port, which carries nothing else.
    (cd /out && tar -cf - . | gzip -1 | base64) >/dev/ttyS1 || echo "RXE-VM-OUT-FAIL"
    echo "RXE-VM-OUT-SENT"
fi
finish $rc
INIT
    chmod 755 "$1"
}

# Base archive: busybox, iproute2, verbs tools, the rxe provider, modules, /init. Rebuilt
# when this script, the kernel or one of the carried packages changes.
base_key() {
    {
        cat "$SCRIPT"
        printf '%s\n' "$KV"
        dpkg-query -W busybox-static iproute2 rdma-core ibverbs-providers ibverbs-utils \
            perftest libibverbs1 librdmacm1 libc6 2>/dev/null
    } | md5sum | cut -c1-12
}
build_base() {
    t=$(now)
    r=$WORK/base
    rm -rf "$r"
    mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib/$TRIPLET" "$r/usr/lib64" "$r/etc" \
        "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/run" "$r/root" "$r/rxevm"
    for d in bin sbin lib lib64; do ln -s "usr/$d" "$r/$d"; done
    cp /bin/busybox "$r/usr/bin/busybox"
    for a in $(/bin/busybox --list); do
        [ "$a" = busybox ] || ln -s busybox "$r/usr/bin/$a"
    done
    for b in $BASE_BINS; do
        if [ -x "$b" ]; then rm -f "$r/usr/bin/${b##*/}"; put "$r" "$b" "/usr/bin/${b##*/}"; fi
    done
    prov=$(ls /usr/lib/$TRIPLET/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n 1)
    [ -n "$prov" ] || skip "no rxe verbs provider (ibverbs-providers)"
    put "$r" "$prov" "$prov"
    put "$r" /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/rxe.driver
    # shellcheck disable=SC2086
    put_libs "$r" "" $BASE_BINS "$prov"
    if [ -d /usr/lib/terminfo ]; then cp -a /usr/lib/terminfo "$r/usr/lib/"; fi   # for ncurses
    cp -a "$KDIR/modules" "$r/rxevm/modules"
    echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
    echo 'root:x:0:' >"$r/etc/group"
    echo '127.0.0.1 localhost' >"$r/etc/hosts"
    write_init "$r/init"
    (cd "$r" && find . | sed 's,^\./,,' | grep -v '^\.$' | sort >"$WORK/base.list")
    (cd "$r" && find . | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$WORK/base.cpio.gz"
    rm -f "$CACHE"/base-*.cpio.gz "$CACHE"/base-*.list
    sed 's,^,/,' "$WORK/base.list" >"$CACHE/base-$KEY.list"
    mv "$WORK/base.cpio.gz" "$CACHE/base-$KEY.cpio.gz"
    rm -rf "$r"
    say "base initramfs $(du -k "$CACHE/base-$KEY.cpio.gz" | cut -f1) KiB built in $(since "$t") s"
}
KEY=$(base_key)
[ $REFRESH = 0 ] && [ -f "$CACHE/base-$KEY.cpio.gz" ] || build_base
BASE=$CACHE/base-$KEY.cpio.gz

# Overlay archive for this run: carried programs, files, the guest script. The kernel
# unpacks concatenated archives in order, so it lands on top of the base.
o=$WORK/overlay
mkdir -p "$o/usr/bin" "$o/rxevm"
old_ifs=$IFS
IFS=$NL
for b in $BINS; do
    [ -f "$b" ] && [ -x "$b" ] || die "--bin $b: not an executable file"
    put "$o" "$b" "/usr/bin/${b##*/}"
    put_libs "$o" "$CACHE/base-$KEY.list" "$b"
done
for spec in $FILES; do
    src=${spec%%:*} dest=${spec#*:}
    [ -e "$src" ] || die "--file $spec: no such file $src"
    case $dest in /*) ;; *) die "--file $spec: DEST must be absolute" ;; esac
    if [ -d "$src" ]; then
        mkdir -p "$o$(canon "$dest")"
        cp -a "$src/." "$o$(canon "$dest")/"
        # The folder's ELF files bring their libraries too (plugins that a program loads
        # with dlopen: OpenMPI's and PMIx's components).
        find "$src" -type f | while read -r f; do
            if [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then echo "$f"; fi
        done >"$WORK/elf.list"
        if [ -s "$WORK/elf.list" ]; then
            # shellcheck disable=SC2046
            put_libs "$o" "$CACHE/base-$KEY.list" $(cat "$WORK/elf.list")
        fi
    else
        case $dest in */) dest=$dest${src##*/} ;; esac
        put "$o" "$src" "$dest"
        put_libs "$o" "$CACHE/base-$KEY.list" "$src"
    fi
done
IFS=$old_ifs
if [ -n "$GUEST_SCRIPT" ]; then
    cp "$GUEST_SCRIPT" "$o/rxevm/guest.sh"
else
    printf '#!/bin/sh\n%s\n' "$GUEST_CMD" >"$o/rxevm/guest.sh"
fi
(cd "$o" && find . -mindepth 1 | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$WORK/overlay.cpio.gz"
cat "$BASE" "$WORK/overlay.cpio.gz" >"$WORK/initrd.img"
exec 9>&-   # done with the cache: unlock
rm -rf "$o"
say "ready in $(since "$T_START") s (kernel $KV, initrd $(du -k "$WORK/initrd.img" | cut -f1) KiB)"

# ---------------------------------------------------------------- 4. boot
# cryptomgr.notests: the crypto self-tests at boot are the kernel's, not ours; under TCG on a
# loaded host their thread was seen in a soft lockup that kept a guest from booting
# ("watchdog: BUG: soft lockup - CPU#0 stuck for 417s! [cryptomgr_test:53]").
APPEND="console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3 mitigations=off cryptomgr.notests"
# start_vm NAME SMP APPEND-EXTRA QEMU-ARGS...: serial logs $WORK/NAME.console and NAME.out
start_vm() {
    name=$1 smp=$2 app=$3; shift 3
    : >"$WORK/$name.console"
    : >"$WORK/$name.out"
    # KVM does not work on these hosts (nested PVM): TCG, multi-threaded.
    timeout -k 5 "$VM_TIMEOUT" "$QEMU" -accel tcg,thread=multi -cpu max -machine q35 \
        -smp "$smp" -m "$MEM" -nodefaults -no-user-config -display none -no-reboot \
        -kernel "$KDIR/vmlinuz" -initrd "$WORK/initrd.img" -append "$APPEND $app" \
        -serial "file:$WORK/$name.console" -serial "file:$WORK/$name.out" \
        "$@" </dev/null >"$WORK/$name.qemu" 2>&1 &
    QPIDS="$QPIDS $!"
}
OUTFLAG=0
[ -z "$OUTDIR" ] || OUTFLAG=1
T_BOOT=$(now)
if [ "$MODE" = single ]; then
    VMS=single
    start_vm single "$SMP" "rxevm.mode=single rxevm.out=$OUTFLAG" -nic none
else
    VMS="a b"
    sock=$WORK/wire.sock
    # --wires 2: a second wire (its own stream socket), eth1 in each guest, the data wire.
    sock1=$WORK/wire1.sock
    wire1_a='' wire1_b='' wires_a='' wires_b=''
    if [ "$WIRES" = 2 ]; then
        wires_a="rxevm.wires=2 rxevm.dip=10.0.1.1 rxevm.dpeer=10.0.1.2"
        wires_b="rxevm.wires=2 rxevm.dip=10.0.1.2 rxevm.dpeer=10.0.1.1"
        wire1_a="-netdev stream,id=n1,server=on,addr.type=unix,addr.path=$sock1
            -device virtio-net-pci,netdev=n1,mac=52:54:00:00:01:01"
        wire1_b="-netdev stream,id=n1,server=off,addr.type=unix,addr.path=$sock1
            -device virtio-net-pci,netdev=n1,mac=52:54:00:00:01:02"
    fi
    # shellcheck disable=SC2086 # wire1_*: words without blanks
    start_vm a 2 "rxevm.mode=pair rxevm.role=a rxevm.ip=10.0.0.1 rxevm.peer=10.0.0.2 rxevm.out=$OUTFLAG $wires_a" \
        -netdev "stream,id=n0,server=on,addr.type=unix,addr.path=$sock" \
        -device virtio-net-pci,netdev=n0,mac=52:54:00:00:00:01 $wire1_a
    # The client end needs the server's socket files; poll for them.
    n=0
    while [ ! -S "$sock" ] || { [ "$WIRES" = 2 ] && [ ! -S "$sock1" ]; }; do
        n=$((n + 1))
        [ $n -le 300 ] || die "VM a did not create its wire sockets in $WORK within 30 s"
        sleep 0.1
    done
    # shellcheck disable=SC2086
    start_vm b 2 "rxevm.mode=pair rxevm.role=b rxevm.ip=10.0.0.2 rxevm.peer=10.0.0.1 rxevm.out=$OUTFLAG $wires_b" \
        -netdev "stream,id=n0,server=off,addr.type=unix,addr.path=$sock" \
        -device virtio-net-pci,netdev=n0,mac=52:54:00:00:00:02 $wire1_b
fi
RCS=
for p in $QPIDS; do
    rc=0
    wait "$p" || rc=$?
    RCS="$RCS $rc"
done
QPIDS=
say "VM run took $(since "$T_BOOT") s"

# ---------------------------------------------------------------- 5. results
set -- $RCS
RESULT=0
for name in $VMS; do
    qrc=$1; shift
    tr -d '\r' <"$WORK/$name.console" >"$WORK/$name.log"
    lg=$WORK/$name.log
    if [ -n "$LOG" ]; then
        dest=$LOG
        [ "$MODE" = single ] || dest=$LOG.$name
        mkdir -p "$(dirname "$dest")" && cp "$lg" "$dest"
    fi
    [ "$MODE" = single ] || echo "----- VM $name -----"
    if [ $VERBOSE = 1 ]; then
        cat "$lg"
    else
        awk '/@@RXE-VM-GUEST-END@@/ { sub(/@@RXE-VM-GUEST-END@@.*/, ""); if ($0 != "") print; on = 0 }
             on { print }
             /@@RXE-VM-GUEST-BEGIN@@/ { on = 1 }' "$lg"
    fi
    rc=$(sed -n 's/^RXE-VM-EXIT=\([0-9][0-9]*\)$/\1/p' "$lg" | tail -n 1)
    why=
    if [ -z "$rc" ]; then
        rc=1
        if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
            why="timed out after $VM_TIMEOUT s"
        elif grep -q 'RXE-VM-INIT' "$lg"; then
            why="guest ended without an exit status (qemu rc $qrc)"
        else
            why="guest never reached /init (qemu rc $qrc): $(tail -n 2 "$WORK/$name.qemu" "$lg" 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
        fi
    fi
    setup=$(sed -n 's/^RXE-VM-SETUP-FAIL //p' "$lg" | head -n 1)
    [ -z "$setup" ] || why="guest setup failed: $setup"
    if [ -n "$OUTDIR" ] && grep -q '^RXE-VM-OUT-SENT' "$lg"; then
        dest=$OUTDIR
        [ "$MODE" = single ] || dest=$OUTDIR/$name
        mkdir -p "$dest"
        tr -d '\r' <"$WORK/$name.out" | base64 -d | tar -xzf - -C "$dest" ||
            { why="${why:+$why; }cannot unpack the guest's \$OUT"; [ "$rc" != 0 ] || rc=1; }
    fi
    if [ -n "$why" ]; then
        say "VM $name: $why"
        [ $VERBOSE = 1 ] || { say "VM $name: console tail:"; tail -n 15 "$lg" >&2; }
    fi
    say "VM $name: guest command exit status $rc"
    # Any failure wins over a skip, a skip over a pass.
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then RESULT=$rc
    elif [ "$rc" = 77 ] && [ "$RESULT" = 0 ]; then RESULT=77; fi
done
say "total $(since "$T_START") s"
exit "$RESULT"
