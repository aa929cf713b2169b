/* topo_text: text renderings of the topology model. */
#include "text/topo_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topo_ceiling.h"
#include "topology/topo_load.h"

void topo_text_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static const char *source_name(enum topo_source_kind k)
{
    switch (k) {
    case TOPO_SRC_LIVE:
        return "live system";
    case TOPO_SRC_XML:
        return "hwloc XML";
    case TOPO_SRC_SYSFS:
        return "sysfs root";
    default:
        return "fabtop snapshot";
    }
}

static int count_rdma_nics(const struct topo_model *m)
{
    int n = 0;
    for (int i = 0; i < m->nnics; i++)
        n += m->nics[i].rdma_dev[0] != 0;
    return n;
}

void topo_text_header(struct strbuf *sb, const struct topo_model *m)
{
    strbuf_printf(sb, "Host %s", m->host.hostname[0] ? m->host.hostname : "(unknown)");
    if (m->host.product[0])
        strbuf_printf(sb, " (%s)", m->host.product);
    if (m->host.kernel[0])
        strbuf_printf(sb, ", Linux %s", m->host.kernel);
    if (m->snapshot[0])
        strbuf_printf(sb, "\nSource: fabtop snapshot %s, taken from the %s%s%s", m->snapshot,
                      source_name(m->source), m->source_path[0] ? " " : "", m->source_path);
    else
        strbuf_printf(sb, "\nSource: %s%s%s", source_name(m->source), m->source_path[0] ? " " : "",
                      m->source_path);
    if (m->hwloc_version[0])
        strbuf_printf(sb, " (hwloc %s)", m->hwloc_version);
    int ncpu_numa = 0;
    for (int i = 0; i < m->nnuma; i++)
        ncpu_numa += m->numa[i].kind == TOPO_NUMA_CPU;
    int nports = 0;
    for (int i = 0; i < m->nports; i++)
        nports += m->nics[m->ports[i].nic].rdma_dev[0] != 0;
    strbuf_printf(sb,
                  "\n%d package%s, %d NUMA node%s, %d GPU%s, %d RDMA NIC%s (%d port%s), %d other "
                  "NIC function%s\n",
                  m->npackages, m->npackages == 1 ? "" : "s", ncpu_numa, ncpu_numa == 1 ? "" : "s",
                  m->ngpus, m->ngpus == 1 ? "" : "s", count_rdma_nics(m),
                  count_rdma_nics(m) == 1 ? "" : "s", nports, nports == 1 ? "" : "s",
                  m->nnics - count_rdma_nics(m), m->nnics - count_rdma_nics(m) == 1 ? "" : "s");
}

/* The generation's name, "Gen?" when the rate is none of them. */
static const char *gen_name(double gts)
{
    const char *g = topo_ceiling_pcie_gen(gts);
    return g[0] ? g : "Gen?";
}

/* "Gen4 x16 (max Gen4 x16)", or hwloc's "31.5 GB/s" when width and speed are unknown. */
static void link_text(struct strbuf *sb, const struct topo_pci *p)
{
    bool cur = (p->valid & TOPO_PCI_V_CUR_SPEED) && (p->valid & TOPO_PCI_V_CUR_WIDTH);
    bool max = (p->valid & TOPO_PCI_V_MAX_SPEED) && (p->valid & TOPO_PCI_V_MAX_WIDTH);
    if (cur) {
        strbuf_printf(sb, ", PCIe %s x%d", gen_name(p->cur_speed_gts), p->cur_width);
        if (max && (p->max_width != p->cur_width || p->max_speed_gts != p->cur_speed_gts))
            strbuf_printf(sb, " (max %s x%d)", gen_name(p->max_speed_gts), p->max_width);
    } else if (p->valid & TOPO_PCI_V_LINK_GBS) {
        strbuf_printf(sb, ", PCIe link %.1f GB/s", p->link_gbs);
    }
}

static void indent(struct strbuf *sb, int depth)
{
    for (int i = 0; i < depth; i++)
        strbuf_add(sb, "  ");
}

