/* topo_hwloc: the hwloc-backed sources (live system, hwloc XML v1/v2, captured sysfs
 * root). hwloc gives the CPU side, the PCI tree with all I/O objects and the OS devices;
 * this file turns that into fabtop's model and recognises GPUs and NICs by PCI address,
 * class and OS devices, never by names such as mlx5_0 that differ between OS images. */
#include "topology/topo_load.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

/* Per-load state: the hwloc handle and the object behind each model PCI index. */
struct hw_ctx {
    hwloc_topology_t topo;
    struct topo_model *m;
    const struct topo_load_opts *o;
    const char *root;  /* sysfs/proc root for nvidia proc files, NULL for XML */
    hwloc_obj_t *objs; /* objs[pci index] */
    int nobjs;
};

/* ---- environment handling for HWLOC_FSROOT and friends ---- */

struct env_save {
    const char *name;
    char *old; /* NULL when it was unset */
};

static void env_push(struct env_save *s, const char *name, const char *value)
{
    const char *old = getenv(name);
    s->name = name;
    s->old = old ? xalloc_strdup(old) : NULL;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static void env_pop(struct env_save *s)
{
    if (s->old) {
        setenv(s->name, s->old, 1);
        free(s->old);
    } else {
        unsetenv(s->name);
    }
}

/* ---- recognition tables ---- */

const char *topo_vendor_short(uint16_t vendor_id)
{
    switch (vendor_id) {
    case 0x10de:
        return "NVIDIA";
    case 0x1002:
        return "AMD";
    case 0x8086:
        return "Intel";
    case 0x15b3:
        return "Mellanox";
    case 0x1d0f:
        return "Amazon";
    case 0x14e4:
        return "Broadcom";
    case 0x1da3:
        return "Habana";
    case 0x17db:
        return "HPE";
    default:
        return "";
    }
}

/* PCI classes (PCI Code and ID Assignment spec): 0x0300 VGA, 0x0302 3D controller,
 * 0x0380 other display controller, 0x1200 processing accelerator. A BMC's VGA
 * (ASPEED, Matrox) has class 0x0300 too, hence the vendor check. */
bool topo_pci_is_gpu_class(uint16_t vendor_id, uint16_t class_id)
{
    bool display = class_id == 0x0300 || class_id == 0x0302 || class_id == 0x0380;
    switch (vendor_id) {
    case 0x10de: /* NVIDIA */
        return display;
    case 0x1002: /* AMD: Instinct MI300 uses 0x1200 */
        return display || class_id == 0x1200;
    case 0x8086: /* Intel data-center GPUs (0x0380, 0x0302); 0x0300 is usually an iGPU */
        return class_id == 0x0380 || class_id == 0x0302;
    case 0x1da3: /* Habana Gaudi */
        return class_id == 0x1200;
    default:
        return false;
    }
}

bool topo_pci_is_nic_class(uint16_t class_id)
{
    /* 0x02xx network controllers (0x0200 Ethernet, 0x0207 InfiniBand, 0x0208 fabric),
     * 0x0c06 InfiniBand serial bus controller (old HCAs). */
    return (class_id >> 8) == 0x02 || class_id == 0x0c06;
}

static bool is_nvswitch(hwloc_obj_t o)
{
    if (o->subtype && !strcmp(o->subtype, "NVSwitch"))
        return true;
    return o->attr->pcidev.vendor_id == 0x10de && o->attr->pcidev.class_id == 0x0680;
}

/* OS device names or subtypes that only GPU/accelerator drivers create. */
static bool osdev_is_gpu(hwloc_obj_t os)
{
    static const char *const subtypes[] = {"CUDA", "NVML", "OpenCL", "RSMI", "LevelZero"};
    static const char *const prefixes[] = {"cuda", "nvml", "rsmi", "opencl", "ze"};
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
        os->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
        return false;
    if (os->subtype)
        for (size_t i = 0; i < sizeof(subtypes) / sizeof(*subtypes); i++)
            if (!strcmp(os->subtype, subtypes[i]))
                return true;
    if (!os->name)
        return false;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
        size_t n = strlen(prefixes[i]);
        if (!strncmp(os->name, prefixes[i], n) && isdigit((unsigned char)os->name[n]))
            return true;
    }
    return false;
}

