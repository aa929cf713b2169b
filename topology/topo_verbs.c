/* topo_verbs: the libibverbs enricher (live loads only). It opens each verbs device and
 * fills what only verbs reports (active and max MTU, SM SL, LMC) plus anything sysfs left
 * unknown (state, rate, GID types and netdevs via ibv_query_gid_ex). Never aborts a load. */
#include "topology/topo_enrich.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_fabric.h"

static bool applies(const struct topo_model *m, const struct topo_load_opts *o)
{
    (void)m;
    return !o->input && !o->sysfs_root && !o->no_verbs; /* the running system only */
}

/* enum ibv_mtu: 1 = 256 bytes ... 5 = 4096 bytes. */
static int mtu_bytes(int e)
{
    return e >= 1 && e <= 5 ? 128 << e : 0;
}

/* ibv_port_attr.active_speed: 1 SDR, 2 DDR, 4 QDR, 8 FDR10, 16 FDR, 32 EDR, 64 HDR,
 * 128 NDR; per-lane Gb/s as the kernel's rate_show counts them (FDR as 14). */
static double speed_lane(unsigned s, const char **name)
{
    static const struct {
        unsigned bit;
        const char *name;
        double gbps;
    } t[] = {{1, "SDR", 2.5}, {2, "DDR", 5},   {4, "QDR", 10},  {8, "FDR10", 10},
             {16, "FDR", 14}, {32, "EDR", 25}, {64, "HDR", 50}, {128, "NDR", 100}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i].bit == s) {
            *name = t[i].name;
            return t[i].gbps;
        }
    return 0;
}

/* A big-endian GUID as sysfs writes it: "0002:c903:00f9:bfa0". */
static void guid_str(__be64 be, char *buf, size_t len)
{
    uint64_t v = be64toh(be);
    snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(v >> 48) & 0xffff,
             (unsigned)(v >> 32) & 0xffff, (unsigned)(v >> 16) & 0xffff, (unsigned)v & 0xffff);
}

/* The model NIC of a verbs device: by name (the sysfs enricher read the same running
 * system), else by the PCI address its /sys/class/infiniband/NAME/device link names. */
static int find_nic(struct topo_model *m, const char *name)
{
    int nic = topo_model_find_nic_by_rdma(m, name);
    if (nic >= 0)
        return nic;
    char rel[256], base[64];
    struct topo_bdf bdf;
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device", name);
    if (fsutil_link_base("/", rel, base, sizeof(base)) <= 0 || topo_bdf_parse(base, &bdf) < 0)
        return -1;
    int pci = topo_model_find_pci(m, &bdf);
    nic = pci >= 0 ? topo_model_nic_of_pci(m, pci) : -1;
    if (nic >= 0 && m->nics[nic].rdma_dev[0])
        return -1; /* that function already carries another RDMA device */
    if (nic >= 0)
        snprintf(m->nics[nic].rdma_dev, sizeof(m->nics[nic].rdma_dev), "%s", name);
    return nic;
}

static int port_index(const struct topo_model *m, int nic, int num)
{
    const struct topo_nic *n = &m->nics[nic];
    for (int i = n->first_port; i >= 0 && i < n->first_port + n->nports; i++)
        if (m->ports[i].num == num)
            return i;
    return -1;
}

/* The GID table from ibv_query_gid_ex (types and netdevs included); replaces a table
 * whose types sysfs could not give. Unused entries fail with ENODATA. */