void topo_text_port(struct strbuf *sb, const struct topo_model *m, int port)
{
    const struct topo_port *p = &m->ports[port];
    strbuf_printf(sb, "port %d: ", p->num);
    strbuf_add(sb, p->valid & TOPO_PORT_V_STATE ? topo_port_state_str(p->state) : "state n/a");
    if (p->valid & TOPO_PORT_V_PHYS)
        strbuf_printf(sb, "/%s", topo_phys_state_str(p->phys_state));
    strbuf_printf(sb, ", %s",
                  p->valid & TOPO_PORT_V_LL ? topo_link_layer_str(p->link_layer)
                                            : "link layer n/a");
    if (p->valid & TOPO_PORT_V_RATE)
        strbuf_printf(sb, ", %g Gb/s (%dX %s)", p->rate_gbps, p->width, p->speed);
    if (p->valid & TOPO_PORT_V_MTU)
        strbuf_printf(sb, ", MTU %d", p->active_mtu);
    if ((p->valid & TOPO_PORT_V_MAXMTU) && p->max_mtu != p->active_mtu)
        strbuf_printf(sb, " (max %d)", p->max_mtu);
    bool ib = (p->valid & TOPO_PORT_V_LL) && p->link_layer == TOPO_LL_INFINIBAND;
    if ((p->valid & TOPO_PORT_V_LID) && (ib || p->lid))
        strbuf_printf(sb, ", LID 0x%x", p->lid);
    if ((p->valid & TOPO_PORT_V_SMLID) && ib)
        strbuf_printf(sb, ", SM LID 0x%x", p->sm_lid);
    if (p->netdev >= 0)
        strbuf_printf(sb, ", netdev %s", m->netdevs[p->netdev].name);
    if (p->valid & TOPO_PORT_V_GIDTYPES) {
        int shown = 0;
        for (int g = 0; g < p->ngids; g++) {
            const struct topo_gid *gid = &p->gids[g];
            if (gid->type != TOPO_GID_ROCE_V2 || !gid->ip[0])
                continue;
            strbuf_printf(sb, "%sRoCE v2 GID[%d] %s", shown++ ? "; " : ", ", gid->index, gid->ip);
        }
    }
    strbuf_add(sb, "\n");
}

static void device_line(struct strbuf *sb, const struct topo_model *m, int pci, int depth)
{
    const struct topo_pci *p = &m->pci[pci];
    char bdf[32], name[64];
    topo_bdf_str(&p->addr, bdf, sizeof(bdf));
    int g = topo_model_gpu_of_pci(m, pci);
    if (g >= 0) {
        const struct topo_gpu *gp = &m->gpus[g];
        topo_gpu_name(m, g, name, sizeof(name));
        indent(sb, depth);
        strbuf_printf(sb, "%s %s %s", name, bdf, gp->model[0] ? gp->model : gp->vendor);
        if (gp->valid & TOPO_GPU_V_MEM) {
            char mem[32];
            topo_text_bytes(mem, sizeof(mem), gp->mem_bytes);
            strbuf_printf(sb, ", %s", mem);
        }
        if (gp->valid & TOPO_GPU_V_CUDA)
            strbuf_printf(sb, ", CUDA %d", gp->cuda_index);
        if (gp->osdevs[0])
            strbuf_printf(sb, " [%s]", gp->osdevs);
        if (gp->mem_numa >= 0)
            strbuf_printf(sb, ", memory is NUMA node %d", gp->mem_numa);
        link_text(sb, p);
        strbuf_add(sb, "\n");
        return;
    }
    int n = topo_model_nic_of_pci(m, pci);
    if (n >= 0) {
        const struct topo_nic *nic = &m->nics[n];
        topo_nic_name(m, n, name, sizeof(name));
        indent(sb, depth);
        /* A NIC read back from a document may name no adapter (adapter -1). */
        const char *model = p->device_name[0] ? p->device_name
                            : nic->adapter >= 0 && nic->adapter < m->nadapters
                                ? m->adapters[nic->adapter].model
                                : "";
        strbuf_printf(sb, "NIC %s %s %s", name, bdf, model);
        if (nic->fw_ver[0])
            strbuf_printf(sb, ", fw %s", nic->fw_ver);
        link_text(sb, p);
        if (!nic->rdma_dev[0]) {
            bool first = true;
            for (int d = 0; d < m->nnetdevs; d++)
                if (m->netdevs[d].nic == n) {
                    strbuf_printf(sb, "%s%s", first ? ", netdev " : " ", m->netdevs[d].name);
                    first = false;
                }
        }
        strbuf_add(sb, "\n");
        for (int k = 0; k < nic->nports; k++) {
            indent(sb, depth + 2);
            topo_text_port(sb, m, nic->first_port + k);
        }
        return;
    }
    if (!strcmp(p->subtype, "NVSwitch")) {
        indent(sb, depth);
        strbuf_printf(sb, "NVSwitch %s\n", bdf);
    }
}