/* ---- packages and NUMA nodes ---- */

static void list_cpuset(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (!set || hwloc_bitmap_iszero(set))
        buf[0] = '\0';
    else
        hwloc_bitmap_list_snprintf(buf, len, set);
}

/* An object's OS number, -1 when hwloc does not know it (HWLOC_UNKNOWN_INDEX, an XML object
 * without os_index) or it is beyond any machine. */
static int os_index(hwloc_obj_t o)
{
    return o->os_index <= TOPO_MAX_INDEX ? (int)o->os_index : -1;
}

/* The model's index of a package: packages are taken at hwloc's one package depth; one
 * elsewhere (a malformed XML nests a package in another, and hwloc then counts none at any
 * one depth) has no index, rather than one that names no entry. */
static int package_index(struct hw_ctx *c, hwloc_obj_t pk)
{
    if (!pk || pk->logical_index >= (unsigned)c->m->npackages ||
        hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, pk->logical_index) != pk)
        return -1;
    return (int)pk->logical_index;
}

static void add_packages_and_numa(struct hw_ctx *c)
{
    int npk = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_PACKAGE);
    for (int i = 0; i < npk; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, (unsigned)i);
        int k = topo_model_add_package(c->m);
        struct topo_package *p = &c->m->packages[k];
        p->os_index = os_index(o);
        const char *model = hwloc_obj_get_info_by_name(o, "CPUModel");
        snprintf(p->cpu_model, sizeof(p->cpu_model), "%s", model ? model : "");
        for (size_t n = strlen(p->cpu_model); n > 0 && isspace((unsigned char)p->cpu_model[n - 1]);)
            p->cpu_model[--n] = '\0';
        list_cpuset(o->cpuset, p->cpuset, sizeof(p->cpuset));
    }
    int nn = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nn; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        int k = topo_model_add_numa(c->m);
        struct topo_numa *n = &c->m->numa[k];
        n->os_index = os_index(o);
        n->mem_bytes = o->attr->numanode.local_memory;
        snprintf(n->subtype, sizeof(n->subtype), "%s", o->subtype ? o->subtype : "");
        list_cpuset(o->cpuset, n->cpuset, sizeof(n->cpuset));
        if (o->subtype && !strcmp(o->subtype, "GPUMemory"))
            n->kind = TOPO_NUMA_GPU_MEMORY;
        else if (hwloc_bitmap_iszero(o->cpuset))
            n->kind = TOPO_NUMA_OTHER;
        else
            n->kind = TOPO_NUMA_CPU;
        n->package =
            package_index(c, hwloc_get_ancestor_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, o));
    }
}

/* The NUMA node (os index) of a normal object when exactly one CPU NUMA node is local. */
static int single_cpu_numa(struct hw_ctx *c, hwloc_obj_t anc)
{
    int found = -1, count = 0;
    for (int i = 0; i < c->m->nnuma; i++) {
        const struct topo_numa *n = &c->m->numa[i];
        if (n->kind != TOPO_NUMA_CPU)
            continue;
        if (n->os_index >= 0 && anc->nodeset &&
            hwloc_bitmap_isset(anc->nodeset, (unsigned)n->os_index)) {
            found = n->os_index;
            count++;
        }
    }
    return count == 1 ? found : -1;
}

/* ---- PCI tree ---- */

