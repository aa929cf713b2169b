/* topo_ibfabric: InfiniBand subnet discovery with libibnetdisc, the route walk through
 * the switches' LinearForwardingTables and the switch PortCounters, with libibmad.
 * Field meanings follow IBA vol 1 (release 1.5) chapter 14 (SMPs) and 16.1 (PerfMgt);
 * field names are rdma-core libibmad's (fields.c). */
#include "topology/topo_ibfabric.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_fabric.h"

#define DEF_TIMEOUT_MS 200
#define DEF_RETRIES    1
#define DEF_ROUTES     32
#define DEF_DEADLINE_S 30.0
#define MAX_LOCALS     16
#define MAX_ROUTE_HOPS 64 /* IBA directed routes stop at 64 hops too */

/* PortInfo:CapabilityMask bit 14, IsExtendedSpeedsSupported (IBA 14.2.5.6; the same bit
 * rdma-core's infiniband-diags tests before decoding LinkSpeedExt*). A switch reports its
 * CapabilityMask on port 0 only. */
#define PI_CAP_EXT_SPEEDS (1u << 14)
/* PerfMgt ClassPortInfo:CapabilityMask (IBA 16.1.3.1): bit 9 PortCountersExtended
 * supported (the full 64-bit set), bit 10 the same without the IETF MIB counters, bit 12
 * PortCounters:PortXmitWait supported; the bits perfquery tests (infiniband-diags,
 * IB_PM_EXT_WIDTH_SUPPORTED, IB_PM_EXT_WIDTH_NOIETF_SUP, IB_PM_PC_XMIT_WAIT_SUP). */
#define PM_CAP_EXT_WIDTH        (1u << 9)
#define PM_CAP_EXT_WIDTH_NOIETF (1u << 10)
#define PM_CAP_XMIT_WAIT        (1u << 12)
/* LinearForwardingTable (IBA 14.2.5.10): 64 one-byte port entries per block, the block
 * number is the attribute modifier; 0xff means no port. */
#define LFT_BLOCK  64
#define LFT_NOPORT 0xff

/* Where to address a fabric node from: the local port (and its discovered fabric) that
 * first saw it, and libibnetdisc's record with its directed route. */
struct nref {
    int local;
    ibnd_node_t *node;
};

struct lft_block {
    int node, block;
    bool ok;
    uint8_t port[LFT_BLOCK];
};

/* Per switch: its PerfMgt capabilities, and whether it stopped answering. */
struct pma_state {
    bool asked, answered, dead;
    uint32_t capmask;
};

