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
for g in $p/gids/*; do
    i=${g##*/}
    v=$(cat "$g")
    case $v in 0000:0000:0000:0000:0000:0000:0000:0000) continue ;; esac
    echo "gid[$i]=$v type=$(cat $p/gid_attrs/types/$i 2>/dev/null) ndev=$(cat $p/gid_attrs/ndevs/$i 2>/dev/null)"
done
exit 0
