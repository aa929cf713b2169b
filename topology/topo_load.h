/* topo_load: builds a topo_model from one source (live system, hwloc XML, captured
 * sysfs root, or fabtop's JSON snapshot), then runs the enrichers that apply to it
 * (sysfs RDMA/PCI/netdev facts, libibverbs, GPU libraries, host facts). Sources and
 * enrichers are const tables of functions in one registry (topo_load.c). */
#ifndef TOPO_LOAD_H
#define TOPO_LOAD_H

#include <stdbool.h>

#include "common/ft_err.h"
#include "topology/topo_model.h"

struct topo_load_opts {
    const char *input;      /* hwloc XML or fabtop JSON snapshot; NULL: live or sysfs_root */
    const char *sysfs_root; /* captured tree holding sys/ (and proc/); NULL: "/" */
    bool no_verbs;          /* skip libibverbs (tests on captured trees) */
    bool no_gpu_libs;       /* skip NVML/CUDA loading */
    /* The fabtop-hwloc-xml helper (topo_xmlchild.h): an hwloc XML input is parsed there, so
     * that a crash of libhwloc on a malformed file cannot take this process down. NULL:
     * parse in this process (tests, fuzzing, callers without the helper). */
    const char *xml_helper;
};

/* One way of building the model. */
struct topo_source {
    const char *name; /* "live", "hwloc-xml", "sysfs-root", "json" */
    enum topo_source_kind kind;
    /* Build the skeleton (packages, NUMA nodes, PCI tree, GPUs, NICs, ports, netdevs). */
    int (*load)(struct topo_model *m, const struct topo_load_opts *o, struct ft_err *err);
};

/* Adds facts to a loaded model; never fails the load (problems become notes).
 * applies() decides from the options (live: no input and no sysfs_root; sysfs root;
 * file input), never from m->source, which a snapshot sets to where it was taken. */
struct topo_enricher {
    const char *name;
    bool (*applies)(const struct topo_model *m, const struct topo_load_opts *o);
    void (*enrich)(struct topo_model *m, const struct topo_load_opts *o);
};

/* Load per the options; on failure *out is NULL and err names the input and the fix. */
int topo_load(const struct topo_load_opts *o, struct topo_model **out, struct ft_err *err);

/* Sources (topo_hwloc.c, topo_json.c). */
extern const struct topo_source topo_source_live;
extern const struct topo_source topo_source_xml;
extern const struct topo_source topo_source_sysfs;
extern const struct topo_source topo_source_json;

/* Derived structure filled after every load (also after a JSON load, so a snapshot
 * never disagrees with the rules): bridge roles, adapters, netdev<->port links. */
void topo_model_finalize(struct topo_model *m);

/* GPU recognition shared by the sources: is this PCI function a GPU or accelerator
 * by class and vendor alone? */
bool topo_pci_is_gpu_class(uint16_t vendor_id, uint16_t class_id);
/* Is this a NIC function by class (network controller, base class 0x02)? */
bool topo_pci_is_nic_class(uint16_t class_id);
const char *topo_vendor_short(uint16_t vendor_id);

#endif
