# Runs in both guests of an rxe-vm pair (busybox sh; a 10.0.0.1, b 10.0.0.2, one virtio wire).
# b serves with eth0 at MTU 4200; a runs `fabtop doctor` against it with eth0 at 1500 (the
# mismatch, path MTU 4096 against a's RoCE MTU 1024), then with a GID index neither has,
# then at 4200 on both (matched). Each run walks a real queue pair to b (INIT -> RTR -> RTS,
# then WRITE ping-pongs of the path MTU's size, and the fix tried when they fail). Each run's
# document and exit status go to $OUT for check_doctor_pair.py.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
cp /usr/share/fabtop-test/key /tmp/key && chmod 600 /tmp/key
# Registering memory needs more than the 8 MiB default (the doctor's memlock rule says so).
ulimit -l unlimited
if [ "$RXE_ROLE" = b ]; then
    ip link set eth0 mtu 4200
    fabtop serve --listen "$RXE_IP:7470" --key-file /tmp/key >"$OUT/serve.log" 2>&1 &
    srv=$!
    nc -l -p 7471 >/dev/null 2>&1 # until a is done
    kill $srv
    exit 0
fi
ip link set eth0 mtu 1500
n=0
until nc -w 1 "$RXE_PEER" 7470 </dev/null >/dev/null 2>&1; do
    n=$((n + 1)); [ $n -le 120 ] || { echo "b's agent never answered"; exit 1; }
    sleep 0.5
done
d() {
    name=$1
    shift
    fabtop doctor --peer "$RXE_PEER" --key-file /tmp/key --device rxe0 --json "$@" \
        >"$OUT/$name.json" 2>"$OUT/$name.err"
    echo $? >"$OUT/$name.rc"
    echo "--- $name (exit $(cat "$OUT/$name.rc"))"
    fabtop doctor --peer "$RXE_PEER" --key-file /tmp/key --device rxe0 "$@" 2>&1 | tail -8
}
d mismatch --gid-index 1 --path-mtu 4096
d gid --gid-index 9 --path-mtu 1024
ip link set eth0 mtu 4200
sleep 1
d matched --gid-index 1 --path-mtu 4096
echo done | nc -w 2 "$RXE_PEER" 7471 >/dev/null 2>&1
exit 0