/* keep[i] marks PCI objects whose subtree holds a GPU, NIC or NVSwitch. */
static void render_pci(struct strbuf *sb, const struct topo_model *m, const char *keep, int pci,
                       int depth)
{
    const struct topo_pci *p = &m->pci[pci];
    char bdf[32];
    if (p->kind == TOPO_PCI_DEVICE) {
        device_line(sb, m, pci, depth);
        return;
    }
    int child_depth = depth;
    if (p->kind == TOPO_PCI_HOSTBRIDGE) {
        indent(sb, depth);
        strbuf_printf(sb, "Host bridge %04x:[%02x-%02x]\n", p->addr.domain, p->bus_first,
                      p->bus_last);
        child_depth = depth + 1;
    } else if (p->role == TOPO_BRIDGE_SWITCH_UP) {
        topo_bdf_str(&p->addr, bdf, sizeof(bdf));
        indent(sb, depth);
        strbuf_printf(sb, "PCIe switch %s", bdf);
        if (p->valid & TOPO_PCI_V_IDS)
            strbuf_printf(sb, " (%04x:%04x%s%s)", p->vendor_id, p->device_id,
                          p->vendor_name[0] ? " " : "", p->vendor_name);
        link_text(sb, p);
        strbuf_add(sb, "\n");
        child_depth = depth + 1;
    }
    /* Root ports and downstream ports are not drawn: they belong to the host bridge
     * and the switch above them. */
    for (int i = 0; i < m->npci; i++)
        if (m->pci[i].parent == pci && keep[i])
            render_pci(sb, m, keep, i, child_depth);
}