struct ctx {
    struct topo_model *m;
    struct topo_fabric *f;
    int timeout_ms, retries;
    double deadline;
    bool deadline_noted;
    ibnd_fabric_t *fab[MAX_LOCALS];
    struct ibmad_port *mp[MAX_LOCALS];
    struct nref *nref; /* parallel to f->nodes */
    struct lft_block *lft;
    int nlft, caplft;
    struct pma_state *pma; /* parallel to f->nodes */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool past_deadline(struct ctx *c)
{
    if (now_s() < c->deadline)
        return false;
    if (!c->deadline_noted)
        topo_fabric_note(c->f, "the time allowed for route walks and counters ran out; the rest "
                               "was not queried (raise it or lower the MAD timeout)");
    c->deadline_noted = true;
    return true;
}

/* ---- local CAs ---- */

static bool is_ib_link_layer(const char *ll)
{
    /* sysfs link_layer says "InfiniBand"; older kernels and simulators say "IB" or "". */
    return !ll[0] || !strcmp(ll, "InfiniBand") || !strcmp(ll, "IB");
}

/* Find this model's port for a CA port (same RDMA device name and number). */
static int model_port(const struct topo_model *m, const char *ca, int num)
{
    int nic = topo_model_find_nic_by_rdma(m, ca);
    if (nic < 0)
        return -1;
    for (int i = 0; i < m->nports; i++)
        if (m->ports[i].nic == nic && m->ports[i].num == num)
            return i;
    return -1;
}

struct local_port {
    char ca[UMAD_CA_NAME_LEN];
    int num;
    uint64_t node_guid;
    unsigned phys_state;
    bool is_switch;
};

/* The IB ports of the local CAs (a switch CA contributes its port 0). */
static int list_local_ports(struct ctx *c, const struct topo_ibfabric_opts *o,
                            struct local_port *out, int max)
{
    char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
    int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
    int count = 0;
    if (n < 0)
        n = 0;
    for (int i = 0; i < n && count < max; i++) {
        if (o->ca && strcmp(o->ca, names[i]))
            continue;
        umad_ca_t ca;
        /* With no umad device at all libibumad still names one default CA ("mthca0"),
         * which then cannot be read: that is "no device", not a note. */
        if (umad_get_ca(names[i], &ca) < 0)
            continue;
        bool sw = ca.node_type == IB_NODE_SWITCH;
        for (int p = sw ? 0 : 1; p <= ca.numports && p < UMAD_CA_MAX_PORTS && count < max; p++) {
            const umad_port_t *up = ca.ports[p];
            if (!up || (o->ca_port && o->ca_port != p))
                continue;
            if (!is_ib_link_layer(up->link_layer)) {
                topo_fabric_note(c->f,
                                 "%s port %d: link layer %s (RoCE): no InfiniBand subnet "
                                 "to discover; its Ethernet neighbour comes from LLDP",
                                 names[i], p, up->link_layer);
                continue;
            }
            struct local_port *lp = &out[count++];
            snprintf(lp->ca, sizeof(lp->ca), "%s", names[i]);
            lp->num = p;
            lp->node_guid = be64toh(ca.node_guid);
            lp->phys_state = up->phys_state;
            lp->is_switch = sw;
        }
        umad_release_ca(&ca);
    }
    return count;
}

/* ---- discovered nodes and ports -> model ---- */

double topo_ib_active_lane(const uint8_t *pi, const uint8_t *epi, bool ext_speeds, char *name,
                           size_t len)
{
    unsigned xact = ext_speeds ? mad_get_field((void *)pi, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F) : 0;
    double g = topo_ib_speed_gbps(mad_get_field((void *)pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F), xact);
    /* FDR10 is not a PortInfo speed: the port says QDR and Mellanox's ExtendedPortInfo
     * (attribute 0xFF90, which libibnetdisc reads with IBND_CONFIG_MLX_EPI from the devices
     * that have it, and leaves zeroed otherwise) sets bit 0 of its LinkSpeedActive. An
     * extended speed, when active, wins (as ibnetdiscover prints it). Lanes run at 10.3125
     * Gb/s with 64b/66b; the kernel's rate counts FDR10 as 10 Gb/s a lane, like QDR. */
    bool fdr10 = epi && !xact && g == 10 &&
                 (mad_get_field((void *)epi, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & 1u);
    if (name && len)
        snprintf(name, len, "%s", fdr10 ? "FDR10" : g > 0 ? topo_ib_speed_name(g) : "");
    return g;
}

static void fill_port(struct topo_fport *fp, ibnd_node_t *n, ibnd_port_t *ip)
{
    uint8_t *pi = ip->info;
    /* A switch's external ports leave CapabilityMask reserved; port 0 speaks for all. */
    uint8_t *cap_pi = n->type == IB_NODE_SWITCH && n->ports[0] ? n->ports[0]->info : pi;
    uint32_t cap = mad_get_field(cap_pi, 0, IB_PORT_CAPMASK_F);
    fp->num = ip->portnum;
    fp->guid = ip->guid;
    unsigned st = mad_get_field(pi, 0, IB_PORT_STATE_F);
    unsigned ph = mad_get_field(pi, 0, IB_PORT_PHYS_STATE_F);
    if (st >= 1 && st <= 5 && ph >= 1 && ph <= 7) {
        fp->state = (enum topo_port_state)st;
        fp->phys_state = (enum topo_phys_state)ph;
        fp->valid |= TOPO_FPORT_V_STATE;
    }
    if (n->type != IB_NODE_SWITCH || ip->portnum == 0) {
        fp->lid = ip->base_lid;
        fp->lmc = ip->lmc;
        fp->valid |= TOPO_FPORT_V_LID;
    }
    if (n->type == IB_NODE_SWITCH && ip->portnum == 0)
        return; /* the management port is virtual: no cable, width or speed */
    bool ext = cap & PI_CAP_EXT_SPEEDS;
    unsigned wsup = mad_get_field(pi, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F);
    unsigned wena = mad_get_field(pi, 0, IB_PORT_LINK_WIDTH_ENABLED_F);
    unsigned ssup = mad_get_field(pi, 0, IB_PORT_LINK_SPEED_SUPPORTED_F);
    unsigned sena = mad_get_field(pi, 0, IB_PORT_LINK_SPEED_ENABLED_F);
    unsigned xsup = ext ? mad_get_field(pi, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F) : 0;
    unsigned xena = ext ? mad_get_field(pi, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F) : 0;
    /* Enabled 255 (width), 15 (speed) and 30 (ext speed) mean "all that is supported". */
    if (wena == 255)
        wena = wsup;
    if (sena == 15)
        sena = ssup;
    if (xena == 30)
        xena = xsup;
    if (wsup) {
        fp->width_sup = topo_ib_width_mask_max(wsup);
        fp->width_ena = topo_ib_width_mask_max(wsup & wena);
        fp->valid |= TOPO_FPORT_V_WIDTH_CAP;
    }
    if (ssup || xsup) {
        fp->lane_sup_gbps = topo_ib_speed_mask_max(ssup, xsup);
        fp->lane_ena_gbps = topo_ib_speed_mask_max(ssup & sena, xsup & xena);
        fp->valid |= TOPO_FPORT_V_SPEED_CAP;
    }
    /* Active width and speed mean something only while the physical link is up. */
    if (!(fp->valid & TOPO_FPORT_V_STATE) || fp->phys_state != TOPO_PHYS_LINKUP)
        return;
    int lanes = topo_ib_width_lanes(mad_get_field(pi, 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
    if (lanes) {
        fp->width = lanes;
        fp->valid |= TOPO_FPORT_V_WIDTH;
    }
    double g = topo_ib_active_lane(pi, ip->ext_info, ext, fp->speed, sizeof(fp->speed));
    if (g > 0) {
        fp->lane_gbps = g;
        fp->valid |= TOPO_FPORT_V_SPEED;
    }
}

static enum topo_fnode_type node_type(int t)
{
    return t == IB_NODE_SWITCH   ? TOPO_FNODE_SWITCH
           : t == IB_NODE_ROUTER ? TOPO_FNODE_ROUTER
                                 : TOPO_FNODE_CA;
}

static void nref_grow(struct ctx *c)
{
    c->nref = xalloc_resize(c->nref, (size_t)(c->f->nnodes + 1) * sizeof(*c->nref));
}

/* Switches first, then CAs and routers, each by description and GUID: a stable order
 * that does not depend on the order MADs came back in. */
static int node_cmp(const void *pa, const void *pb)
{
    const ibnd_node_t *a = *(ibnd_node_t *const *)pa, *b = *(ibnd_node_t *const *)pb;
    int ta = a->type == IB_NODE_SWITCH ? 0 : a->type, tb = b->type == IB_NODE_SWITCH ? 0 : b->type;
    if (ta != tb)
        return ta - tb;
    int d = strncmp(a->nodedesc, b->nodedesc, IB_SMP_DATA_SIZE);
    if (d)
        return d;
    return a->guid < b->guid ? -1 : a->guid > b->guid;
}

/* Add the nodes and ports of one discovered fabric that are not known yet. */
static void merge_fabric(struct ctx *c, int li, ibnd_fabric_t *fab)
{
    struct topo_fabric *f = c->f;
    int count = 0;
    for (ibnd_node_t *n = fab->nodes; n; n = n->next)
        count++;
    ibnd_node_t **order = xalloc_zero((size_t)count + 1, sizeof(*order));
    count = 0;
    for (ibnd_node_t *n = fab->nodes; n; n = n->next)
        order[count++] = n;
    qsort(order, (size_t)count, sizeof(*order), node_cmp);
    for (int oi = 0; oi < count; oi++) {
        ibnd_node_t *n = order[oi];
        if (topo_fabric_find_node(f, n->guid) >= 0)
            continue;
        nref_grow(c);
        int k = topo_fabric_add_node(f);
        c->nref[k].local = li;
        c->nref[k].node = n;
        struct topo_fnode *fn = &f->nodes[k];
        fn->type = node_type(n->type);
        fn->guid = n->guid;
        fn->sys_guid = mad_get_field64(n->info, 0, IB_NODE_SYSTEM_GUID_F);
        fn->nports = n->numports;
        fn->vendor_id = mad_get_field(n->info, 0, IB_NODE_VENDORID_F);
        fn->device_id = (uint16_t)mad_get_field(n->info, 0, IB_NODE_DEVID_F);
        fn->valid |= TOPO_FNODE_V_IDS;
        /* NodeDescription is 64 bytes, NUL-padded, not always terminated. */
        snprintf(fn->desc, sizeof(fn->desc), "%.*s", IB_SMP_DATA_SIZE, n->nodedesc);
        size_t L = strlen(fn->desc);
        while (L && (fn->desc[L - 1] == ' ' || fn->desc[L - 1] == '\n'))
            fn->desc[--L] = 0;
        for (int p = 0; p <= n->numports; p++) {
            ibnd_port_t *ip = n->ports ? n->ports[p] : NULL;
            if (!ip)
                continue;
            int pk = topo_fabric_add_port(f);
            struct topo_fport *fp = &f->ports[pk];
            fp->node = k;
            fill_port(fp, n, ip);
            fn = &f->nodes[k];
            if (fn->first_port < 0)
                fn->first_port = pk;
            fn->nfports++;
            if (!(fn->valid & TOPO_FNODE_V_LID) && (fp->valid & TOPO_FPORT_V_LID) && fp->lid) {
                fn->lid = fp->lid;
                fn->valid |= TOPO_FNODE_V_LID;
            }
        }
    }
    free(order);
    for (ibnd_node_t *n = fab->nodes; n; n = n->next)
        for (int p = 0; p <= n->numports; p++) {
            ibnd_port_t *ip = n->ports ? n->ports[p] : NULL;
            if (!ip || !ip->remoteport || !ip->remoteport->node)
                continue;
            int a = topo_fabric_port_of(f, topo_fabric_find_node(f, n->guid), p);
            int b = topo_fabric_port_of(f, topo_fabric_find_node(f, ip->remoteport->node->guid),
                                        ip->remoteport->portnum);
            if (a >= 0 && b >= 0 && f->ports[a].remote < 0 && f->ports[b].remote < 0) {
                f->ports[a].remote = b;
                f->ports[b].remote = a;
            }
        }
}

/* Cables from each local port outwards (breadth first); the nearest local port wins. */
static void count_hops(struct topo_fabric *f)
{
    int *queue = xalloc_zero((size_t)(f->nnodes + 1), sizeof(int));
    int *dist = xalloc_zero((size_t)(f->nnodes + 1), sizeof(int));
    for (int li = 0; li < f->nlocals; li++) {
        int lp = f->locals[li].fport;
        if (lp < 0)
            continue;
        for (int i = 0; i < f->nnodes; i++)
            dist[i] = -1;
        int head = 0, tail = 0, start = f->ports[lp].node;
        dist[start] = 0;
        queue[tail++] = start;
        while (head < tail) {
            int u = queue[head++];
            const struct topo_fnode *n = &f->nodes[u];
            for (int k = 0; k < n->nfports; k++) {
                int r = f->ports[n->first_port + k].remote;
                if (r < 0)
                    continue;
                int v = f->ports[r].node;
                if (dist[v] < 0) {
                    dist[v] = dist[u] + 1;
                    queue[tail++] = v;
                }
            }
        }
        for (int i = 0; i < f->nnodes; i++) {
            struct topo_fnode *n = &f->nodes[i];
            if (dist[i] >= 0 && (!(n->valid & TOPO_FNODE_V_HOPS) || dist[i] < n->hops)) {
                n->hops = dist[i];
                n->local = li;
                n->valid |= TOPO_FNODE_V_HOPS;
            }
        }
    }
    free(queue);
    free(dist);
}

/* ---- SMP queries for the route walk ---- */

static struct ibmad_port *node_port(struct ctx *c, int node, ib_portid_t *dr)
{
    const struct nref *r = &c->nref[node];
    if (r->local < 0 || !r->node || !c->mp[r->local])
        return NULL;
    *dr = r->node->path_portid; /* directed route from that local port */
    return c->mp[r->local];
}

/* The forwarding table entry of a switch for a LID: 0..254 a port, LFT_NOPORT none;
 * -1 when the switch did not answer. */
static int lft_entry(struct ctx *c, int node, uint32_t lid)
{
    int block = (int)(lid / LFT_BLOCK);
    for (int i = 0; i < c->nlft; i++)
        if (c->lft[i].node == node && c->lft[i].block == block)
            return c->lft[i].ok ? c->lft[i].port[lid % LFT_BLOCK] : -1;
    if (c->nlft == c->caplft) {
        c->caplft = c->caplft ? 2 * c->caplft : 16;
        c->lft = xalloc_resize(c->lft, (size_t)c->caplft * sizeof(*c->lft));
    }
    struct lft_block *b = &c->lft[c->nlft++];
    memset(b, 0, sizeof(*b));
    b->node = node;
    b->block = block;
    ib_portid_t dr;
    struct ibmad_port *mp = node_port(c, node, &dr);
    uint8_t buf[IB_SMP_DATA_SIZE] = {0};
    if (mp && !past_deadline(c) &&
        smp_query_via(buf, &dr, IB_ATTR_LINEARFORWTBL, (unsigned)block, (unsigned)c->timeout_ms,
                      mp)) {
        memcpy(b->port, buf, LFT_BLOCK);
        b->ok = true;
    }
    return b->ok ? b->port[lid % LFT_BLOCK] : -1;
}

/* Refresh one switch port's state, width and speed with a live PortInfo query: the
 * route report must show the link as it is now, not as discovery saw it. */
static bool refresh_port(struct ctx *c, int fport)
{
    struct topo_fport *fp = &c->f->ports[fport];
    const struct nref *r = &c->nref[fp->node];
    ib_portid_t dr;
    struct ibmad_port *mp = node_port(c, fp->node, &dr);
    uint8_t buf[IB_SMP_DATA_SIZE] = {0};
    if (!mp || past_deadline(c) ||
        !smp_query_via(buf, &dr, IB_ATTR_PORT_INFO, (unsigned)fp->num, (unsigned)c->timeout_ms, mp))
        return false;
    ibnd_port_t tmp = {0};
    memcpy(tmp.info, buf, sizeof(buf));
    /* Mellanox's ExtendedPortInfo (FDR10) as discovery read it. */
    if (r->node && fp->num >= 0 && fp->num <= r->node->numports && r->node->ports &&
        r->node->ports[fp->num])
        memcpy(tmp.ext_info, r->node->ports[fp->num]->ext_info, sizeof(tmp.ext_info));
    tmp.portnum = fp->num;
    tmp.guid = fp->guid;
    /* Keep the switch's port 0 for CapabilityMask, as discovery did. */
    struct topo_fport fresh = {0};
    fill_port(&fresh, r->node, &tmp);
    unsigned keep = fp->valid & TOPO_FPORT_V_LID;
    uint32_t lid = fp->lid;
    int lmc = fp->lmc, remote = fp->remote, node = fp->node;
    *fp = fresh;
    fp->valid = (fp->valid & ~TOPO_FPORT_V_LID) | keep;
    fp->lid = lid;
    fp->lmc = lmc;
    fp->remote = remote;
    fp->node = node;
    return true;
}

static void route_stop(struct topo_froute *r, enum topo_route_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void route_stop(struct topo_froute *r, enum topo_route_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
    va_end(ap);
    r->status = s;
}

/* Walk from the source port to the destination LID through the switches' linear
 * forwarding tables, as a packet would (what ibtracert does): the discovered graph only
 * says which port a cable leaves from; the table says which cable the packet takes. */
static void walk_route(struct ctx *c, int ri)
{
    struct topo_fabric *f = c->f;
    struct topo_froute *r = &f->routes[ri];
    r->first_hop = f->nhops;
    r->nhops = 0;
    /* The destination is a LID; a port of the discovered fabric when known. A LID that
     * discovery did not see (its node did not answer) can still be walked: the switches'
     * tables know where it is. */
    if (r->dst >= 0) {
        const struct topo_fport *d = &f->ports[r->dst];
        if (!(d->valid & TOPO_FPORT_V_LID) || d->lid == 0) {
            route_stop(r, TOPO_ROUTE_UNRESOLVED,
                       "the destination has no LID: no subnet manager has configured the "
                       "subnet");
            return;
        }
        r->dst_lid = d->lid;
    }
    const struct topo_fport *s = &f->ports[r->src];
    r->src_lid = (s->valid & TOPO_FPORT_V_LID) ? s->lid : 0;
    int cur, in_port;
    char lbl[TOPO_TEXT + 16];
    if (f->nodes[s->node].type == TOPO_FNODE_SWITCH) {
        cur = s->node;
        in_port = 0;
    } else {
        topo_fport_label(f, r->src, lbl, sizeof(lbl));
        if (s->remote < 0) {
            route_stop(r, TOPO_ROUTE_DOWN, "the source %s has no link", lbl);
            return;
        }
        cur = f->ports[s->remote].node;
        in_port = f->ports[s->remote].num;
    }
    char *seen = xalloc_zero((size_t)f->nnodes, 1);
    for (int hop = 0;; hop++) {
        char node_lbl[TOPO_TEXT];
        topo_fnode_label(f, cur, node_lbl, sizeof(node_lbl));
        if (f->nodes[cur].type != TOPO_FNODE_SWITCH && in_port > 0) {
            int owner = topo_fabric_find_lid(f, r->dst_lid);
            if (owner >= 0 && f->ports[owner].node == cur) {
                r->dst = owner;
                r->status = TOPO_ROUTE_OK;
                break;
            }
        }
        if (f->nodes[cur].type != TOPO_FNODE_SWITCH) {
            route_stop(r, TOPO_ROUTE_NO_ENTRY,
                       "the walk arrived at %s, which is not the destination LID %u", node_lbl,
                       r->dst_lid);
            break;
        }
        if (seen[cur] || hop >= MAX_ROUTE_HOPS) {
            route_stop(r, TOPO_ROUTE_LOOP, "%s is entered twice: the forwarding tables loop",
                       node_lbl);
            break;
        }
        seen[cur] = 1;
        /* LinearFDBTop (SwitchInfo, IBA 14.2.5.4): entries above it are not valid. */
        const struct nref *nr = &c->nref[cur];
        uint32_t top =
            nr->node ? mad_get_field(nr->node->switchinfo, 0, IB_SW_LINEAR_FDB_TOP_F) : 0xbfff;
        int e = r->dst_lid > top ? LFT_NOPORT : lft_entry(c, cur, r->dst_lid);
        int h = topo_fabric_add_hop(f);
        r = &f->routes[ri];
        f->hops[h].node = cur;
        f->hops[h].in_port = in_port;
        f->hops[h].out_port = e < 0 || e == LFT_NOPORT ? -1 : e;
        r->nhops++;
        if (e < 0 && c->deadline_noted) {
            route_stop(r, TOPO_ROUTE_NO_ANSWER,
                       "stopped at %s: the time allowed for route walks ran out", node_lbl);
            break;
        }
        if (e < 0) {
            route_stop(r, TOPO_ROUTE_NO_ANSWER,
                       "%s did not answer the LinearForwardingTable query within %d ms (x%d)",
                       node_lbl, c->timeout_ms, c->retries + 1);
            break;
        }
        if (e == LFT_NOPORT) {
            route_stop(r, TOPO_ROUTE_NO_ENTRY,
                       "%s has no forwarding table entry for LID %u (LinearFDBTop %u)", node_lbl,
                       r->dst_lid, top);
            break;
        }
        if (e == 0) {
            int p0 = topo_fabric_port_of(f, cur, 0);
            if (p0 >= 0 && topo_fabric_find_lid(f, r->dst_lid) == p0) {
                r->dst = p0;
                r->status = TOPO_ROUTE_OK;
            } else
                route_stop(r, TOPO_ROUTE_NO_ENTRY, "%s forwards LID %u to its own management port",
                           node_lbl, r->dst_lid);
            break;
        }
        int op = topo_fabric_port_of(f, cur, e);
        if (op < 0) {
            route_stop(r, TOPO_ROUTE_NO_ENTRY,
                       "%s forwards LID %u out of port %d, which discovery did not see", node_lbl,
                       r->dst_lid, e);
            break;
        }
        refresh_port(c, op);
        const struct topo_fport *o = &f->ports[op];
        if ((o->valid & TOPO_FPORT_V_STATE) && o->state == TOPO_PORT_ACTIVE && o->remote < 0) {
            route_stop(r, TOPO_ROUTE_NO_ANSWER,
                       "%s forwards LID %u out of port %d, which is up, but the node behind it "
                       "did not answer discovery",
                       node_lbl, r->dst_lid, e);
            break;
        }
        if (!(o->valid & TOPO_FPORT_V_STATE) || o->state != TOPO_PORT_ACTIVE || o->remote < 0) {
            route_stop(r, TOPO_ROUTE_DOWN,
                       "%s forwards LID %u out of port %d, which is %s/%s: packets to it are "
                       "dropped until the subnet manager reroutes",
                       node_lbl, r->dst_lid, e,
                       o->valid & TOPO_FPORT_V_STATE ? topo_port_state_str(o->state) : "unknown",
                       o->valid & TOPO_FPORT_V_STATE ? topo_phys_state_str(o->phys_state)
                                                     : "unknown");
            break;
        }
        cur = f->ports[o->remote].node;
        in_port = f->ports[o->remote].num;
    }
    free(seen);
}

static void add_route(struct ctx *c, int src, int dst, const char *from, const char *to)
{
    struct topo_fabric *f = c->f;
    int k = topo_fabric_add_route(f);
    struct topo_froute *r = &f->routes[k];
    snprintf(r->src_spec, sizeof(r->src_spec), "%s", from);
    snprintf(r->dst_spec, sizeof(r->dst_spec), "%s", to);
    r->src = src;
    r->dst = dst;
    if (src >= 0 && dst >= 0)
        walk_route(c, k);
}

static int parse_routes(struct ctx *c, const struct topo_ibfabric_opts *o, struct ft_err *err)
{
    struct topo_fabric *f = c->f;
    for (int i = 0; i < o->nroutes; i++) {
        const char *spec = o->routes[i];
        const char *comma = strchr(spec, ',');
        if (!comma || comma == spec || !comma[1])
            return ft_err_set(err, -EINVAL,
                              "--route takes SRC,DST (each a LID, a GUID or a node "
                              "description), not '%s'",
                              spec);
        char a[TOPO_NAME], b[TOPO_NAME], why[TOPO_TEXT];
        snprintf(a, sizeof(a), "%.*s", (int)(comma - spec), spec);
        snprintf(b, sizeof(b), "%s", comma + 1);
        int s = topo_fabric_resolve(f, a, why, sizeof(why));
        int d = s >= 0 ? topo_fabric_resolve(f, b, why, sizeof(why)) : -1;
        char *end;
        unsigned long lid = strtoul(b, &end, 0);
        if (s >= 0 && d < 0 && !*end && lid > 0 && lid < 0xc000) {
            /* A unicast LID no discovered port has: walk the tables towards it anyway. */
            int k = topo_fabric_add_route(f);
            struct topo_froute *r = &f->routes[k];
            snprintf(r->src_spec, sizeof(r->src_spec), "%s", a);
            snprintf(r->dst_spec, sizeof(r->dst_spec), "%s", b);
            r->src = s;
            r->dst_lid = (uint32_t)lid;
            walk_route(c, k);
            continue;
        }
        add_route(c, s, d, a, b);
        if (s < 0 || d < 0) {
            struct topo_froute *r = &f->routes[f->nroutes - 1];
            route_stop(r, TOPO_ROUTE_UNRESOLVED, "%s", why);
        }
    }
    return 0;
}

/* From each local port to every other CA, in fabric order, up to the cap. */
static void default_routes(struct ctx *c, int cap)
{
    struct topo_fabric *f = c->f;
    int made = 0, skipped = 0;
    for (int li = 0; li < f->nlocals; li++) {
        int s = f->locals[li].fport;
        if (s < 0)
            continue;
        for (int n = 0; n < f->nnodes; n++) {
            if (f->nodes[n].type != TOPO_FNODE_CA || n == f->ports[s].node)
                continue;
            int d = topo_fabric_node_endpoint(f, n);
            if (d < 0 || !(f->ports[d].valid & TOPO_FPORT_V_LID) || !f->ports[d].lid)
                continue;
            if (made >= cap) {
                skipped++;
                continue;
            }
            char from[TOPO_NAME], to[TOPO_NAME];
            snprintf(from, sizeof(from), "%u", f->ports[s].lid);
            snprintf(to, sizeof(to), "%u", f->ports[d].lid);
            add_route(c, s, d, from, to);
            made++;
        }
    }
    if (skipped)
        topo_fabric_note(f,
                         "routes were walked to the first %d CAs only (%d more); name the ones "
                         "you need with --route SRC,DST",
                         cap, skipped);
}

/* ---- PerfMgt counters ---- */

struct pc_field {
    const char *name; /* topo_ibcounters name */
    enum MAD_FIELDS field;
    bool ext;      /* in PortCountersExtended (64-bit) */
    uint32_t need; /* a ClassPortInfo capability it needs, 0 for none */
};

/* PortCounters (attribute 0x0012) and PortCountersExtended (0x001D) of IBA 16.1 (PerfMgt),
 * with libibmad's field names; with the extended attribute the 64-bit data counters
 * replace the 32-bit ones, which saturate within seconds at HDR rates (2^32 x 4 bytes). */
static const struct pc_field pc_fields[] = {
    {"symbol_error", IB_PC_ERR_SYM_F, false, 0},
    {"link_error_recovery", IB_PC_LINK_RECOVERS_F, false, 0},
    {"link_downed", IB_PC_LINK_DOWNED_F, false, 0},
    {"port_rcv_errors", IB_PC_ERR_RCV_F, false, 0},
    {"port_rcv_remote_physical_errors", IB_PC_ERR_PHYSRCV_F, false, 0},
    {"port_rcv_switch_relay_errors", IB_PC_ERR_SWITCH_REL_F, false, 0},
    {"port_xmit_discards", IB_PC_XMT_DISCARDS_F, false, 0},
    {"port_xmit_constraint_errors", IB_PC_ERR_XMTCONSTR_F, false, 0},
    {"port_rcv_constraint_errors", IB_PC_ERR_RCVCONSTR_F, false, 0},
    {"local_link_integrity_errors", IB_PC_ERR_LOCALINTEG_F, false, 0},
    {"excessive_buffer_overrun_errors", IB_PC_ERR_EXCESS_OVR_F, false, 0},
    {"VL15_dropped", IB_PC_VL15_DROPPED_F, false, 0},
    {"port_xmit_wait", IB_PC_XMT_WAIT_F, false, PM_CAP_XMIT_WAIT},
    {"port_xmit_data", IB_PC_XMT_BYTES_F, false, 0},
    {"port_rcv_data", IB_PC_RCV_BYTES_F, false, 0},
    {"port_xmit_packets", IB_PC_XMT_PKTS_F, false, 0},
    {"port_rcv_packets", IB_PC_RCV_PKTS_F, false, 0},
    {"port_xmit_data_64", IB_PC_EXT_XMT_BYTES_F, true, 0},
    {"port_rcv_data_64", IB_PC_EXT_RCV_BYTES_F, true, 0},
    {"port_xmit_packets_64", IB_PC_EXT_XMT_PKTS_F, true, 0},
    {"port_rcv_packets_64", IB_PC_EXT_RCV_PKTS_F, true, 0},
};

static bool is_data32(const char *name)
{
    return !strcmp(name, "port_xmit_data") || !strcmp(name, "port_rcv_data") ||
           !strcmp(name, "port_xmit_packets") || !strcmp(name, "port_rcv_packets");
}

static int counter_slot(struct topo_fabric *f, int fport, const char *name)
{
    for (int i = 0; i < f->ncounters; i++)
        if (f->counters[i].fport == fport && !strcmp(f->counters[i].name, name))
            return i;
    int k = topo_fabric_add_counter(f);
    f->counters[k].fport = fport;
    snprintf(f->counters[k].name, sizeof(f->counters[k].name), "%s", name);
    return k;
}

/* Ask a switch's PMA (LID-routed GMP to QP1) for one attribute; NULL on no answer. */
static uint8_t *pma_get(struct ctx *c, int node, int port, unsigned attr, uint8_t *buf)
{
    const struct topo_fnode *n = &c->f->nodes[node];
    struct ibmad_port *mp = c->nref[node].local >= 0 ? c->mp[c->nref[node].local] : NULL;
    if (!mp || !(n->valid & TOPO_FNODE_V_LID) || !n->lid || past_deadline(c))
        return NULL;
    ib_portid_t pid;
    memset(&pid, 0, sizeof(pid));
    ib_portid_set(&pid, (int)n->lid, 1, IB_DEFAULT_QP1_QKEY);
    memset(buf, 0, IB_MAD_SIZE);
    return pma_query_via(buf, &pid, port, (unsigned)c->timeout_ms, attr, mp);
}

static void sample_port(struct ctx *c, int fport, bool second)
{
    struct topo_fabric *f = c->f;
    int node = f->ports[fport].node;
    struct pma_state *ps = &c->pma[node];
    char lbl[TOPO_TEXT];
    if (ps->dead)
        return;
    uint8_t buf[IB_MAD_SIZE];
    if (!ps->asked) {
        ps->asked = true;
        if (!(f->nodes[node].valid & TOPO_FNODE_V_LID) || !f->nodes[node].lid) {
            topo_fnode_label(f, node, lbl, sizeof(lbl));
            topo_fabric_note(f,
                             "%s has no LID, so its counters cannot be read (PerfMgt MADs "
                             "are LID-routed): is a subnet manager running?",
                             lbl);
            ps->dead = true;
            return;
        }
        if (pma_get(c, node, 0, CLASS_PORT_INFO, buf)) {
            ps->answered = true;
            ps->capmask = mad_get_field(buf, 0, IB_CPI_CAPMASK_F);
        } else {
            topo_fnode_label(f, node, lbl, sizeof(lbl));
            topo_fabric_note(f,
                             "%s (LID %u) did not answer PerfMgt ClassPortInfo within %d ms "
                             "(x%d): its counters are n/a",
                             lbl, f->nodes[node].lid, c->timeout_ms, c->retries + 1);
            ps->dead = true;
            return;
        }
    }
    int num = f->ports[fport].num;
    bool have_ext = ps->capmask & (PM_CAP_EXT_WIDTH | PM_CAP_EXT_WIDTH_NOIETF);
    uint8_t *pc = pma_get(c, node, num, IB_GSI_PORT_COUNTERS, buf);
    uint8_t ext[IB_MAD_SIZE];
    uint8_t *pe = have_ext ? pma_get(c, node, num, IB_GSI_PORT_COUNTERS_EXT, ext) : NULL;
    if (!pc && !pe && !past_deadline(c)) {
        topo_fnode_label(f, node, lbl, sizeof(lbl));
        topo_fabric_note(f, "%s stopped answering PerfMgt queries (port %d); its counters are n/a",
                         lbl, num);
        ps->dead = true;
    }
    for (size_t i = 0; i < sizeof(pc_fields) / sizeof(pc_fields[0]); i++) {
        const struct pc_field *pf = &pc_fields[i];
        if (pf->need && !(ps->capmask & pf->need))
            continue;
        if (!pf->ext && have_ext && is_data32(pf->name))
            continue;
        if (pf->ext && !have_ext)
            continue;
        uint8_t *src = pf->ext ? pe : pc;
        int k = counter_slot(f, fport, pf->name);
        struct topo_fcounter *x = &f->counters[k];
        uint64_t v = 0;
        if (src)
            v = pf->ext ? mad_get_field64(src, 0, pf->field) : mad_get_field(src, 0, pf->field);
        if (second) {
            x->valid1 = src != NULL;
            x->v1 = v;
        } else {
            x->valid0 = src != NULL;
            x->v0 = v;
        }
    }
}

static void add_unique(int **v, int *n, int x)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i] == x)
            return;
    *v = xalloc_resize(*v, (size_t)(*n + 1) * sizeof(int));
    (*v)[(*n)++] = x;
}

/* The switch ports worth watching: every port a route enters or leaves a switch by, and
 * the switch port each local port is cabled to. */
static void read_counters(struct ctx *c, double window_s)
{
    struct topo_fabric *f = c->f;
    int *ports = NULL, n = 0;
    for (int li = 0; li < f->nlocals; li++) {
        int lp = f->locals[li].fport;
        int peer = lp >= 0 ? f->ports[lp].remote : -1;
        if (peer >= 0 && f->nodes[f->ports[peer].node].type == TOPO_FNODE_SWITCH)
            add_unique(&ports, &n, peer);
    }
    for (int h = 0; h < f->nhops; h++) {
        const struct topo_fhop *hp = &f->hops[h];
        int in = hp->in_port > 0 ? topo_fabric_port_of(f, hp->node, hp->in_port) : -1;
        int out = hp->out_port > 0 ? topo_fabric_port_of(f, hp->node, hp->out_port) : -1;
        if (in >= 0)
            add_unique(&ports, &n, in);
        if (out >= 0)
            add_unique(&ports, &n, out);
    }
    if (n == 0) {
        free(ports);
        return;
    }
    c->pma = xalloc_zero((size_t)f->nnodes, sizeof(*c->pma));
    for (int i = 0; i < n; i++)
        sample_port(c, ports[i], false);
    if (window_s > 0) {
        struct timespec ts = {(time_t)window_s, (long)((window_s - (time_t)window_s) * 1e9)};
        nanosleep(&ts, NULL);
        for (int i = 0; i < n; i++)
            sample_port(c, ports[i], true);
    }
    f->window_s = window_s;
    f->valid |= TOPO_FAB_V_COUNTERS;
    free(ports);
}

/* ---- stderr ----
 * libibumad, libibmad and libibnetdisc report MAD failures on stderr themselves (IBWARN,
 * IBND_ERROR). A library must not print, and the explorer's screen must stay clean, so
 * stderr is parked in a temporary file while MADs fly; what it caught becomes notes. */

struct errcap {
    int saved;
    FILE *f;
};

/* The capture in progress. Some of these libraries (and the umad2sim simulator shim) exit()
 * on a fatal error; then what they said must reach the real stderr, not a temporary file. */
static struct errcap *errcap_active;

static void errcap_atexit(void)
{
    struct errcap *e = errcap_active;
    if (!e || e->saved < 0)
        return;
    errcap_active = NULL;
    fflush(stderr);
    dup2(e->saved, STDERR_FILENO);
    rewind(e->f);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), e->f)) > 0)
        if (fwrite(buf, 1, n, stderr) != n)
            break;
    fflush(stderr);
}

