# Runs inside the rxe-vm guest (busybox sh): fabtop topo, JSON and text, into $OUT.
# The host side (check_topo_live.py) judges the results; this script only fails when it
# cannot run fabtop at all.
command -v fabtop >/dev/null || { echo "fabtop was not carried into the guest"; exit 1; }
fabtop topo --json >"$OUT/topo.json" 2>"$OUT/topo.json.err"
echo $? >"$OUT/topo.json.rc"
fabtop topo >"$OUT/topo.txt" 2>"$OUT/topo.txt.err"
echo $? >"$OUT/topo.txt.rc"
echo "--- fabtop topo (exit $(cat "$OUT/topo.txt.rc"))"
cat "$OUT/topo.txt" "$OUT/topo.txt.err"
echo "--- fabtop topo --json (exit $(cat "$OUT/topo.json.rc"))"
cat "$OUT/topo.json" "$OUT/topo.json.err"
echo "--- what the kernel says (for comparison)"
p=/sys/class/infiniband/rxe0/ports/1
echo "state=$(cat $p/state) phys_state=$(cat $p/phys_state) link_layer=$(cat $p/link_layer)"
# rxe has 1024 GID slots: one grep finds the used ones (a fork per slot is slow under TCG).
grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$' $p/gids/* | while IFS=: read -r f v; do
    i=${f##*/}
    echo "gid[$i]=$v type=$(cat "$p/gid_attrs/types/$i") ndev=$(cat "$p/gid_attrs/ndevs/$i")"
done
exit 0