static int add_pci_obj(struct hw_ctx *c, hwloc_obj_t o, int parent)
{
    int k = topo_model_add_pci(c->m);
    struct topo_pci *p = &c->m->pci[k];
    p->parent = parent;
    if (k >= c->nobjs) {
        c->nobjs = c->nobjs ? 2 * c->nobjs : 64;
        c->objs = xalloc_resize(c->objs, (size_t)c->nobjs * sizeof(*c->objs));
    }
    c->objs[k] = o;
    o->userdata = (void *)(intptr_t)(k + 1);

    const struct hwloc_pcidev_attr_s *pa = NULL;
    if (o->type == HWLOC_OBJ_BRIDGE) {
        const struct hwloc_bridge_attr_s *ba = &o->attr->bridge;
        p->bus_first = ba->downstream.pci.secondary_bus;
        p->bus_last = ba->downstream.pci.subordinate_bus;
        if (ba->upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
            p->kind = TOPO_PCI_HOSTBRIDGE;
            p->addr.domain = ba->downstream.pci.domain;
            p->addr.bus = ba->downstream.pci.secondary_bus;
        } else {
            p->kind = TOPO_PCI_BRIDGE;
            pa = &ba->upstream.pci;
        }
    } else {
        p->kind = TOPO_PCI_DEVICE;
        pa = &o->attr->pcidev;
    }
    if (pa) {
        p->addr.domain = pa->domain;
        p->addr.bus = pa->bus;
        p->addr.dev = pa->dev;
        p->addr.func = pa->func;
        p->vendor_id = pa->vendor_id;
        p->device_id = pa->device_id;
        p->class_id = pa->class_id;
        if (pa->vendor_id || pa->device_id)
            p->valid |= TOPO_PCI_V_IDS;
        if (pa->linkspeed > 0) {
            p->link_gbs = pa->linkspeed;
            p->valid |= TOPO_PCI_V_LINK_GBS;
        }
    }
    const char *s;
    if ((s = hwloc_obj_get_info_by_name(o, "PCIVendor")))
        snprintf(p->vendor_name, sizeof(p->vendor_name), "%s", s);
    if ((s = hwloc_obj_get_info_by_name(o, "PCIDevice")))
        snprintf(p->device_name, sizeof(p->device_name), "%s", s);
    if ((s = hwloc_obj_get_info_by_name(o, "PCISlot")))
        snprintf(p->slot, sizeof(p->slot), "%s", s);
    if (o->subtype)
        snprintf(p->subtype, sizeof(p->subtype), "%s", o->subtype);
    else if (p->kind == TOPO_PCI_DEVICE && is_nvswitch(o))
        snprintf(p->subtype, sizeof(p->subtype), "NVSwitch");

    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(c->topo, o);
    if (anc) {
        list_cpuset(anc->cpuset, p->cpuset, sizeof(p->cpuset));
        p->numa = single_cpu_numa(c, anc);
        p->package =
            package_index(c, anc->type == HWLOC_OBJ_PACKAGE
                                 ? anc
                                 : hwloc_get_ancestor_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, anc));
    }
    return k;
}

static void walk_io(struct hw_ctx *c, hwloc_obj_t parent_obj, int parent_pci)
{
    for (hwloc_obj_t ch = parent_obj->io_first_child; ch; ch = ch->next_sibling) {
        if (ch->type == HWLOC_OBJ_BRIDGE || ch->type == HWLOC_OBJ_PCI_DEVICE) {
            int k = add_pci_obj(c, ch, parent_pci);
            walk_io(c, ch, k);
        }
    }
}

static void walk_normal(struct hw_ctx *c, hwloc_obj_t o)
{
    walk_io(c, o, -1);
    for (hwloc_obj_t ch = o->first_child; ch; ch = ch->next_sibling)
        walk_normal(c, ch);
}

/* ---- GPUs ---- */

static int cmp_bdf(const struct topo_model *m, int a, int b)
{
    const struct topo_bdf *x = &m->pci[a].addr, *y = &m->pci[b].addr;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    if (x->bus != y->bus)
        return x->bus < y->bus ? -1 : 1;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (int)x->func - (int)y->func;
}

static const struct topo_model *sort_model;
static int cmp_pci_idx(const void *a, const void *b)
{
    return cmp_bdf(sort_model, *(const int *)a, *(const int *)b);
}

/* GPU memory NUMA node naming this PCI address (hwloc info "PCIBusID"). */
static int gpu_memory_numa_for(struct hw_ctx *c, int pci)
{
    char bdf[32];
    topo_bdf_str(&c->m->pci[pci].addr, bdf, sizeof(bdf));
    int nn = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nn; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        const char *bus = hwloc_obj_get_info_by_name(o, "PCIBusID");
        if (o->subtype && !strcmp(o->subtype, "GPUMemory") && bus && !strcasecmp(bus, bdf))
            return os_index(o);
    }
    return -1;
}

/* The NVIDIA driver lists its GPUs in /proc/driver/nvidia/gpus/<bdf>/, even when the
 * PCI sysfs is pruned (as on the POWER9 capture). */