static void errcap_start(struct errcap *e)
{
    static bool registered;
    fflush(stderr);
    e->saved = -1;
    e->f = NULL;
#ifdef __SANITIZE_ADDRESS__
    /* A sanitizer's report is written to fd 2 and ends in _exit: never park it. */
    return;
#endif
    e->f = tmpfile();
    if (!e->f)
        return;
    e->saved = dup(STDERR_FILENO);
    if (e->saved < 0 || dup2(fileno(e->f), STDERR_FILENO) < 0) {
        if (e->saved >= 0)
            close(e->saved);
        e->saved = -1;
        return;
    }
    if (!registered && atexit(errcap_atexit) == 0)
        registered = true;
    errcap_active = e;
}

static void errcap_stop(struct errcap *e, struct topo_fabric *f)
{
    if (!e->f)
        return;
    errcap_active = NULL;
    if (e->saved >= 0) {
        fflush(stderr);
        dup2(e->saved, STDERR_FILENO);
        close(e->saved);
        rewind(e->f);
        char line[512];
        int shown = 0, more = 0;
        while (fgets(line, sizeof(line), e->f)) {
            line[strcspn(line, "\n")] = 0;
            if (!line[0])
                continue;
            if (shown < 5) {
                topo_fabric_note(f, "MAD library: %.300s", line);
                shown++;
            } else {
                more++;
            }
        }
        if (more)
            topo_fabric_note(f, "MAD library: %d more messages like these", more);
    }
    fclose(e->f);
}