static void query_gids(struct ibv_context *ctx, uint8_t portnum, int len, struct topo_port *p)
{
    struct topo_gid *gids = NULL;
    int n = 0, ok = 0;
    for (int i = 0; i < len && i < 4096; i++) {
        struct ibv_gid_entry e;
        if (ibv_query_gid_ex(ctx, portnum, (uint32_t)i, &e, 0) != 0)
            continue;
        ok++;
        const uint8_t *r = e.gid.raw;
        struct in6_addr a;
        memcpy(&a, r, sizeof(a));
        static const uint8_t zero[8] = {0};
        if (!memcmp(r + 8, zero, 8) && (!memcmp(r, zero, 8) || IN6_IS_ADDR_LINKLOCAL(&a)))
            continue; /* all zero, or fe80:: without an interface id: an unused entry */
        struct topo_gid g = {.index = i};
        snprintf(g.gid, sizeof(g.gid),
                 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", r[0],
                 r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
                 r[14], r[15]);
        g.type = e.gid_type == IBV_GID_TYPE_ROCE_V2   ? TOPO_GID_ROCE_V2
                 : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? TOPO_GID_ROCE_V1
                                                      : TOPO_GID_IB;
        char ifname[IF_NAMESIZE] = "";
        if (e.ndev_ifindex && if_indextoname(e.ndev_ifindex, ifname))
            snprintf(g.ndev, sizeof(g.ndev), "%s", ifname);
        if (IN6_IS_ADDR_V4MAPPED(&a))
            inet_ntop(AF_INET, r + 12, g.ip, sizeof(g.ip));
        else if (g.type != TOPO_GID_IB && !IN6_IS_ADDR_LINKLOCAL(&a))
            inet_ntop(AF_INET6, &a, g.ip, sizeof(g.ip));
        gids = xalloc_resize(gids, (size_t)(n + 1) * sizeof(*gids));
        gids[n++] = g;
    }
    if (!ok) {
        free(gids);
        return; /* the kernel answered nothing: keep what sysfs read */
    }
    free(p->gids);
    p->gids = NULL;
    p->ngids = 0;
    for (int i = 0; i < n; i++)
        topo_port_add_gid(p, &gids[i]);
    free(gids);
    p->valid |= TOPO_PORT_V_GIDS;
    if (p->ngids > 0)
        p->valid |= TOPO_PORT_V_GIDTYPES;
}

static void fill_port(struct topo_port *p, const struct ibv_port_attr *a)
{
    if (!(p->valid & TOPO_PORT_V_STATE) && a->state >= IBV_PORT_DOWN &&
        a->state <= IBV_PORT_ACTIVE_DEFER) {
        p->state = (enum topo_port_state)a->state;
        p->valid |= TOPO_PORT_V_STATE;
    }
    if (!(p->valid & TOPO_PORT_V_PHYS) && a->phys_state >= 1 && a->phys_state <= 7) {
        p->phys_state = (enum topo_phys_state)a->phys_state;
        p->valid |= TOPO_PORT_V_PHYS;
    }
    /* UNSPECIFIED stays unknown: old IB providers report it, but so does EFA. */
    if (!(p->valid & TOPO_PORT_V_LL) &&
        (a->link_layer == IBV_LINK_LAYER_INFINIBAND || a->link_layer == IBV_LINK_LAYER_ETHERNET)) {
        p->link_layer =
            a->link_layer == IBV_LINK_LAYER_ETHERNET ? TOPO_LL_ETHERNET : TOPO_LL_INFINIBAND;
        p->valid |= TOPO_PORT_V_LL;
    }
    if (mtu_bytes(a->active_mtu)) {
        p->active_mtu = mtu_bytes(a->active_mtu);
        p->valid |= TOPO_PORT_V_MTU;
    }
    if (mtu_bytes(a->max_mtu)) {
        p->max_mtu = mtu_bytes(a->max_mtu);
        p->valid |= TOPO_PORT_V_MAXMTU;
    }
    if (!(p->valid & TOPO_PORT_V_LID)) {
        p->lid = a->lid;
        p->valid |= TOPO_PORT_V_LID;
    }
    p->lmc = a->lmc;
    if (!(p->valid & TOPO_PORT_V_SMLID)) {
        p->sm_lid = a->sm_lid;
        p->valid |= TOPO_PORT_V_SMLID;
    }
    p->sm_sl = a->sm_sl;
    const char *name = NULL;
    double lane = speed_lane(a->active_speed, &name);
    /* ibv_port_attr.active_width is PortInfo's LinkWidthActive bit (1 = 1X, 2 = 4X, 4 = 8X,
     * 8 = 12X, 16 = 2X; ibv_query_port(3)). */
    int lanes = topo_ib_width_lanes(a->active_width);
    if (!(p->valid & TOPO_PORT_V_RATE) && lane > 0 && lanes > 0) {
        p->rate_gbps = lane * lanes;
        p->width = lanes;
        snprintf(p->speed, sizeof(p->speed), "%s", name);
        p->valid |= TOPO_PORT_V_RATE;
    }
}

