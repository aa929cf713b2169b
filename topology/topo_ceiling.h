/* topo_ceiling: the ceiling of a path, from what discovery found: the port's data rate
 * (line encoding taken off), the per-packet overheads of the transport for a message size,
 * the PCIe links of the NIC and GPU less TLP overhead, NVLink count x per-link speed. The
 * narrowest payload rate is the ceiling; every term is kept with its value, unit and kind so
 * that a result can carry it. Pure arithmetic over the model (docs/diagnosis.md). */
#ifndef TOPO_CEILING_H
#define TOPO_CEILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topology/topo_model.h"

/* What a term is. */
enum topo_ceil_kind {
    TOPO_CEIL_LIMIT = 0, /* a payload rate (Gb/s) that bounds the path: the narrowest wins */
    TOPO_CEIL_RATE,      /* an intermediate rate (signalling, link after encoding), not a bound */
    TOPO_CEIL_FACTOR,    /* a fraction applied to a rate (encoding, framing), unit "fraction" */
    TOPO_CEIL_SIZE,      /* a size in bytes that the arithmetic used (headers, MTU, MSS) */
    TOPO_CEIL_ASSUMED,   /* a value not discovered but assumed (PCIe max payload), with its unit */
};

#define TOPO_CEIL_MAX_TERMS 16

struct topo_ceil_term {
    char name[40]; /* "port data rate", "RoCE v2 framing", "NIC PCIe link" */
    enum topo_ceil_kind kind;
    double value;     /* NAN: not known (shown as n/a) */
    char unit[16];    /* "Gb/s", "GB/s", "fraction", "B" */
    char detail[160]; /* how it was derived, one line: "56 Gb/s 4X FDR x 64/66" */
};

struct topo_ceiling {
    bool valid;    /* at least one LIMIT term was found */
    double gbps;   /* the ceiling: Gb/s (10^9 bit/s) of payload, one direction */
    int narrowest; /* index into terms of the LIMIT term that sets it, -1 when !valid */
    char path[96]; /* what the ceiling is of: "mlx5_0 port 1 RoCE v2, 1 MiB messages" */
    int nterms;
    struct topo_ceil_term terms[TOPO_CEIL_MAX_TERMS];
};

/* Transports whose framing is known. */
enum topo_ceil_proto {
    TOPO_CEIL_ROCE_V2 = 0, /* RDMA over UDP/IP over Ethernet */
    TOPO_CEIL_IB,          /* InfiniBand, local (LRH) or routed (LRH + GRH) */
    TOPO_CEIL_TCP,         /* TCP over IP over Ethernet */
};

/* RDMA operations: what crosses the link in the data direction and in the other one. */
enum topo_ceil_op {
    TOPO_CEIL_WRITE = 0, /* RDMA WRITE: RETH once per message, ACKs come back */
    TOPO_CEIL_SEND,      /* SEND: no RETH, ACKs come back */
    TOPO_CEIL_READ,      /* RDMA READ: the request goes out, the data comes back as responses */
};

/* How a transport frames a message. */
struct topo_ceil_wire {
    enum topo_ceil_proto proto;
    enum topo_ceil_op op; /* RDMA only */
    int mtu;              /* RDMA: path MTU, payload bytes per packet (256..4096);
                           * TCP: the IP MTU, bytes (576..65535) */
    uint64_t msg_bytes;   /* message (TCP: write) size, bytes, > 0 */
    bool vlan;            /* Ethernet frames carry an 802.1Q tag (4 B) */
    bool ipv6;            /* IPv6 (40 B header) instead of IPv4 (20 B) */
    bool grh;             /* InfiniBand: routed, every packet carries a GRH (40 B) */
    bool no_timestamps;   /* TCP: without the timestamp option (MSS = MTU - 40) */
    bool bidir;           /* the other direction carries a like stream: its ACKs (or READ
                           * requests) share this direction's link and are counted in */
    bool mtu_assumed;     /* mtu was not discovered (recorded as an assumed term) */
    bool proto_assumed;   /* the port's link layer was not discovered: proto is a guess */
};

/* The payload fraction of a wire: payload bytes / bytes on the link in the data direction
 * (with bidir: plus the other stream's acknowledgements). Fills terms (framing sizes, the
 * packets per message, the reverse direction) when t is not NULL. 0 or -EINVAL. */
int topo_ceiling_wire_fraction(const struct topo_ceil_wire *w, double *fraction,
                               struct topo_ceiling *t);