/* ---- driver ---- */

static const char *phys_name(unsigned p)
{
    return topo_phys_state_str(p <= 7 ? (enum topo_phys_state)p : TOPO_PHYS_UNKNOWN);
}

/* Can this process open some /dev/infiniband/umad* for reading and writing? */
static bool umad_accessible(void)
{
    DIR *d = opendir("/dev/infiniband");
    bool ok = false;
    struct dirent *de;
    while (d && !ok && (de = readdir(d))) {
        char path[300];
        if (strncmp(de->d_name, "umad", 4))
            continue;
        snprintf(path, sizeof(path), "/dev/infiniband/%s", de->d_name);
        ok = access(path, R_OK | W_OK) == 0;
    }
    if (d)
        closedir(d);
    return ok;
}

static void discover_local(struct ctx *c, const struct local_port *lp, const ibnd_config_t *cfg)
{
    struct topo_fabric *f = c->f;
    int li = topo_fabric_add_local(f);
    struct topo_flocal *l = &f->locals[li];
    snprintf(l->ca, sizeof(l->ca), "%s", lp->ca);
    l->num = lp->num;
    l->port = model_port(c->m, lp->ca, lp->num);
    if (!lp->is_switch && lp->phys_state != 5) {
        snprintf(l->status, sizeof(l->status),
                 "physical state %s: no link, so nothing to discover from this port",
                 phys_name(lp->phys_state));
        return;
    }
    if (li >= MAX_LOCALS) {
        snprintf(l->status, sizeof(l->status), "not discovered: more than %d local IB ports",
                 MAX_LOCALS);
        return;
    }
    errno = 0;
    ibnd_fabric_t *fab = ibnd_discover_fabric(l->ca, lp->num, NULL, (ibnd_config_t *)cfg);
    l = &f->locals[li];
    if (!fab) {
        int e = errno;
        /* Opening /dev/infiniband/umadN is what fails without privileges; libibnetdisc
         * does not always leave errno saying so. */
        if (e == EACCES || e == EPERM || (geteuid() != 0 && !umad_accessible()))
            snprintf(l->status, sizeof(l->status),
                     "cannot open its umad device: needs root or read/write access to "
                     "/dev/infiniband/umad*");
        else
            snprintf(l->status, sizeof(l->status), "discovery failed%s%s", e ? ": " : "",
                     e ? strerror(e) : "");
        return;
    }
    c->fab[li] = fab;
    int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS};
    c->mp[li] = mad_rpc_open_port(l->ca, lp->num, classes, 3);
    if (c->mp[li]) {
        mad_rpc_set_timeout(c->mp[li], c->timeout_ms);
        mad_rpc_set_retries(c->mp[li], c->retries);
    } else {
        topo_fabric_note(f, "%s port %d: cannot open a MAD port for routes and counters: %s", l->ca,
                         lp->num, strerror(errno ? errno : EIO));
    }
    merge_fabric(c, li, fab);
    l = &f->locals[li];
    int node = topo_fabric_find_node(f, lp->node_guid);
    l->fport = topo_fabric_port_of(f, node, lp->num);
    if (l->fport < 0)
        snprintf(l->status, sizeof(l->status),
                 "discovered, but its own node (GUID 0x%016" PRIx64 ") is not in the result",
                 lp->node_guid);
}