void topo_text_tree(struct strbuf *sb, const struct topo_model *m)
{
    char *keep = calloc((size_t)(m->npci ? m->npci : 1), 1);
    for (int i = 0; i < m->npci; i++) {
        bool interesting = topo_model_gpu_of_pci(m, i) >= 0 || topo_model_nic_of_pci(m, i) >= 0 ||
                           !strcmp(m->pci[i].subtype, "NVSwitch");
        for (int k = i; interesting && k >= 0; k = m->pci[k].parent)
            keep[k] = 1;
    }
    bool *shown = calloc((size_t)(m->npci ? m->npci : 1), sizeof(bool));
    for (int pk = 0; pk < m->npackages; pk++) {
        const struct topo_package *P = &m->packages[pk];
        char osn[16];
        strbuf_printf(sb, "Package %s%s%s, cpus %s\n", topo_os_index_str(P->os_index, osn),
                      P->cpu_model[0] ? " " : "", P->cpu_model, P->cpuset[0] ? P->cpuset : "n/a");
        for (int n = 0; n < m->nnuma; n++) {
            const struct topo_numa *N = &m->numa[n];
            if (N->package != pk || N->kind == TOPO_NUMA_GPU_MEMORY)
                continue;
            char mem[32];
            topo_text_bytes(mem, sizeof(mem), N->mem_bytes);
            strbuf_printf(sb, "  NUMA node %s, %s%s%s\n", topo_os_index_str(N->os_index, osn), mem,
                          N->cpuset[0] ? ", cpus " : " (no CPUs)", N->cpuset);
            for (int i = 0; i < m->npci; i++) {
                const struct topo_pci *p = &m->pci[i];
                if (p->parent < 0 && N->os_index >= 0 && p->numa == N->os_index && keep[i]) {
                    render_pci(sb, m, keep, i, 2);
                    shown[i] = true;
                }
            }
        }
        for (int i = 0; i < m->npci; i++) {
            const struct topo_pci *p = &m->pci[i];
            if (p->parent < 0 && !shown[i] && p->package == pk && keep[i]) {
                strbuf_add(sb, "  I/O local to the whole package:\n");
                render_pci(sb, m, keep, i, 2);
                shown[i] = true;
            }
        }
    }
    bool header = false;
    for (int i = 0; i < m->npci; i++) {
        if (m->pci[i].parent < 0 && !shown[i] && keep[i]) {
            if (!header)
                strbuf_add(sb, "I/O local to the whole machine:\n");
            header = true;
            render_pci(sb, m, keep, i, 1);
        }
    }
    /* RDMA devices without a PCI function (Soft-RoCE rxe, siw). */
    for (int n = 0; n < m->nnics; n++) {
        const struct topo_nic *nic = &m->nics[n];
        if (nic->pci >= 0)
            continue;
        strbuf_printf(sb, "Software RDMA device %s (%s)\n", nic->rdma_dev,
                      nic->driver[0] ? nic->driver : "virtual");
        for (int k = 0; k < nic->nports; k++) {
            strbuf_add(sb, "  ");
            topo_text_port(sb, m, nic->first_port + k);
        }
    }
    free(keep);
    free(shown);

    /* What was not found, and why. */
    bool any = m->ngpus == 0 || count_rdma_nics(m) == 0 || m->nnotes > 0;
    if (any)
        strbuf_add(sb, "\nNot found / notes:\n");
    if (m->ngpus == 0)
        strbuf_add(sb, "  - No GPUs: no NVIDIA, AMD or Intel display/3D/accelerator PCI function "
                       "and no GPU OS device.\n");
    if (count_rdma_nics(m) == 0)
        strbuf_add(sb, "  - No RDMA devices: RDMA tests (verbs) are unavailable on this node; "
                       "TCP tests still work.\n");
    for (int i = 0; i < m->nnotes; i++)
        strbuf_printf(sb, "  - %s\n", m->notes[i]);
}