/* A port's data rate from what sysfs `rate` says ("40 Gb/sec (4X QDR)": 40 and "QDR"),
 * taken as it is (the kernel already multiplied lanes by lane speed): InfiniBand SDR, DDR
 * and QDR carry 8b/10b (x 8/10), FDR 64b/66b (x 64/66); FDR10, EDR and later and every
 * Ethernet rate are data rates already. detail gets the derivation. 0 or -EINVAL. */
int topo_ceiling_port_data(double rate_gbps, const char *speed, enum topo_link_layer ll,
                           double *data_gbps, char *detail, size_t len);

/* PCIe max payload size assumed when the model does not record one, bytes, and the
 * overhead of one TLP around its payload, bytes (STP token 4 + 4-DW header 16 + LCRC 4). */
#define TOPO_CEIL_PCIE_MPS          256
#define TOPO_CEIL_PCIE_TLP_OVERHEAD 24

/* "Gen1".."Gen6" for a per-lane rate in GT/s, "" when it is none of them. */
const char *topo_ceiling_pcie_gen(double gts);

/* One PCIe link's payload rate, Gb/s per direction: link_gbs (hwloc's, GB/s after line
 * encoding) when > 0, else from gts x width with the generation's encoding (Gen1-2 8b/10b,
 * Gen3-5 128b/130b, Gen6 FLITs moving 236 of 256 bytes); then x mps / (mps + TLP overhead)
 * (Gen6 FLIT mode: no STP and LCRC, 16 B header). Gen6 ignores link_gbs when gts and width
 * are known. *link_out (may be NULL) gets the link's GB/s after encoding. 0 or -EINVAL. */
int topo_ceiling_pcie(double link_gbs, double gts, int width, int mps, double *payload_gbps,
                      double *link_out);

/* Add a term; returns its index, or -1 when terms are full. */
int topo_ceiling_add(struct topo_ceiling *c, const char *name, enum topo_ceil_kind kind,
                     double value, const char *unit, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Set gbps, narrowest and valid from the LIMIT terms. */
void topo_ceiling_settle(struct topo_ceiling *c);

/* The wire fabtop assumes for a port (or a NIC's netdev) when a run says nothing: RoCE v2
 * WRITE on an Ethernet RDMA port, InfiniBand WRITE on an IB port, TCP on a plain network
 * function; MTU from the port's active MTU (the netdev's MTU for TCP), 1 MiB messages.
 * 0, or -ENOENT when the MTU is unknown. */
int topo_ceiling_default_wire(const struct topo_model *m, int nic, int port,
                              struct topo_ceil_wire *w);

/* The ceiling of a NIC port (port >= 0) or of a plain network function (port -1: its first
 * netdev) for wire w (NULL: topo_ceiling_default_wire): port data rate x wire fraction, the
 * NIC's PCIe link and the PCIe switch uplinks above it. 0 (out->valid says whether anything
 * bounded it) or -EINVAL. */
int topo_ceiling_nic(const struct topo_model *m, int nic, int port, const struct topo_ceil_wire *w,
                     struct topo_ceiling *out);

/* The ceiling of one netdev's path for wire w (TCP over it: its speed x the wire fraction,
 * its NIC's PCIe link and the switch uplinks above, when it belongs to a NIC). 0 or -EINVAL. */
int topo_ceiling_netdev(const struct topo_model *m, int netdev, const struct topo_ceil_wire *w,
                        struct topo_ceiling *out);

/* A GPU's host path (copies to and from host memory): its PCIe link and the switch uplinks
 * above it, less TLP overhead. 0 or -EINVAL. */
int topo_ceiling_gpu_host(const struct topo_model *m, int gpu, struct topo_ceiling *out);

/* Several GPUs' host paths used at once (copies on every GPU): the sum of each one's host
 * ceiling, bounded by a PCIe switch uplink that several share. 0 or -EINVAL. */
int topo_ceiling_gpus_host(const struct topo_model *m, const int *gpus, int n,
                           struct topo_ceiling *out);

/* A GPU's NVLink (or XGMI) reach: the sum over its links of count x per-link speed (hwloc's
 * bandwidth, per direction), one LIMIT per peer and the total as the ceiling of traffic to
 * all peers at once. out->valid is false when the model records no link. 0 or -EINVAL. */
int topo_ceiling_gpu_nvlink(const struct topo_model *m, int gpu, struct topo_ceiling *out);

/* A measured goodput (Gb/s of payload) as a percentage of the ceiling; NAN when the ceiling
 * is not valid or the goodput is not a number >= 0. */
double topo_ceiling_percent(const struct topo_ceiling *c, double goodput_gbps);

const char *topo_ceil_kind_str(enum topo_ceil_kind k);   /* "limit", "rate", ... */
const char *topo_ceil_proto_str(enum topo_ceil_proto p); /* "RoCE v2", "InfiniBand", "TCP" */

#endif