static int discover(struct ctx *cp, struct topo_model *m, const struct topo_ibfabric_opts *o,
                    struct ft_err *err, double t0);

int topo_ibfabric_discover(struct topo_model *m, const struct topo_ibfabric_opts *o,
                           struct ft_err *err)
{
    struct topo_fabric *f = &m->fabric;
    struct ctx c = {.m = m, .f = f};
    c.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEF_TIMEOUT_MS;
    c.retries = o->retries >= 0 ? o->retries : DEF_RETRIES;
    f->valid |= TOPO_FAB_V_IB;
    f->mad_timeout_ms = c.timeout_ms;
    f->mad_retries = c.retries;
    double t0 = now_s();

    struct errcap ec;
    errcap_start(&ec);
    int rc = discover(&c, m, o, err, t0);
    errcap_stop(&ec, f);
    return rc;
}

static int discover(struct ctx *cp, struct topo_model *m, const struct topo_ibfabric_opts *o,
                    struct ft_err *err, double t0)
{
    struct ctx c = *cp;
    struct topo_fabric *f = &m->fabric;
    if (umad_init() < 0) {
        snprintf(f->ib_status, sizeof(f->ib_status),
                 "libibumad cannot start (umad_init failed): no InfiniBand management "
                 "stack on this node");
        return 0;
    }
    struct local_port lps[MAX_LOCALS * 2];
    int nlp = list_local_ports(&c, o, lps, MAX_LOCALS * 2);
    if (nlp == 0) {
        snprintf(f->ib_status, sizeof(f->ib_status),
                 o->ca ? "no InfiniBand port on CA %s (check the name with ibstat -l)"
                       : "no InfiniBand management device: no IB HCA, or the ib_umad "
                         "module is not loaded (modprobe ib_umad)%s",
                 o->ca ? o->ca : "");
        umad_done();
        return 0;
    }
    ibnd_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.timeout_ms = (unsigned)c.timeout_ms;
    cfg.retries = (unsigned)c.retries;
    cfg.flags = IBND_CONFIG_MLX_EPI; /* FDR10 on the Mellanox devices that report it */
    for (int i = 0; i < nlp; i++)
        discover_local(&c, &lps[i], &cfg);
    topo_fabric_finalize(f);
    count_hops(f);

