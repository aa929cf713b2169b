/* topo_lldp: the Ethernet neighbour of each netdev as lldpd sees it (liblldpctl over
 * lldpd's control socket): switch name, port id and description, management address,
 * VLAN. liblldpctl ships inside the lldpd package, so it is loaded at run time: a node
 * without lldpd still runs fabtop, and the status says what to install or start.
 * Every read from lldpd has a deadline; lldpd never hangs the caller. */
#ifndef TOPO_LLDP_H
#define TOPO_LLDP_H

#include "common/ft_err.h"
#include "topology/topo_model.h"

struct topo_lldp_opts {
    const char *socket; /* lldpd's control socket (lldpd -u); NULL: lldpd's default */
    int timeout_ms;     /* per read or write on the socket; 0: 2000 */
};

/* Fill m->fabric's LLDP part (neighbours, lldp_status, notes). Returns 0: lldpd missing,
 * stopped or slow is a status, not an error. RDMA NICs on Ethernet without a neighbour
 * get a note on why (DCBX, firmware LLDP agents). */
int topo_lldp_discover(struct topo_model *m, const struct topo_lldp_opts *o, struct ft_err *err);

#endif
