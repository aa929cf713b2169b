/* topo_model: construction helpers, lookups and names for the node model. */
#include "topology/topo_model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_fabric.h"

struct topo_model *topo_model_new(void)
{
    struct topo_model *m = xalloc_zero(1, sizeof(*m));
    m->host.is_root = TOPO_UNKNOWN;
    m->host.cap_ipc_lock = TOPO_UNKNOWN;
    m->host.nvidia_peermem = TOPO_UNKNOWN;
    m->host.dmabuf = TOPO_UNKNOWN;
    return m;
}

void topo_model_free(struct topo_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nports; i++)
        free(m->ports[i].gids);
    for (int i = 0; i < m->nnotes; i++)
        free(m->notes[i]);
    free(m->notes);
    free(m->packages);
    free(m->numa);
    free(m->pci);
    free(m->gpus);
    free(m->gpulinks);
    free(m->nics);
    free(m->adapters);
    free(m->ports);
    free(m->netdevs);
    topo_fabric_free(&m->fabric);
    free(m);
}

/* Grow an array by one zeroed element; capacity doubles at powers of two. */
static void *grow(void *arr, int n, size_t size)
{
    if (n == 0 || (n & (n - 1)) == 0)
        arr = xalloc_resize(arr, (size_t)(n ? 2 * n : 4) * size);
    memset((char *)arr + (size_t)n * size, 0, size);
    return arr;
}

int topo_model_add_package(struct topo_model *m)
{
    m->packages = grow(m->packages, m->npackages, sizeof(*m->packages));
    return m->npackages++;
}

int topo_model_add_numa(struct topo_model *m)
{
    m->numa = grow(m->numa, m->nnuma, sizeof(*m->numa));
    m->numa[m->nnuma].package = -1;
    m->numa[m->nnuma].gpu = -1;
    return m->nnuma++;
}

int topo_model_add_pci(struct topo_model *m)
{
    m->pci = grow(m->pci, m->npci, sizeof(*m->pci));
    struct topo_pci *p = &m->pci[m->npci];
    p->parent = -1;
    p->numa = -1;
    p->package = -1;
    return m->npci++;
}

int topo_model_add_gpu(struct topo_model *m)
{
    m->gpus = grow(m->gpus, m->ngpus, sizeof(*m->gpus));
    struct topo_gpu *g = &m->gpus[m->ngpus];
    g->pci = -1;
    g->cuda_index = g->nvml_index = g->rsmi_index = -1;
    g->mem_numa = -1;
    return m->ngpus++;
}

int topo_model_add_gpulink(struct topo_model *m)
{
    m->gpulinks = grow(m->gpulinks, m->ngpulinks, sizeof(*m->gpulinks));
    m->gpulinks[m->ngpulinks].links = -1;
    return m->ngpulinks++;
}

int topo_model_add_nic(struct topo_model *m)
{
    m->nics = grow(m->nics, m->nnics, sizeof(*m->nics));
    struct topo_nic *n = &m->nics[m->nnics];
    n->pci = -1;
    n->adapter = -1;
    n->first_port = -1;
    return m->nnics++;
}

int topo_model_add_adapter(struct topo_model *m)
{
    m->adapters = grow(m->adapters, m->nadapters, sizeof(*m->adapters));
    return m->nadapters++;
}

int topo_model_add_port(struct topo_model *m)
{
    m->ports = grow(m->ports, m->nports, sizeof(*m->ports));
    struct topo_port *p = &m->ports[m->nports];
    p->nic = -1;
    p->netdev = -1;
    return m->nports++;
}

int topo_model_add_netdev(struct topo_model *m)
{
    m->netdevs = grow(m->netdevs, m->nnetdevs, sizeof(*m->netdevs));
    struct topo_netdev *n = &m->netdevs[m->nnetdevs];
    n->pci = -1;
    n->nic = -1;
    return m->nnetdevs++;
}

void topo_port_add_gid(struct topo_port *p, const struct topo_gid *g)
{
    p->gids = grow(p->gids, p->ngids, sizeof(*p->gids));
    p->gids[p->ngids++] = *g;
}

void topo_model_note(struct topo_model *m, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (int i = 0; i < m->nnotes; i++)
        if (!strcmp(m->notes[i], buf))
            return;
    m->notes = grow(m->notes, m->nnotes, sizeof(*m->notes));
    m->notes[m->nnotes++] = xalloc_strdup(buf);
}

int topo_model_find_pci(const struct topo_model *m, const struct topo_bdf *a)
{
    for (int i = 0; i < m->npci; i++) {
        const struct topo_pci *p = &m->pci[i];
        if (p->kind == TOPO_PCI_HOSTBRIDGE)
            continue;
        if (p->addr.domain == a->domain && p->addr.bus == a->bus && p->addr.dev == a->dev &&
            p->addr.func == a->func)
            return i;
    }
    return -1;
}

int topo_model_find_netdev(const struct topo_model *m, const char *name)
{
    for (int i = 0; i < m->nnetdevs; i++)
        if (!strcmp(m->netdevs[i].name, name))
            return i;
    return -1;
}

