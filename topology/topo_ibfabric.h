/* topo_ibfabric: the InfiniBand subnet behind this node's IB ports, through umad MADs
 * (rdma-core's libibumad, libibmad, libibnetdisc): switches, CAs, links with width, speed
 * and state, the switch port each local port is cabled to, hop counts, routes walked
 * through the switches' forwarding tables, and switch port counters from PerfMgt MADs.
 * Every MAD has a bounded timeout; the route walk and the counters also share a
 * deadline. Fills model->fabric; problems become its status and notes, never a crash.
 * Not an enricher: it needs root (or /dev/infiniband/umad* access) and takes a MAD round
 * trip per port, so only `fabtop topo --fabric` asks for it. */
#ifndef TOPO_IBFABRIC_H
#define TOPO_IBFABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "topology/topo_model.h"

struct topo_ibfabric_opts {
    const char *ca;            /* discover from this CA only (NULL: every CA) */
    int ca_port;               /* and this port only (0: every IB port) */
    int timeout_ms;            /* per MAD; 0: 200 */
    int retries;               /* per MAD; < 0: 1 */
    double window_s;           /* seconds between the two counter samples; 0: one sample */
    bool no_counters;          /* skip the PerfMgt counters */
    const char *const *routes; /* "SRC,DST" each a LID, a GUID or a node description */
    int nroutes;               /* 0: from each local port to every other CA (see below) */
    int max_default_routes;    /* cap on those; 0: 32 */
    double deadline_s;         /* route walks and counters stop after this; 0: 30 s */
};

/* Discover and fill m->fabric (its IB part). Returns 0, or -EINVAL with err set when a
 * route does not parse (a usage error); anything the fabric does (no device, no
 * permission, a dead switch) is reported in m->fabric.ib_status and notes. */
int topo_ibfabric_discover(struct topo_model *m, const struct topo_ibfabric_opts *o,
                           struct ft_err *err);

/* A port's active lane speed from its PortInfo (pi) and Mellanox's ExtendedPortInfo (epi;
 * NULL or zeros when not read), with ext_speeds when the port's CapabilityMask has
 * IsExtendedSpeedsSupported: Gb/s a lane as the kernel's rate counts them (FDR 14, FDR10
 * 10), 0 when not known; its name ("FDR10", "EDR", "" when not known) into name. */
double topo_ib_active_lane(const uint8_t *pi, const uint8_t *epi, bool ext_speeds, char *name,
                           size_t len);

#endif