static bool nvidia_proc_lists(struct hw_ctx *c, int pci)
{
    if (!c->root)
        return false;
    char bdf[32], rel[96];
    topo_bdf_str(&c->m->pci[pci].addr, bdf, sizeof(bdf));
    snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s", bdf);
    return fsutil_exists(c->root, rel);
}

static void append_word(char *buf, size_t len, const char *w)
{
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "%s%s", n ? " " : "", w);
}

static int name_index(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) || !isdigit((unsigned char)name[n]))
        return -1;
    char *end;
    long v = strtol(name + n, &end, 10);
    return *end ? -1 : (int)v;
}

static void fill_gpu_from_osdevs(struct hw_ctx *c, struct topo_gpu *g, hwloc_obj_t dev)
{
    for (hwloc_obj_t os = dev->io_first_child; os; os = os->next_sibling) {
        if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name)
            continue;
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
            os->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
            continue;
        append_word(g->osdevs, sizeof(g->osdevs), os->name);
        int idx;
        if ((idx = name_index(os->name, "cuda")) >= 0) {
            g->cuda_index = idx;
            g->valid |= TOPO_GPU_V_CUDA;
        } else if ((idx = name_index(os->name, "nvml")) >= 0) {
            g->nvml_index = idx;
            g->valid |= TOPO_GPU_V_NVML;
        } else if ((idx = name_index(os->name, "rsmi")) >= 0) {
            g->rsmi_index = idx;
            g->valid |= TOPO_GPU_V_RSMI;
        }
        const char *s;
        if (!g->model[0] && (s = hwloc_obj_get_info_by_name(os, "GPUModel")))
            snprintf(g->model, sizeof(g->model), "%s", s);
        if (!g->uuid[0] && ((s = hwloc_obj_get_info_by_name(os, "NVIDIAUUID")) ||
                            (s = hwloc_obj_get_info_by_name(os, "AMDUUID"))))
            snprintf(g->uuid, sizeof(g->uuid), "%s", s);
        /* CUDAGlobalMemorySize, OpenCLGlobalMemorySize and RSMIVRAMSize are in KiB (an
         * MI250X GCD shows RSMIVRAMSize=67108864, its 64 GiB of HBM). */
        if (!(g->valid & TOPO_GPU_V_MEM)) {
            unsigned long long v = 0;
            if ((s = hwloc_obj_get_info_by_name(os, "CUDAGlobalMemorySize")) ||
                (s = hwloc_obj_get_info_by_name(os, "OpenCLGlobalMemorySize")) ||
                (s = hwloc_obj_get_info_by_name(os, "RSMIVRAMSize")))
                v = strtoull(s, NULL, 10) * 1024ull;
            if (v) {
                g->mem_bytes = v;
                g->valid |= TOPO_GPU_V_MEM;
            }
        }
    }
    (void)c;
}

static void add_gpu_if(struct hw_ctx *c, int pci)
{
    hwloc_obj_t dev = c->objs[pci];
    const struct topo_pci *p = &c->m->pci[pci];
    if (p->subtype[0] && !strcmp(p->subtype, "NVSwitch"))
        return;
    const char *how = NULL;
    for (hwloc_obj_t os = dev->io_first_child; os && !how; os = os->next_sibling)
        if (os->type == HWLOC_OBJ_OS_DEVICE && osdev_is_gpu(os))
            how = "osdev";
    if (!how && (p->valid & TOPO_PCI_V_IDS) && topo_pci_is_gpu_class(p->vendor_id, p->class_id))
        how = "pci-class";
    int memnuma = gpu_memory_numa_for(c, pci);
    if (!how && memnuma >= 0)
        how = "gpu-memory-numa";
    if (!how && nvidia_proc_lists(c, pci))
        how = "nvidia-proc";
    if (!how)
        return;

    int k = topo_model_add_gpu(c->m);
    struct topo_gpu *g = &c->m->gpus[k];
    g->pci = pci;
    snprintf(g->found_by, sizeof(g->found_by), "%s", how);
    const char *vendor = topo_vendor_short(p->vendor_id);
    if (!*vendor && (memnuma >= 0 || !strcmp(how, "nvidia-proc")))
        vendor = "NVIDIA";
    snprintf(g->vendor, sizeof(g->vendor), "%s", vendor);
    fill_gpu_from_osdevs(c, g, dev);
    if (!g->model[0] && p->device_name[0])
        snprintf(g->model, sizeof(g->model), "%s", p->device_name);
    if (!g->model[0] && (p->valid & TOPO_PCI_V_IDS))
        snprintf(g->model, sizeof(g->model), "%04x:%04x", p->vendor_id, p->device_id);
    g->mem_numa = memnuma;
    if (memnuma >= 0) {
        for (int i = 0; i < c->m->nnuma; i++)
            if (c->m->numa[i].os_index == memnuma) {
                c->m->numa[i].gpu = k;
                if (!(g->valid & TOPO_GPU_V_MEM)) {
                    g->mem_bytes = c->m->numa[i].mem_bytes;
                    g->valid |= TOPO_GPU_V_MEM;
                }
            }
    }
}

