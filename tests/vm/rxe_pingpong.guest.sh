# Runs inside the rxe-vm guest: real verbs traffic on rxe0 (server and client in this guest,
# rxe loops the packets back), then the port's hw_counters must have moved. Proves the VM
# itself works, apart from what fabtop reports about it.
fail=0
port=/sys/class/infiniband/rxe0/ports/1
ibv_rc_pingpong -d "$RXE_DEV" -g "$RXE_GID_INDEX" -n 500 >/tmp/srv.log 2>&1 &
srv=$!
# Wait until the server listens on its TCP side channel (18515) before starting the client.
n=0
until netstat -ltn 2>/dev/null | grep -q ':18515 '; do
    n=$((n + 1))
    [ $n -le 200 ] || { echo "FAIL: ibv_rc_pingpong server never listened"; cat /tmp/srv.log; exit 1; }
    sleep 0.05
done
if timeout 60 ibv_rc_pingpong -d "$RXE_DEV" -g "$RXE_GID_INDEX" -n 500 127.0.0.1 >/tmp/cli.log 2>&1; then
    crc=0
else
    crc=$?
fi
wait $srv
src=$?
cat /tmp/srv.log /tmp/cli.log
if [ $crc = 0 ] && [ $src = 0 ]; then echo "PASS: ibv_rc_pingpong over rxe0"; else
    echo "FAIL: ibv_rc_pingpong over rxe0 (server exit $src, client exit $crc)"; fail=1; fi
sent=$(cat $port/hw_counters/sent_pkts 2>/dev/null || echo 0)
rcvd=$(cat $port/hw_counters/rcvd_pkts 2>/dev/null || echo 0)
if [ "$sent" -gt 0 ] && [ "$rcvd" -gt 0 ]; then echo "PASS: hw_counters sent_pkts=$sent rcvd_pkts=$rcvd"; else
    echo "FAIL: hw_counters did not move (sent_pkts=$sent rcvd_pkts=$rcvd)"; fail=1; fi
exit $fail
