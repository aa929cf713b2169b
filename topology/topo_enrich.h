/* topo_enrich: the enrichers that add facts to a loaded model. Each is a const table
 * (struct topo_enricher, topo_load.h); topo_load.c lists them in the order they run. */
#ifndef TOPO_ENRICH_H
#define TOPO_ENRICH_H

#include "topology/topo_load.h"

/* sysfs: RDMA devices and ports (state, rate, GIDs and their types, netdevs), PCI link
 * speed/width and ACS, netdev MTU/speed/state; also adds software RDMA devices (rxe)
 * that hwloc does not attach to PCI. Applies to live and sysfs-root loads. */
extern const struct topo_enricher topo_enrich_sysfs;

/* libibverbs: per-port attributes only the verbs API reports (active and max MTU,
 * SM SL, LMC) and the GID types and netdevs from ibv_query_gid_ex. Live only. */
extern const struct topo_enricher topo_enrich_verbs;

/* NVML/CUDA loaded at run time: GPU CUDA index, name, memory, NVLink peers, dma-buf
 * support. Live only; a missing driver becomes a note, not an error. */
extern const struct topo_enricher topo_enrich_gpu;

/* Host facts for lint: user, capabilities, RLIMIT_MEMLOCK, nvidia_peermem, kernel. */
extern const struct topo_enricher topo_enrich_host;

#endif