static void enrich_device(struct topo_model *m, struct ibv_device *dev)
{
    const char *name = ibv_get_device_name(dev);
    if (!name)
        return;
    int nic = find_nic(m, name);
    if (nic < 0) {
        topo_model_note(m, "verbs: device %s is not in the topology (sysfs could not place it)",
                        name);
        return;
    }
    struct ibv_context *ctx = ibv_open_device(dev);
    if (!ctx) {
        topo_model_note(m, "verbs: cannot open %s: %s (check /dev/infiniband permissions)", name,
                        strerror(errno));
        return;
    }
    struct ibv_device_attr da;
    int rc = ibv_query_device(ctx, &da);
    if (rc) {
        topo_model_note(m, "verbs: ibv_query_device(%s) failed: %s", name, strerror(rc));
        goto out;
    }
    struct topo_nic *n = &m->nics[nic];
    if (!n->fw_ver[0])
        snprintf(n->fw_ver, sizeof(n->fw_ver), "%s", da.fw_ver);
    if (!n->node_guid[0] && da.node_guid)
        guid_str(da.node_guid, n->node_guid, sizeof(n->node_guid));
    if (!n->sys_image_guid[0] && da.sys_image_guid)
        guid_str(da.sys_image_guid, n->sys_image_guid, sizeof(n->sys_image_guid));
    for (int pn = 1; pn <= da.phys_port_cnt; pn++) {
        struct ibv_port_attr pa;
        if ((rc = ibv_query_port(ctx, (uint8_t)pn, &pa)) != 0) {
            topo_model_note(m, "verbs: ibv_query_port(%s, %d) failed: %s", name, pn, strerror(rc));
            continue;
        }
        int k = port_index(m, nic, pn);
        if (k < 0) {
            topo_model_note(m, "verbs: %s port %d is not in the topology (sysfs did not list it)",
                            name, pn);
            continue;
        }
        struct topo_port *p = &m->ports[k];
        fill_port(p, &pa);
        if (!(p->valid & TOPO_PORT_V_GIDTYPES))
            query_gids(ctx, (uint8_t)pn, pa.gid_tbl_len, p);
    }
out:
    ibv_close_device(ctx);
}

static void enrich(struct topo_model *m, const struct topo_load_opts *o)
{
    (void)o;
    int num = 0;
    errno = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (!list) {
        int e = errno;
        if (e == ENOSYS)
            topo_model_note(m,
                            "verbs: this kernel has no RDMA support (ibv_get_device_list: "
                            "%s); verbs facts skipped",
                            strerror(e));
        else
            topo_model_note(m, "verbs: ibv_get_device_list failed: %s; verbs facts skipped",
                            strerror(e ? e : EIO));
        return;
    }
    bool rdma = false;
    for (int i = 0; i < m->nnics; i++)
        rdma |= m->nics[i].rdma_dev[0] != 0;
    if (num == 0 && rdma) /* the kernel has devices that libibverbs cannot open */
        topo_model_note(m, "verbs: no device usable by libibverbs (is the provider library "
                           "installed, e.g. ibverbs-providers?)");
    for (int i = 0; i < num; i++)
        enrich_device(m, list[i]);
    ibv_free_device_list(list);
}

const struct topo_enricher topo_enrich_verbs = {"verbs", applies, enrich};