/* ---- NICs, ports, netdevs ---- */

static void port_from_infos(struct hw_ctx *c, int nic, hwloc_obj_t os)
{
    for (int pn = 1; pn < 64; pn++) {
        char key[48];
        snprintf(key, sizeof(key), "Port%dState", pn);
        const char *st = hwloc_obj_get_info_by_name(os, key);
        if (!st)
            break;
        int k = topo_model_add_port(c->m);
        struct topo_port *p = &c->m->ports[k];
        struct topo_nic *n = &c->m->nics[nic];
        if (n->first_port < 0)
            n->first_port = k;
        n->nports++;
        p->nic = nic;
        p->num = pn;
        p->state = (enum topo_port_state)atoi(st);
        p->valid |= TOPO_PORT_V_STATE;
        const char *s;
        snprintf(key, sizeof(key), "Port%dLID", pn);
        if ((s = hwloc_obj_get_info_by_name(os, key))) {
            p->lid = (uint32_t)strtoul(s, NULL, 0);
            snprintf(key, sizeof(key), "Port%dLMC", pn);
            if ((s = hwloc_obj_get_info_by_name(os, key)))
                p->lmc = atoi(s);
            p->valid |= TOPO_PORT_V_LID;
        }
        for (int gi = 0; gi < 256; gi++) {
            snprintf(key, sizeof(key), "Port%dGID%d", pn, gi);
            if (!(s = hwloc_obj_get_info_by_name(os, key)))
                continue;
            struct topo_gid g = {.index = gi, .type = TOPO_GID_IB};
            snprintf(g.gid, sizeof(g.gid), "%s", s);
            topo_port_add_gid(p, &g);
            p->valid |= TOPO_PORT_V_GIDS;
        }
    }
}

static void add_nic_if(struct hw_ctx *c, int pci)
{
    hwloc_obj_t dev = c->objs[pci];
    const struct topo_pci *pp = &c->m->pci[pci];
    hwloc_obj_t ofed = NULL;
    bool has_net = false;
    for (hwloc_obj_t os = dev->io_first_child; os; os = os->next_sibling) {
        if (os->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && !ofed)
            ofed = os;
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK)
            has_net = true;
    }
    bool nic_class = (pp->valid & TOPO_PCI_V_IDS) && topo_pci_is_nic_class(pp->class_id);
    if (!ofed && !has_net && !nic_class)
        return;
    if (topo_model_gpu_of_pci(c->m, pci) >= 0)
        return;
    int k = topo_model_add_nic(c->m);
    struct topo_nic *n = &c->m->nics[k];
    n->pci = pci;
    if (ofed) {
        snprintf(n->rdma_dev, sizeof(n->rdma_dev), "%s", ofed->name ? ofed->name : "");
        const char *s;
        if ((s = hwloc_obj_get_info_by_name(ofed, "NodeGUID")))
            snprintf(n->node_guid, sizeof(n->node_guid), "%s", s);
        if ((s = hwloc_obj_get_info_by_name(ofed, "SysImageGUID")))
            snprintf(n->sys_image_guid, sizeof(n->sys_image_guid), "%s", s);
        port_from_infos(c, k, ofed);
    }
    for (hwloc_obj_t os = dev->io_first_child; os; os = os->next_sibling) {
        if (os->type != HWLOC_OBJ_OS_DEVICE || os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK ||
            !os->name)
            continue;
        int d = topo_model_add_netdev(c->m);
        struct topo_netdev *nd = &c->m->netdevs[d];
        snprintf(nd->name, sizeof(nd->name), "%s", os->name);
        nd->pci = pci;
        nd->nic = k;
        const char *s;
        if ((s = hwloc_obj_get_info_by_name(os, "Address")))
            snprintf(nd->mac, sizeof(nd->mac), "%s", s);
        /* hwloc's "Port" on an IPoIB netdev is the 1-based IB port it sits on. */
        if ((s = hwloc_obj_get_info_by_name(os, "Port")))
            nd->dev_port = atoi(s) - 1;
    }
}

