#!/bin/sh
# rack_rsh.sh: an rsh agent for OpenMPI's mpirun on a rack of rack_lib.sh: "HOST COMMAND..."
# runs the command (one shell command line, as ssh would) on that host: in its network
# namespace, with its hostname (UTS namespace) and its private /tmp. Options before HOST
# (ssh's -x and the like) are ignored.
#   mpirun --host rk-h1,rk-h2 --mca plm_rsh_agent tests/rack/rack_rsh.sh \
#     --mca oob_tcp_if_include 10.79.0.0/24 --mca btl_tcp_if_include 10.79.0.0/24 ...
RACK_LIB_DIR=$(cd "$(dirname "$0")" && pwd)
. "$RACK_LIB_DIR/rack_lib.sh"
while [ $# -gt 0 ]; do
    case $1 in
    -*) shift ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || {
    echo "rack_rsh.sh: usage: rack_rsh.sh HOST COMMAND..." >&2
    exit 64
}
h=$1
shift
rack_enter "$h" sh -c "$*"
