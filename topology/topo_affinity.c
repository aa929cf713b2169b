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

enum topo_tristate topo_nic_up(const struct topo_model *m, int nic)
{
    const struct topo_nic *n = &m->nics[nic];
    bool known = false;
    for (int p = n->first_port; p < n->first_port + n->nports && p < m->nports; p++) {
        const struct topo_port *pt = &m->ports[p];
        if (!(pt->valid & TOPO_PORT_V_STATE) || pt->state == TOPO_PORT_STATE_UNKNOWN)
            continue;
        if (pt->state == TOPO_PORT_ACTIVE || pt->state == TOPO_PORT_ACTIVE_DEFER)
            return TOPO_YES;
        known = true;
    }
    if (known)
        return TOPO_NO;
    /* A plain network function (or an RDMA one whose ports say nothing): its netdevs. */
    for (int d = 0; d < m->nnetdevs; d++) {
        const struct topo_netdev *nd = &m->netdevs[d];
        if (nd->nic != nic || !(nd->valid & TOPO_NET_V_OPER))
            continue;
        if (!strcmp(nd->operstate, "up"))
            return TOPO_YES;
        if (!strcmp(nd->operstate, "down"))
            known = true;
    }
    return known ? TOPO_NO : TOPO_UNKNOWN;
}

/* Put the nearest NICs of GPU i that can carry traffic first (stable), count them, and when
 * none can, find the nearest NIC that can. */
static void rank_usable(const struct topo_model *m, struct topo_affinity *a, int i)
{
    struct topo_nearest *ne = &a->nearest[i];
    int order[16], k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < ne->n; j++) {
            enum topo_tristate up = topo_nic_up(m, ne->nics[j]);
            if ((up != TOPO_NO) == (pass == 0))
                order[k++] = ne->nics[j];
        }
    ne->nup = 0;
    for (int j = 0; j < ne->n; j++) {
        ne->nics[j] = order[j];
        ne->up[j] = topo_nic_up(m, order[j]);
        ne->nup += ne->up[j] != TOPO_NO;
    }
    ne->alt = -1;
    if (ne->n == 0 || ne->nup > 0)
        return;
    for (int j = 0; j < a->ncols; j++) {
        const struct topo_cell *c = &a->gn[i * a->ncols + j];
        if (topo_nic_up(m, a->cols[j]) == TOPO_NO)
            continue;
        if (ne->alt < 0 || c->rel < ne->alt_rel ||
            (c->rel == ne->alt_rel && c->same_package && !ne->alt_same_package)) {
            ne->alt = a->cols[j];
            ne->alt_rel = c->rel;
            ne->alt_same_package = c->same_package;
        }
    }
}

void topo_nearest_str(const struct topo_model *m, const struct topo_nearest *ne, char *buf,
                      size_t len)
{
    struct strbuf sb;
    strbuf_init(&sb);
    if (!ne->n) {
        strbuf_add(&sb, "none (no NIC)");
    } else {
        char name[64];
        for (int k = 0; k < ne->n; k++) {
            topo_nic_name(m, ne->nics[k], name, sizeof(name));
            strbuf_printf(&sb, "%s%s%s", k ? ", " : "", name, ne->up[k] == TOPO_NO ? " DOWN" : "");
        }
        strbuf_printf(&sb, " (%s%s)", topo_rel_str(ne->rel),
                      ne->rel == TOPO_REL_SYS && ne->same_package ? ", same socket" : "");
        if (ne->nup == 0 && ne->alt >= 0) {
            topo_nic_name(m, ne->alt, name, sizeof(name));
            strbuf_printf(&sb, "; usable: %s (%s%s)", name, topo_rel_str(ne->alt_rel),
                          ne->alt_rel == TOPO_REL_SYS && ne->alt_same_package ? ", same socket"
                                                                              : "");
        } else if (ne->nup == 0) {
            strbuf_add(&sb, "; no usable NIC");
        }
    }
    snprintf(buf, len, "%s", sb.s);
    strbuf_free(&sb);
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
        rank_usable(m, a, i);
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