/* ---- NVLink / XGMI bandwidth matrices ---- */

/* Per-link, per-direction bandwidth hwloc's NVML backend uses: NVLink 1 (P100) moves
 * 20000 MB/s, NVLink 2-4 (V100, A100, H100) 25000 MB/s; these give NV# as nvidia-smi
 * shows it. Returns 0 when the link count cannot be derived. */
static double nvlink_per_link_mbs(const struct topo_pci *gpu)
{
    if (gpu->vendor_id != 0x10de)
        return 0;
    if (gpu->device_id >= 0x15f0 && gpu->device_id <= 0x15ff)
        return 20000;
    return 25000;
}

static int obj_pci_index(hwloc_obj_t o)
{
    while (o && o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    if (!o || !o->userdata)
        return -1;
    return (int)(intptr_t)o->userdata - 1;
}

static void add_links_from(struct hw_ctx *c, struct hwloc_distances_s *d, const char *kind)
{
    unsigned n = d->nbobjs;
    for (unsigned i = 0; i < n; i++) {
        int pi = obj_pci_index(d->objs[i]);
        int gi = pi >= 0 ? topo_model_gpu_of_pci(c->m, pi) : -1;
        if (gi < 0)
            continue;
        for (unsigned j = 0; j < n; j++) {
            if (i == j || d->values[i * n + j] == 0)
                continue;
            hwloc_obj_t peer = d->objs[j];
            int pj = obj_pci_index(peer);
            int k = topo_model_add_gpulink(c->m);
            struct topo_gpulink *l = &c->m->gpulinks[k];
            l->gpu = gi;
            l->bw_mbs = (double)d->values[i * n + j];
            snprintf(l->kind, sizeof(l->kind), "%s", kind);
            int gj = pj >= 0 ? topo_model_gpu_of_pci(c->m, pj) : -1;
            if (gj >= 0) {
                l->peer_kind = TOPO_PEER_GPU;
                l->peer = gj;
            } else if (pj >= 0) {
                l->peer_kind = TOPO_PEER_SWITCH;
                l->peer = pj;
            } else {
                l->peer_kind = TOPO_PEER_CPU;
                hwloc_obj_t pk =
                    peer->type == HWLOC_OBJ_PACKAGE
                        ? peer
                        : hwloc_get_ancestor_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, peer);
                l->peer = package_index(c, pk);
            }
            double per =
                !strcmp(kind, "NVLink") ? nvlink_per_link_mbs(&c->m->pci[c->m->gpus[gi].pci]) : 0;
            if (per > 0 && l->bw_mbs >= per && (long long)l->bw_mbs % (long long)per == 0)
                l->links = (int)(l->bw_mbs / per);
        }
    }
}

static void add_gpu_links(struct hw_ctx *c)
{
    unsigned nr = 0;
    if (hwloc_distances_get(c->topo, &nr, NULL, 0, 0) < 0 || nr == 0)
        return;
    struct hwloc_distances_s **ds = xalloc_zero(nr, sizeof(*ds));
    if (hwloc_distances_get(c->topo, &nr, ds, 0, 0) == 0) {
        for (unsigned i = 0; i < nr; i++) {
            const char *name = hwloc_distances_get_name(c->topo, ds[i]);
            if (name && !strcmp(name, "NVLinkBandwidth")) {
                add_links_from(c, ds[i], "NVLink");
                c->m->gpu_links_known = true;
            } else if (name && !strcmp(name, "XGMIBandwidth")) {
                add_links_from(c, ds[i], "XGMI");
                c->m->gpu_links_known = true;
            }
            hwloc_distances_release(c->topo, ds[i]);
        }
    }
    free(ds);
}

/* ---- machine facts ---- */

