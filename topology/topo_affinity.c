/* topo_affinity: NVML-style relations between PCI devices, computed on the PCI tree.
 *
 * nvidia-smi topo -m legend (NVML nvmlGpuTopologyLevel_t):
 *   PIX  connection traversing at most a single PCIe bridge (one PCIe switch)
 *   PXB  connection traversing multiple PCIe bridges (without the host bridge)
 *   PHB  connection traversing PCIe as well as a PCIe host bridge (typically the CPU)
 *   NODE connection traversing PCIe and the interconnect between host bridges in a node
 *   SYS  connection traversing PCIe and the SMP interconnect between NUMA nodes
 *   NV#  connection traversing a bonded set of # NVLinks
 * A "bridge" there is a PCIe switch: its upstream port and downstream ports count as one,
 * and root ports belong to the host bridge (as NCCL also treats them). */
#include "topology/topo_affinity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

const char *topo_rel_str(enum topo_rel r)
{
    static const char *const names[] = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
    return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

int topo_rel_parse(const char *s)
{
    for (int r = TOPO_REL_SELF; r <= TOPO_REL_SYS; r++)
        if (!strcmp(s, topo_rel_str((enum topo_rel)r)))
            return r;
    if (!strncmp(s, "NV", 2))
        return TOPO_REL_NV;
    return -1;
}

void topo_cell_str(const struct topo_cell *c, char *buf, size_t len)
{
    if (c->rel == TOPO_REL_NV && c->xgmi)
        snprintf(buf, len, "XGMI");
    else if (c->rel == TOPO_REL_NV && c->nv_links > 0)
        snprintf(buf, len, "NV%d", c->nv_links);
    else
        snprintf(buf, len, "%s", topo_rel_str(c->rel));
}

/* Path from a PCI function up to its host bridge: chain[0] = the function. */
static int chain_of(const struct topo_model *m, int i, int *chain, int max)
{
    int n = 0;
    while (i >= 0 && n < max) {
        chain[n++] = i;
        i = m->pci[i].parent;
    }
    return n;
}

/* Locality of two devices that meet only above the PCI tree. */
static enum topo_rel numa_relation(const struct topo_model *m, int a, int b)
{
    const struct topo_pci *x = &m->pci[a], *y = &m->pci[b];
    if (x->numa >= 0 && y->numa >= 0)
        return x->numa == y->numa ? TOPO_REL_NODE : TOPO_REL_SYS;
    /* No single NUMA node (e.g. I/O attached to a whole package): same locality object
     * (identical CPU set) is NODE, anything else crosses the SMP interconnect. */
    if (x->cpuset[0] && !strcmp(x->cpuset, y->cpuset))
        return TOPO_REL_NODE;
    return TOPO_REL_SYS;
}

enum topo_rel topo_affinity_pci(const struct topo_model *m, int a, int b, bool *same_package)
{
    if (same_package) {
        int pa = m->pci[a].package, pb = m->pci[b].package;
        *same_package = pa >= 0 && pa == pb;
    }
    if (a == b)
        return TOPO_REL_SELF;
    int ca[64], cb[64];
    int na = chain_of(m, a, ca, 64), nb = chain_of(m, b, cb, 64);
    /* Lowest common ancestor: walk both chains from the top. */
    int ia = na - 1, ib = nb - 1;
    if (ca[ia] != cb[ib])
        return numa_relation(m, a, b);
    while (ia > 0 && ib > 0 && ca[ia - 1] == cb[ib - 1]) {
        ia--;
        ib--;
    }
    int lca = ca[ia];
    const struct topo_pci *c = &m->pci[lca];
    if (c->kind == TOPO_PCI_HOSTBRIDGE)
        return TOPO_REL_PHB;
    /* Count the PCIe switches traversed: upstream ports strictly below the LCA on both
     * sides, plus the LCA itself when it is a switch's upstream port. */
    int switches = c->role == TOPO_BRIDGE_SWITCH_UP;
    for (int k = 1; k < ia; k++)
        switches += m->pci[ca[k]].role == TOPO_BRIDGE_SWITCH_UP;
    for (int k = 1; k < ib; k++)
        switches += m->pci[cb[k]].role == TOPO_BRIDGE_SWITCH_UP;
    return switches <= 1 ? TOPO_REL_PIX : TOPO_REL_PXB;
}

/* Sum of a GPU's NVLink bandwidth and link count towards NVSwitches. */
static void switch_links(const struct topo_model *m, int gpu, double *bw, int *links)
{
    *bw = 0;
    *links = 0;
    for (int i = 0; i < m->ngpulinks; i++) {
        const struct topo_gpulink *l = &m->gpulinks[i];
        if (l->gpu != gpu || l->peer_kind != TOPO_PEER_SWITCH)
            continue;
        *bw += l->bw_mbs;
        if (*links >= 0)
            *links = l->links > 0 ? *links + l->links : -1;
    }
}

static void gpu_gpu_cell(const struct topo_model *m, int i, int j, struct topo_cell *c)
{
    memset(c, 0, sizeof(*c));
    c->nv_links = -1;
    c->pcie = topo_affinity_pci(m, m->gpus[i].pci, m->gpus[j].pci, &c->same_package);
    c->rel = c->pcie;
    if (i == j)
        return;
    for (int k = 0; k < m->ngpulinks; k++) {
        const struct topo_gpulink *l = &m->gpulinks[k];
        if (l->gpu == i && l->peer_kind == TOPO_PEER_GPU && l->peer == j) {
            c->rel = TOPO_REL_NV;
            c->nv_bw_mbs = l->bw_mbs;
            c->nv_links = l->links;
            c->xgmi = !strcmp(l->kind, "XGMI");
            return;
        }
    }
    double bi, bj;
    int li, lj;
    switch_links(m, i, &bi, &li);
    switch_links(m, j, &bj, &lj);
    if (bi > 0 && bj > 0) {
        /* Through the NVSwitch fabric a pair can use the smaller of the two GPUs' link sets,
         * which is what nvidia-smi reports on NVSwitch systems. */
        c->rel = TOPO_REL_NV;
        c->via_switch = true;
        c->nv_bw_mbs = bi < bj ? bi : bj;
        c->nv_links = (li > 0 && lj > 0) ? (li < lj ? li : lj) : -1;
    }
}

int topo_affinity_compute(const struct topo_model *m, struct topo_affinity *a)
{
    memset(a, 0, sizeof(*a));
    a->ngpus = m->ngpus;
    a->cols = xalloc_zero((size_t)(m->nnics ? m->nnics : 1), sizeof(int));
    for (int i = 0; i < m->nnics; i++)
        if (m->nics[i].rdma_dev[0] && m->nics[i].pci >= 0)
            a->cols[a->ncols++] = i;
    a->rdma_only = a->ncols > 0;
    if (!a->ncols)
        for (int i = 0; i < m->nnics; i++)
            if (m->nics[i].pci >= 0)
                a->cols[a->ncols++] = i;

    int g = m->ngpus, n = a->ncols;
    a->gg = xalloc_zero((size_t)g * (size_t)g, sizeof(*a->gg));
    a->gn = xalloc_zero((size_t)g * (size_t)n, sizeof(*a->gn));
    a->nn = xalloc_zero((size_t)n * (size_t)n, sizeof(*a->nn));
    a->nearest = xalloc_zero((size_t)(g ? g : 1), sizeof(*a->nearest));
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++)
            gpu_gpu_cell(m, i, j, &a->gg[i * g + j]);
    for (int i = 0; i < g; i++) {
        struct topo_nearest *best = &a->nearest[i];
        best->rel = TOPO_REL_SYS;
        best->n = 0;
        bool best_same = false;
        for (int j = 0; j < n; j++) {
            struct topo_cell *c = &a->gn[i * n + j];
            c->nv_links = -1;
            c->rel = c->pcie =
                topo_affinity_pci(m, m->gpus[i].pci, m->nics[a->cols[j]].pci, &c->same_package);
            /* Nearest = best relation; among equals, a NIC in the GPU's own socket beats
             * one across the SMP interconnect (SYS inside one EPYC/SNC socket). */
            bool better = best->n == 0 || c->rel < best->rel ||
                          (c->rel == best->rel && c->same_package && !best_same);
            if (better) {
                best->rel = c->rel;
                best->n = 0;
                best_same = c->same_package;
            }
            if (c->rel == best->rel && c->same_package == best_same && best->n < 16)
                best->nics[best->n++] = a->cols[j];
        }
        best->same_package = best_same;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            struct topo_cell *c = &a->nn[i * n + j];
            c->nv_links = -1;
            c->rel = c->pcie = topo_affinity_pci(m, m->nics[a->cols[i]].pci,
                                                 m->nics[a->cols[j]].pci, &c->same_package);
        }
    return 0;
}

void topo_affinity_free(struct topo_affinity *a)
{
    free(a->cols);
    free(a->gg);
    free(a->gn);
    free(a->nn);
    free(a->nearest);
    memset(a, 0, sizeof(*a));
}
