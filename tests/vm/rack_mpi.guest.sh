# Runs inside the rxe-vm guest (busybox sh): `fabtop sweep` under OpenMPI's real mpirun
# (orterun, carried in with its components), three ranks on this node, each on the rail of
# its local rank: rxe0 on veth0, so the rounds run over verbs as well as TCP (plm isolated:
# one node, no rsh agent to start daemons elsewhere). The document
# and mpirun's output land in $OUT for rack_mpi.sh on the host.
command -v orterun >/dev/null || { echo "orterun was not carried into the guest"; exit 1; }
command -v fabtop-sweep >/dev/null || { echo "fabtop-sweep was not carried into the guest"; exit 1; }
# Registering memory needs more than the 8 MiB default.
ulimit -l unlimited
# OpenMPI as the host has it: its components, help texts and PMIx's beside the libraries.
export OPAL_PREFIX=/usr
orterun --allow-run-as-root --oversubscribe --bind-to none -np 3 \
    --mca plm isolated --mca btl self,tcp --mca btl_tcp_if_include lo \
    --mca oob_tcp_if_include lo \
    fabtop sweep --listen "$RXE_IP" --pattern pairs --duration 0.5 --publish none \
    -o "$OUT/sweep.json" >"$OUT/mpirun.out" 2>"$OUT/mpirun.err"
echo $? >"$OUT/mpirun.rc"
tail -15 "$OUT/mpirun.out"
tail -15 "$OUT/mpirun.err"
exit 0
