/* topo_affinity: the GPU x NIC and GPU x GPU matrices with exactly the words and meanings
 * of `nvidia-smi topo -m` (NVML's topology levels), each GPU's nearest NIC(s), and the
 * locality (NUMA node, CPU set) of every device for pinning. Pure function of the model. */
#ifndef TOPO_AFFINITY_H
#define TOPO_AFFINITY_H

#include <stdbool.h>

#include "topology/topo_model.h"

/* Ordered from nearest to farthest, so a smaller value is a better path. */
enum topo_rel {
    TOPO_REL_SELF = 0, /* "X" */
    TOPO_REL_NV,       /* NVLink (or XGMI) between the two GPUs: "NV#" */
    TOPO_REL_PIX,      /* at most one PCIe switch between them */
    TOPO_REL_PXB,      /* several PCIe switches, no host bridge */
    TOPO_REL_PHB,      /* through one PCIe host bridge (the CPU's root complex) */
    TOPO_REL_NODE,     /* same NUMA node, different host bridges */
    TOPO_REL_SYS,      /* different NUMA nodes (SMP interconnect) */
};

struct topo_cell {
    enum topo_rel rel;
    int nv_links;       /* NV#: link count, -1 when it cannot be derived */
    double nv_bw_mbs;   /* NVLink bandwidth, MB/s (10^6 bytes/s), 0 if none */
    bool via_switch;    /* NVLink through NVSwitches */
    bool xgmi;          /* AMD Infinity Fabric (XGMI) rather than NVLink */
    bool same_package;  /* SYS/NODE detail: both in one CPU package (socket) */
    enum topo_rel pcie; /* the PCIe relation even when NV is shown */
};

struct topo_nearest {
    enum topo_rel rel; /* relation of the nearest NIC(s) */
    int n;             /* how many NICs tie for nearest */
    bool same_package; /* they sit in the GPU's own CPU package (socket) */
    int nics[16];      /* indices into the model's nics: those that can carry traffic first */
    enum topo_tristate up[16]; /* per entry: topo_nic_up */
    int nup;                   /* entries not known to be down */
    /* When every one of the nearest is down: the nearest NIC that is not (-1: none), its
     * relation and whether it is in the GPU's socket. */
    int alt;
    enum topo_rel alt_rel;
    bool alt_same_package;
};

struct topo_affinity {
    int ngpus;
    int ncols;                    /* NIC columns */
    int *cols;                    /* model nic index per column */
    bool rdma_only;               /* columns are RDMA NICs (false: no RDMA NIC, plain NICs shown) */
    struct topo_cell *gg;         /* ngpus x ngpus */
    struct topo_cell *gn;         /* ngpus x ncols */
    struct topo_cell *nn;         /* ncols x ncols */
    struct topo_nearest *nearest; /* per GPU */
};

/* Can the NIC carry traffic now? TOPO_YES when a port of it is ACTIVE (or ACTIVE_DEFER), or,
 * for a NIC without RDMA port states, a netdev of it is "up"; TOPO_NO when every port (or
 * netdev) whose state is known is down; TOPO_UNKNOWN when no state is known (hwloc exports
 * without Port<N>State). */
enum topo_tristate topo_nic_up(const struct topo_model *m, int nic);
/* One GPU's nearest NICs as the topology views print them: usable ones first, the others
 * marked ("mlx5_0, mlx5_1 DOWN (PIX)"), and, when all of them are down, the nearest usable
 * one ("; usable: mlx5_0 (SYS)"). */
void topo_nearest_str(const struct topo_model *m, const struct topo_nearest *ne, char *buf,
                      size_t len);

/* PCIe relation between two PCI functions (model pci indices). */
enum topo_rel topo_affinity_pci(const struct topo_model *m, int a, int b, bool *same_package);

int topo_affinity_compute(const struct topo_model *m, struct topo_affinity *out);
void topo_affinity_free(struct topo_affinity *a);

/* "X", "PIX", ...; for NV use topo_cell_str. */
const char *topo_rel_str(enum topo_rel r);
/* Cell text as nvidia-smi prints it: "NV6", "NV" (count unknown), "PIX", ...;
 * AMD links print as "XGMI" (rocm-smi's word). */
void topo_cell_str(const struct topo_cell *c, char *buf, size_t len);
/* Parse "PIX" etc. back (tests, --expect); -1 when unknown. */
int topo_rel_parse(const char *s);

#endif
