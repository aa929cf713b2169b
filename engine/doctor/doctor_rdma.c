/* doctor_rdma: the RDMA ports of one end (link layer, state, active and maximum MTU, the
 * netdev and its MTU, firmware, GIDs and their types) from the topology discovery, which
 * already reads sysfs (topology/topo_sysfs.c) and libibverbs. */
#include "engine/doctor/doctor.h"

#include <stdio.h>
#include <string.h>

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
    }
    topo_model_free(m);
}