int topo_model_find_nic_by_rdma(const struct topo_model *m, const char *rdma_dev)
{
    for (int i = 0; i < m->nnics; i++)
        if (m->nics[i].rdma_dev[0] && !strcmp(m->nics[i].rdma_dev, rdma_dev))
            return i;
    return -1;
}

int topo_model_gpu_of_pci(const struct topo_model *m, int pci)
{
    for (int i = 0; i < m->ngpus; i++)
        if (m->gpus[i].pci == pci)
            return i;
    return -1;
}

int topo_model_nic_of_pci(const struct topo_model *m, int pci)
{
    for (int i = 0; i < m->nnics; i++)
        if (m->nics[i].pci == pci)
            return i;
    return -1;
}

void topo_bdf_str(const struct topo_bdf *a, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%x", a->domain, a->bus, a->dev, a->func);
}

const char *topo_os_index_str(int os_index, char *buf)
{
    if (os_index < 0)
        return "n/a";
    snprintf(buf, 16, "%d", os_index);
    return buf;
}

int topo_bdf_parse(const char *s, struct topo_bdf *out)
{
    unsigned dom = 0, bus, dev, fn;
    char tail;
    if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
        /* domain:bus:dev.fn */
    } else if (sscanf(s, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3) {
        dom = 0;
    } else {
        return -EINVAL;
    }
    if (bus > 0xff || dev > 0x1f || fn > 7)
        return -EINVAL;
    out->domain = dom;
    out->bus = (uint8_t)bus;
    out->dev = (uint8_t)dev;
    out->func = (uint8_t)fn;
    return 0;
}

const char *topo_port_state_str(enum topo_port_state s)
{
    static const char *const names[] = {"UNKNOWN", "DOWN",   "INIT",
                                        "ARMED",   "ACTIVE", "ACTIVE_DEFER"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

const char *topo_phys_state_str(enum topo_phys_state s)
{
    static const char *const names[] = {
        "Unknown",           "Sleep",  "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
        "LinkErrorRecovery", "PhyTest"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "Unknown";
}

const char *topo_link_layer_str(enum topo_link_layer l)
{
    switch (l) {
    case TOPO_LL_INFINIBAND:
        return "InfiniBand";
    case TOPO_LL_ETHERNET:
        return "Ethernet";
    default:
        return "unknown";
    }
}

const char *topo_gid_type_str(enum topo_gid_type t)
{
    switch (t) {
    case TOPO_GID_ROCE_V1:
        return "RoCE v1";
    case TOPO_GID_ROCE_V2:
        return "RoCE v2";
    default:
        return "IB";
    }
}

void topo_port_label(const struct topo_model *m, int port, char *buf, size_t len)
{
    const struct topo_port *p = &m->ports[port];
    char name[TOPO_NAME] = "?";
    if (p->nic >= 0 && p->nic < m->nnics)
        topo_nic_name(m, p->nic, name, sizeof(name));
    snprintf(buf, len, "%s port %d", name, p->num);
}

int topo_port_pci(const struct topo_model *m, int port)
{
    int nic = m->ports[port].nic;
    return nic >= 0 && nic < m->nnics ? m->nics[nic].pci : -1;
}

bool topo_port_is_rdma(const struct topo_model *m, int port)
{
    int nic = m->ports[port].nic;
    return nic >= 0 && nic < m->nnics && m->nics[nic].rdma_dev[0];
}

void topo_nic_name(const struct topo_model *m, int nic, char *buf, size_t len)
{
    const struct topo_nic *n = &m->nics[nic];
    if (n->rdma_dev[0]) {
        snprintf(buf, len, "%s", n->rdma_dev);
        return;
    }
    for (int i = 0; i < m->nnetdevs; i++) {
        if (m->netdevs[i].nic == nic) {
            snprintf(buf, len, "%s", m->netdevs[i].name);
            return;
        }
    }
    if (n->pci >= 0)
        topo_bdf_str(&m->pci[n->pci].addr, buf, len);
    else
        snprintf(buf, len, "nic%d", nic);
}

void topo_gpu_name(const struct topo_model *m, int gpu, char *buf, size_t len)
{
    (void)m;
    snprintf(buf, len, "GPU%d", gpu);
}

int topo_model_bond_links(const struct topo_model *m, int netdev)
{
    if (netdev < 0 || netdev >= m->nnetdevs || !(m->netdevs[netdev].valid & TOPO_NET_V_BOND))
        return 0;
    int n = 0;
    for (int i = 0; i < m->nnetdevs; i++)
        n += !strcmp(m->netdevs[i].master, m->netdevs[netdev].name);
    return n;
}

bool topo_bond_hashes(const char *mode)
{
    static const char *const hashing[] = {"802.3ad", "balance-xor", "balance-tlb", "balance-alb"};
    for (size_t i = 0; mode && i < sizeof(hashing) / sizeof(hashing[0]); i++)
        if (!strcmp(mode, hashing[i]))
            return true;
    return false;
}
