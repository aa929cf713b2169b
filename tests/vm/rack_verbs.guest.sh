# Runs inside the rxe-vm guest (busybox sh): the sweep's rounds over TCP and verbs between
# three rank nodes on veth0's address (rxe0's netdev). The document lands in $OUT for
# rack_verbs.sh on the host; this script fails only when the program cannot run at all.
command -v rack_verbs >/dev/null || { echo "rack_verbs was not carried into the guest"; exit 1; }
rack_verbs "$OUT/sweep.json" 10.0.0.1 rxe0 >"$OUT/rack_verbs.log" 2>&1
echo $? >"$OUT/rack_verbs.rc"
tail -20 "$OUT/rack_verbs.log"
exit 0