static void add_machine_infos(struct hw_ctx *c)
{
    hwloc_obj_t root = hwloc_get_root_obj(c->topo);
    struct topo_host *h = &c->m->host;
    const char *s;
    if ((s = hwloc_obj_get_info_by_name(root, "HostName")))
        snprintf(h->hostname, sizeof(h->hostname), "%s", s);
    if ((s = hwloc_obj_get_info_by_name(root, "OSRelease")))
        snprintf(h->kernel, sizeof(h->kernel), "%s", s);
    if ((s = hwloc_obj_get_info_by_name(root, "Architecture")))
        snprintf(h->arch, sizeof(h->arch), "%s", s);
    if ((s = hwloc_obj_get_info_by_name(root, "DMIProductName")) ||
        (s = hwloc_obj_get_info_by_name(root, "PlatformModel")))
        snprintf(h->product, sizeof(h->product), "%s", s);
    if ((s = hwloc_obj_get_info_by_name(root, "hwlocVersion")))
        snprintf(c->m->hwloc_version, sizeof(c->m->hwloc_version), "%s", s);
}

/* ---- the load itself ---- */

static int build_from_hwloc(struct hw_ctx *c, const char *what, struct ft_err *err)
{
    add_machine_infos(c);
    add_packages_and_numa(c);
    walk_normal(c, hwloc_get_root_obj(c->topo));
    /* hwloc's XML import takes any byte for a PCI device and function; a PCI address has 5
     * and 3 bits (PCI Local Bus 3.0, 3.2.2.3.1), and the snapshot reader refuses others. */
    for (int i = 0; i < c->m->npci; i++) {
        const struct topo_bdf *a = &c->m->pci[i].addr;
        if (a->dev > 0x1f || a->func > 7)
            return ft_err_set(err, -EBADMSG,
                              "%s: PCI object %04x:%02x:%02x.%x is not a PCI address (device "
                              "0-1f, function 0-7): not an hwloc export of a real machine",
                              what, a->domain, a->bus, a->dev, a->func);
    }

    /* GPUs and NICs in PCI address order (nvidia-smi numbers GPUs that way). */
    int *order = xalloc((size_t)(c->m->npci ? c->m->npci : 1) * sizeof(int));
    int nd = 0;
    for (int i = 0; i < c->m->npci; i++)
        if (c->m->pci[i].kind == TOPO_PCI_DEVICE)
            order[nd++] = i;
    sort_model = c->m;
    qsort(order, (size_t)nd, sizeof(int), cmp_pci_idx);
    for (int i = 0; i < nd; i++)
        add_gpu_if(c, order[i]);
    for (int i = 0; i < nd; i++)
        add_nic_if(c, order[i]);
    free(order);
    add_gpu_links(c);
    return 0;
}

/* Read the start of an XML file to give one clear error before hwloc sees it. */
static int xml_precheck(const char *path, struct ft_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = -errno;
        return ft_err_set(err, e, "%s: cannot open: %s", path, strerror(-e));
    }
    char head[8192];
    ssize_t n = read(fd, head, sizeof(head) - 1);
    close(fd);
    if (n < 0)
        return ft_err_set(err, -errno, "%s: cannot read: %s", path, strerror(errno));
    head[n] = '\0';
    char *t = strstr(head, "<topology");
    if (!t || (t[9] != '>' && !isspace((unsigned char)t[9])))
        return ft_err_set(err, -EBADMSG,
                          "%s: not an hwloc topology XML (no <topology> element); export one "
                          "with 'lstopo-no-graphics --of xml FILE' or pass a fabtop JSON "
                          "snapshot",
                          path);
    char *v = strstr(t, "version=\"");
    char *end = strchr(t, '>');
    if (v && (!end || v < end)) {
        int major = atoi(v + 9);
        if (major > 2)
            return ft_err_set(err, -EPROTO,
                              "%s: hwloc %d.x XML (version=\"%.8s); this fabtop uses hwloc %s, "
                              "which reads XML versions 1.x and 2.x only: export the topology "
                              "with an hwloc 2.x lstopo, or save a fabtop JSON snapshot on that "
                              "machine ('fabtop topo -o FILE')",
                              path, major, v + 9, HWLOC_VERSION);
    }
    return 0;
}

