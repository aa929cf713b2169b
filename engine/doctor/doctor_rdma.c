/* doctor_rdma: the RDMA ports of one end (link layer, state, active and maximum MTU, the
 * netdev and its MTU, firmware, GIDs and their types) from the topology discovery, which
 * already reads sysfs (topology/topo_sysfs.c) and libibverbs. */
#include "engine/doctor/doctor.h"

#include <stdio.h>
#include <string.h>

#include "topology/topo_affinity.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"

int doctor_roce_mtu(int netdev_mtu)
{
    int room = netdev_mtu - 96;
    for (int m = 4096; m >= 256; m /= 2)
        if (room >= m)
            return m;
    return 0;
}

const struct doctor_rdma_port *doctor_port(const struct doctor_facts *f, const char *dev, int port)
{
    for (int i = 0; i < f->nrdma; i++)
        if ((!dev || !*dev || !strcmp(f->rdma[i].dev, dev)) &&
            (port <= 0 || f->rdma[i].port == port))
            return &f->rdma[i];
    return NULL;
}

/* Whether pci index a is b or above it. */
static bool at_or_above(const struct topo_model *m, int a, int b)
{
    for (int x = b; x >= 0; x = m->pci[x].parent)
        if (x == a)
            return true;
    return false;
}

/* The lint's acs-redirect findings that concern nic: a redirecting bridge above the NIC or
 * above a GPU that shares a PCIe switch with it (topo_lint.c walks those paths). */
static void acs_facts(const struct topo_model *m, const struct topo_findings *lint, int nic,
                      struct doctor_rdma_port *r)
{
    int np = nic >= 0 ? m->nics[nic].pci : -1;
    if (np < 0)
        return;
    size_t o = 0;
    for (int k = 0; k < lint->n; k++) {
        const struct topo_finding *x = &lint->v[k];
        if (strcmp(x->rule, "acs-redirect") || x->pci < 0 || x->pci >= m->npci)
            continue;
        bool ours = at_or_above(m, x->pci, np);
        for (int g = 0; !ours && g < m->ngpus; g++) {
            int gp = m->gpus[g].pci;
            if (gp < 0 || !at_or_above(m, x->pci, gp))
                continue;
            enum topo_rel rel = topo_affinity_pci(m, gp, np, NULL);
            ours = rel == TOPO_REL_PIX || rel == TOPO_REL_PXB;
        }
        if (!ours)
            continue;
        uint16_t c = m->pci[x->pci].acs_ctrl;
        int n = snprintf(r->acs + o, sizeof(r->acs) - o, "%s%s %s%s%s redirect", o ? ", " : "",
                         x->object, (c & 0x4) ? "Request" : "", (c & 0x4) && (c & 0x8) ? "+" : "",
                         (c & 0x8) ? "Completion" : "");
        if (n < 0 || (size_t)n >= sizeof(r->acs) - o)
            break;
        o += (size_t)n;
    }
    for (int g = 0; r->acs[0] && g < m->ngpus; g++) {
        enum topo_rel rel =
            m->gpus[g].pci >= 0 ? topo_affinity_pci(m, m->gpus[g].pci, np, NULL) : TOPO_REL_SYS;
        r->acs_gpus += rel == TOPO_REL_PIX || rel == TOPO_REL_PXB;
    }
}

void doctor_facts_rdma(struct doctor_facts *f, const char *root)
{
    f->nrdma = 0;
    char rootbuf[512] = "";
    if (root)
        snprintf(rootbuf, sizeof(rootbuf), "%s", root);
    struct topo_load_opts o = {
        .sysfs_root = root ? rootbuf : NULL, .no_verbs = root != NULL, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        return;
    doctor_facts_rdma_model(f, m, root);
    topo_model_free(m);
}

void doctor_facts_rdma_model(struct doctor_facts *f, const struct topo_model *m, const char *root)
{
    f->nrdma = 0;
    struct ft_err err = {0};
    struct topo_findings lint = {0};
    topo_lint_run(m, NULL, &lint);
    for (int i = 0; i < m->nports && f->nrdma < DOCTOR_MAX_RDMA; i++) {
        const struct topo_port *p = &m->ports[i];
        if (!topo_port_is_rdma(m, i))
            continue;
        struct doctor_rdma_port *r = &f->rdma[f->nrdma++];
        memset(r, 0, sizeof(*r));
        const struct topo_nic *n = &m->nics[p->nic];
        snprintf(r->dev, sizeof(r->dev), "%s", n->rdma_dev);
        snprintf(r->fw, sizeof(r->fw), "%s", n->fw_ver);
        r->port = p->num;
        snprintf(r->link_layer, sizeof(r->link_layer), "%s",
                 p->valid & TOPO_PORT_V_LL ? topo_link_layer_str(p->link_layer) : "");
        snprintf(r->state, sizeof(r->state), "%s",
                 p->valid & TOPO_PORT_V_STATE ? topo_port_state_str(p->state) : "");
        r->active_mtu = p->valid & TOPO_PORT_V_MTU ? p->active_mtu : DOCTOR_UNKNOWN;
        r->max_mtu = p->valid & TOPO_PORT_V_MAXMTU ? p->max_mtu : DOCTOR_UNKNOWN;
        r->netdev_mtu = DOCTOR_UNKNOWN;
        if (p->netdev >= 0) {
            const struct topo_netdev *nd = &m->netdevs[p->netdev];
            snprintf(r->netdev, sizeof(r->netdev), "%s", nd->name);
            if (nd->valid & TOPO_NET_V_MTU)
                r->netdev_mtu = nd->mtu;
        }
        topo_dcb_init(&r->dcb);
        for (int g = 0; g < p->ngids && r->ngids < DOCTOR_MAX_GIDS; g++) {
            struct doctor_gid *d = &r->gids[r->ngids++];
            d->index = p->gids[g].index;
            snprintf(d->type, sizeof(d->type), "%s",
                     p->valid & TOPO_PORT_V_GIDTYPES ? topo_gid_type_str(p->gids[g].type) : "");
            snprintf(d->ip, sizeof(d->ip), "%s", p->gids[g].ip);
            if (!r->netdev[0] && p->gids[g].ndev[0])
                snprintf(r->netdev, sizeof(r->netdev), "%s", p->gids[g].ndev);
        }
        /* RoCE: the netdev's DCB through dcbnl (live only: a captured tree holds no netlink
         * answers) and its RoCE ECN switches in sysfs. */
        if (!strcmp(r->link_layer, "Ethernet") && r->netdev[0]) {
            if (root)
                snprintf(r->dcb.why, sizeof(r->dcb.why), "DCB is not read from a captured tree");
            else if (topo_dcb_query(r->netdev, &r->dcb, &err) < 0)
                snprintf(r->dcb.why, sizeof(r->dcb.why), "%s", err.msg);
            topo_dcb_ecn_read(root ? root : "", r->netdev, &r->dcb);
        }
        acs_facts(m, &lint, p->nic, r);
    }
    topo_findings_free(&lint);
}