void topo_text_matrix(struct strbuf *sb, const struct topo_model *m, const struct topo_affinity *a)
{
    char name[64], cell[16];
    int g = a->ngpus, n = a->ncols;
    if (g == 0 && n == 0) {
        strbuf_add(sb, "No GPUs and no NICs: nothing to relate.\n");
        return;
    }
    strbuf_add(sb, "        ");
    for (int j = 0; j < g; j++) {
        snprintf(name, sizeof(name), "GPU%d", j);
        strbuf_addpad(sb, name, 6);
    }
    for (int j = 0; j < n; j++) {
        snprintf(name, sizeof(name), "NIC%d", j);
        strbuf_addpad(sb, name, 6);
    }
    int cpuw = 14;
    for (int i = 0; i < g + n; i++) {
        int pci = i < g ? m->gpus[i].pci : m->nics[a->cols[i - g]].pci;
        int len = (int)strlen(m->pci[pci].cpuset);
        if (len + 2 > cpuw)
            cpuw = len + 2;
    }
    strbuf_addpad(sb, "CPU Affinity", cpuw);
    strbuf_add(sb, "NUMA Affinity\n");
    for (int i = 0; i < g + n; i++) {
        snprintf(name, sizeof(name), i < g ? "GPU%d" : "NIC%d", i < g ? i : i - g);
        strbuf_addpad(sb, name, 8);
        int pci = i < g ? m->gpus[i].pci : m->nics[a->cols[i - g]].pci;
        for (int j = 0; j < g + n; j++) {
            const struct topo_cell *c;
            if (i < g && j < g)
                c = &a->gg[i * g + j];
            else if (i < g)
                c = &a->gn[i * n + (j - g)];
            else if (j < g)
                c = &a->gn[j * n + (i - g)];
            else
                c = &a->nn[(i - g) * n + (j - g)];
            topo_cell_str(c, cell, sizeof(cell));
            strbuf_addpad(sb, cell, 6);
        }
        const struct topo_pci *p = &m->pci[pci];
        strbuf_addpad(sb, p->cpuset[0] ? p->cpuset : "n/a", cpuw);
        if (p->numa >= 0)
            strbuf_printf(sb, "%d", p->numa);
        else
            strbuf_add(sb, "N/A");
        strbuf_add(sb, "\n");
    }
    strbuf_add(sb,
               "\nLegend:\n"
               "  X    = Self\n"
               "  SYS  = Connection traversing PCIe as well as the SMP interconnect between "
               "NUMA nodes (e.g., QPI/UPI)\n"
               "  NODE = Connection traversing PCIe as well as the interconnect between PCIe "
               "Host Bridges within a NUMA node\n"
               "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically "
               "the CPU)\n"
               "  PXB  = Connection traversing multiple PCIe bridges (without traversing the "
               "PCIe Host Bridge)\n"
               "  PIX  = Connection traversing at most a single PCIe bridge\n"
               "  NV#  = Connection traversing a bonded set of # NVLinks (NV: count unknown)\n");
    if (g >= 2 && !m->gpu_links_known)
        strbuf_add(sb, "  NVLink unknown: this topology carries no NVLink or XGMI data (an hwloc\n"
                       "       1.x export, or read without NVML): GPU pairs show their PCIe path\n"
                       "       only, and may still be joined by NVLink\n");
    if (n) {
        strbuf_printf(sb, "\nNIC Legend (%s):\n",
                      a->rdma_only ? "RDMA devices" : "no RDMA device; network functions");
        for (int j = 0; j < n; j++) {
            topo_nic_name(m, a->cols[j], name, sizeof(name));
            char bdf[32];
            topo_bdf_str(&m->pci[m->nics[a->cols[j]].pci].addr, bdf, sizeof(bdf));
            strbuf_printf(sb, "  NIC%d: %s (%s)\n", j, name, bdf);
        }
    }
    if (g) {
        strbuf_add(sb, "\nNearest NIC per GPU:\n");
        for (int i = 0; i < g; i++) {
            const struct topo_nearest *ne = &a->nearest[i];
            char line[512];
            topo_nearest_str(m, ne, line, sizeof(line));
            strbuf_printf(sb, "  GPU%d: %s\n", i, line);
        }
    }
    bool nv = false;
    for (int i = 0; i < g * g; i++)
        nv |= a->gg[i].rel == TOPO_REL_NV;
    if (g >= 2 && !m->gpu_links_known) {
        strbuf_add(sb, "\nGPU links: unknown (no NVLink or XGMI data in this topology)\n");
        return;
    }
    if (!nv)
        return;
    strbuf_add(sb, "\nGPU links (bandwidth per direction, GB/s = 10^9 bytes/s):\n");
    for (int i = 0; i < g; i++) {
        /* Peers sharing the same kind of link are listed together. */
        bool done[256] = {false};
        strbuf_printf(sb, "  GPU%d:", i);
        bool any = false;
        for (int j = 0; j < g && j < 256; j++) {
            const struct topo_cell *c = &a->gg[i * g + j];
            if (i == j || done[j] || c->rel != TOPO_REL_NV)
                continue;
            topo_cell_str(c, cell, sizeof(cell));
            strbuf_printf(sb, "%s %s %.0f GB/s%s to GPU%d", any ? ";" : "", cell,
                          c->nv_bw_mbs / 1000.0, c->via_switch ? " via NVSwitch" : "", j);
            for (int k = j + 1; k < g && k < 256; k++) {
                const struct topo_cell *d = &a->gg[i * g + k];
                if (k != i && d->rel == TOPO_REL_NV && d->nv_bw_mbs == c->nv_bw_mbs &&
                    d->nv_links == c->nv_links && d->via_switch == c->via_switch &&
                    d->xgmi == c->xgmi) {
                    strbuf_printf(sb, ",%d", k);
                    done[k] = true;
                }
            }
            any = true;
        }
        strbuf_add(sb, any ? "\n" : " none\n");
    }
}