static int hwloc_common(struct topo_model *m, const struct topo_load_opts *o, const char *xml,
                        const char *fsroot, struct ft_err *err)
{
    struct hw_ctx c = {.m = m, .o = o};
    struct env_save env[4];
    int nenv = 0;
    if (xml) {
        int rc = xml_precheck(xml, err);
        if (rc < 0)
            return rc;
        /* hwloc only prints XML parse diagnostics when this is set; keep it quiet. */
        env_push(&env[nenv++], "HWLOC_XML_VERBOSE", NULL);
    } else {
        env_push(&env[nenv++], "HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES", "1");
        if (fsroot) {
            env_push(&env[nenv++], "HWLOC_FSROOT", fsroot);
            /* Only the Linux component: no CPUID or PCI scans of the machine we run on. */
            env_push(&env[nenv++], "HWLOC_COMPONENTS", "linux,stop");
        }
        c.root = fsroot ? fsroot : "/";
    }
    int rc = 0;
    if (hwloc_topology_init(&c.topo) < 0) {
        rc = ft_err_set(err, -ENOMEM, "hwloc: cannot initialise a topology");
        goto out_env;
    }
    hwloc_topology_set_io_types_filter(c.topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* hwloc parses an XML file either when it is set (its libxml2 backend, from the
     * libhwloc-plugins package, which OpenMPI pulls in) or when the topology is loaded (its
     * built-in parser): the same file fails at either step, so both say the same. */
    static const char bad_xml[] =
        "%s: hwloc could not parse this topology XML (malformed, truncated or not an hwloc "
        "export): %s";
    if (xml && hwloc_topology_set_xml(c.topo, xml) < 0) {
        rc = ft_err_set(err, -EBADMSG, bad_xml, xml, strerror(errno));
        goto out_topo;
    }
    if (hwloc_topology_load(c.topo) < 0) {
        int e = errno;
        if (xml)
            rc = ft_err_set(err, -EBADMSG, bad_xml, xml, strerror(e));
        else if (fsroot)
            rc = ft_err_set(err, -EBADMSG,
                            "%s: hwloc could not read a topology from this sysfs root (it needs "
                            "sys/ and proc/ as hwloc-gather-topology saves them): %s",
                            fsroot, strerror(e));
        else
            rc = ft_err_set(err, -e, "hwloc: live discovery failed: %s", strerror(e));
        goto out_topo;
    }
    if (fsroot && hwloc_get_nbobjs_by_type(c.topo, HWLOC_OBJ_PU) <= 0) {
        rc = ft_err_set(err, -EBADMSG, "%s: no CPUs found; is this a captured sysfs root?", fsroot);
        goto out_topo;
    }
    rc = build_from_hwloc(&c, xml ? xml : fsroot ? fsroot : "hwloc", err);
out_topo:
    hwloc_topology_destroy(c.topo);
    free(c.objs);
out_env:
    while (nenv > 0)
        env_pop(&env[--nenv]);
    return rc;
}

static int load_live(struct topo_model *m, const struct topo_load_opts *o, struct ft_err *err)
{
    m->source = TOPO_SRC_LIVE;
    m->source_path[0] = '\0';
    return hwloc_common(m, o, NULL, NULL, err);
}

static int load_xml(struct topo_model *m, const struct topo_load_opts *o, struct ft_err *err)
{
    m->source = TOPO_SRC_XML;
    snprintf(m->source_path, sizeof(m->source_path), "%s", o->input);
    return hwloc_common(m, o, o->input, NULL, err);
}

static int load_sysfs(struct topo_model *m, const struct topo_load_opts *o, struct ft_err *err)
{
    m->source = TOPO_SRC_SYSFS;
    snprintf(m->source_path, sizeof(m->source_path), "%s", o->sysfs_root);
    if (!fsutil_exists(o->sysfs_root, "sys"))
        return ft_err_set(err, -ENOENT,
                          "%s: no sys/ directory here; pass the directory that holds the "
                          "captured sys/ and proc/ trees",
                          o->sysfs_root);
    return hwloc_common(m, o, NULL, o->sysfs_root, err);
}

const struct topo_source topo_source_live = {"live", TOPO_SRC_LIVE, load_live};
const struct topo_source topo_source_xml = {"hwloc-xml", TOPO_SRC_XML, load_xml};
const struct topo_source topo_source_sysfs = {"sysfs-root", TOPO_SRC_SYSFS, load_sysfs};