    int rc = 0;
    bool any = false;
    for (int i = 0; i < f->nlocals; i++)
        any |= f->locals[i].fport >= 0;
    double t1 = now_s();
    if (any) {
        c.deadline = now_s() + (o->deadline_s > 0 ? o->deadline_s : DEF_DEADLINE_S) +
                     (o->window_s > 0 ? o->window_s : 0);
        if (o->nroutes > 0)
            rc = parse_routes(&c, o, err);
        else
            default_routes(&c, o->max_default_routes > 0 ? o->max_default_routes : DEF_ROUTES);
        if (rc == 0 && !o->no_counters)
            read_counters(&c, o->window_s);
        int nsw = 0, nca = 0;
        for (int i = 0; i < f->nnodes; i++) {
            nsw += f->nodes[i].type == TOPO_FNODE_SWITCH;
            nca += f->nodes[i].type == TOPO_FNODE_CA;
        }
        snprintf(f->ib_status, sizeof(f->ib_status),
                 "%d switch%s, %d CA%s, %d link%s discovered in %.2f s (MAD timeout %d ms, "
                 "%d retr%s)",
                 nsw, nsw == 1 ? "" : "es", nca, nca == 1 ? "" : "s", f->nlinks,
                 f->nlinks == 1 ? "" : "s", t1 - t0, c.timeout_ms, c.retries,
                 c.retries == 1 ? "y" : "ies");
    } else {
        snprintf(f->ib_status, sizeof(f->ib_status),
                 "no subnet discovered from %d local IB port%s (see each port's status)",
                 f->nlocals, f->nlocals == 1 ? "" : "s");
    }
    for (int i = 0; i < MAX_LOCALS; i++) {
        if (c.mp[i])
            mad_rpc_close_port(c.mp[i]);
        if (c.fab[i])
            ibnd_destroy_fabric(c.fab[i]);
    }
    free(c.nref);
    free(c.lft);
    free(c.pma);
    umad_done();
    return rc;
}