void topo_text_ceiling(struct strbuf *sb, const struct topo_ceiling *c, bool terms, int depth)
{
    indent(sb, depth);
    if (c->valid)
        strbuf_printf(sb, "%s: %.2f Gb/s of payload, set by %s\n", c->path, c->gbps,
                      c->terms[c->narrowest].name);
    else
        strbuf_printf(sb, "%s: n/a (no rate or link known)\n", c->path);
    if (!terms)
        return;
    for (int i = 0; i < c->nterms; i++) {
        const struct topo_ceil_term *t = &c->terms[i];
        indent(sb, depth + 2);
        char v[32] = "n/a";
        if (isfinite(t->value))
            snprintf(v, sizeof(v), "%.6g", t->value);
        strbuf_printf(sb, "%-8s %-22s %12s %-9s%s%s\n", topo_ceil_kind_str(t->kind), t->name, v,
                      t->unit, t->detail[0] ? " " : "", t->detail);
    }
}

void topo_text_ceilings(struct strbuf *sb, const struct topo_model *m, bool terms)
{
    strbuf_add(sb, "Path ceilings (Gb/s = 10^9 bit/s of payload, one direction):\n");
    struct topo_ceiling c;
    int shown = 0;
    for (int n = 0; n < m->nnics; n++) {
        const struct topo_nic *nic = &m->nics[n];
        if (nic->nports == 0) {
            if (topo_ceiling_nic(m, n, -1, NULL, &c) == 0) {
                topo_text_ceiling(sb, &c, terms, 1);
                shown++;
            }
            continue;
        }
        for (int k = 0; k < nic->nports; k++)
            if (topo_ceiling_nic(m, n, nic->first_port + k, NULL, &c) == 0) {
                topo_text_ceiling(sb, &c, terms, 1);
                shown++;
            }
    }
    for (int g = 0; g < m->ngpus; g++) {
        if (topo_ceiling_gpu_host(m, g, &c) == 0) {
            topo_text_ceiling(sb, &c, terms, 1);
            shown++;
        }
        if (topo_ceiling_gpu_nvlink(m, g, &c) == 0 && c.valid) {
            topo_text_ceiling(sb, &c, terms, 1);
            shown++;
        }
    }
    if (!shown)
        strbuf_add(sb, "  no NIC or GPU in this topology\n");
}

void topo_text_findings(struct strbuf *sb, const struct topo_findings *f)
{
    if (f->n == 0) {
        strbuf_add(sb, "Lint: no findings.\n");
        return;
    }
    int counts[3] = {0};
    for (int i = 0; i < f->n; i++)
        counts[f->v[i].sev]++;
    strbuf_printf(sb, "Lint: %d error%s, %d warning%s, %d note%s\n", counts[2],
                  counts[2] == 1 ? "" : "s", counts[1], counts[1] == 1 ? "" : "s", counts[0],
                  counts[0] == 1 ? "" : "s");
    for (int i = 0; i < f->n; i++) {
        const struct topo_finding *x = &f->v[i];
        static const char *const tag[] = {"INFO ", "WARN ", "ERROR"};
        strbuf_printf(sb, "%s %-18s %s: %s\n      fix: %s\n", tag[x->sev], x->rule, x->object,
                      x->msg, x->remedy);
    }
}
