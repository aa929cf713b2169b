/* topo_fabric_json: the snapshot's "fabric" section, written and read back exactly.
 * Unknown values are null; GUIDs are "0x%016x" strings; 64-bit counters that a double
 * cannot hold exactly are decimal strings. Links are written for readers and rebuilt
 * from the ports on load (topo_fabric_finalize). */
#include "topology/topo_fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "topology/topo_jsonrd.h"

static const char *const fnode_types[] = {"", "CA", "switch", "router"};
static const char *const port_states[] = {"UNKNOWN", "DOWN",   "INIT",
                                          "ARMED",   "ACTIVE", "ACTIVE_DEFER"};
static const char *const phys_states[] = {
    "Unknown",           "Sleep",  "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
    "LinkErrorRecovery", "PhyTest"};
static const char *const route_states[] = {"ok",   "no-entry",  "link-down",
                                           "loop", "no-answer", "unresolved"};

/* 2^53: the largest range in which a double holds every integer. */
#define EXACT_DOUBLE_MAX 9007199254740992ull
/* Cables on a shortest path: far beyond any subnet (IBA directed routes stop at 64). */
#define MAX_HOPS 1024

/* ---- writing ---- */

static void add_guid(cJSON *o, const char *key, uint64_t g)
{
    char buf[24];
    topo_guid_str(g, buf, sizeof(buf));
    cJSON_AddStringToObject(o, key, buf);
}

static void add_u64(cJSON *o, const char *key, bool valid, uint64_t v)
{
    if (!valid) {
        cJSON_AddNullToObject(o, key);
    } else if (v <= EXACT_DOUBLE_MAX) {
        cJSON_AddNumberToObject(o, key, (double)v);
    } else {
        char buf[24];
        snprintf(buf, sizeof(buf), "%" PRIu64, v);
        cJSON_AddStringToObject(o, key, buf);
    }
}

static cJSON *node_json(const struct topo_fnode *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", topo_fnode_type_str(n->type));
    add_guid(o, "guid", n->guid);
    add_guid(o, "sys_guid", n->sys_guid);
    cJSON_AddStringToObject(o, "desc", n->desc);
    cJSON_AddNumberToObject(o, "nports", n->nports);
    jsonutil_add_num_or_null(o, "vendor_id", n->valid & TOPO_FNODE_V_IDS, n->vendor_id);
    jsonutil_add_num_or_null(o, "device_id", n->valid & TOPO_FNODE_V_IDS, n->device_id);
    jsonutil_add_num_or_null(o, "lid", n->valid & TOPO_FNODE_V_LID, n->lid);
    jsonutil_add_num_or_null(o, "hops", n->valid & TOPO_FNODE_V_HOPS, n->hops);
    if (n->valid & TOPO_FNODE_V_HOPS)
        topo_json_add_idx(o, "local", n->local);
    else
        cJSON_AddNullToObject(o, "local");
    return o;
}

static cJSON *port_json(const struct topo_fport *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "node", p->node);
    cJSON_AddNumberToObject(o, "num", p->num);
    add_guid(o, "guid", p->guid);
    if (p->valid & TOPO_FPORT_V_STATE) {
        cJSON_AddStringToObject(o, "state", topo_port_state_str(p->state));
        cJSON_AddStringToObject(o, "phys_state", topo_phys_state_str(p->phys_state));
    } else {
        cJSON_AddNullToObject(o, "state");
        cJSON_AddNullToObject(o, "phys_state");
    }
    jsonutil_add_num_or_null(o, "lid", p->valid & TOPO_FPORT_V_LID, p->lid);
    jsonutil_add_num_or_null(o, "lmc", p->valid & TOPO_FPORT_V_LID, p->lmc);
    jsonutil_add_num_or_null(o, "width", p->valid & TOPO_FPORT_V_WIDTH, p->width);
    jsonutil_add_num_or_null(o, "width_supported", p->valid & TOPO_FPORT_V_WIDTH_CAP, p->width_sup);
    jsonutil_add_num_or_null(o, "width_enabled", p->valid & TOPO_FPORT_V_WIDTH_CAP, p->width_ena);
    jsonutil_add_num_or_null(o, "lane_gbps", p->valid & TOPO_FPORT_V_SPEED, p->lane_gbps);
    if (p->valid & TOPO_FPORT_V_SPEED)
        cJSON_AddStringToObject(o, "speed", p->speed);
    else
        cJSON_AddNullToObject(o, "speed");
    jsonutil_add_num_or_null(o, "lane_supported_gbps", p->valid & TOPO_FPORT_V_SPEED_CAP,
                             p->lane_sup_gbps);
    jsonutil_add_num_or_null(o, "lane_enabled_gbps", p->valid & TOPO_FPORT_V_SPEED_CAP,
                             p->lane_ena_gbps);
    topo_json_add_idx(o, "remote", p->remote);
    return o;
}

static cJSON *ib_json(const struct topo_fabric *f)
{
    cJSON *ib = cJSON_CreateObject();
    cJSON_AddStringToObject(ib, "status", f->ib_status);
    cJSON_AddNumberToObject(ib, "mad_timeout_ms", f->mad_timeout_ms);
    cJSON_AddNumberToObject(ib, "mad_retries", f->mad_retries);
    cJSON *a = cJSON_AddArrayToObject(ib, "locals");
    for (int i = 0; i < f->nlocals; i++) {
        const struct topo_flocal *l = &f->locals[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "ca", l->ca);
        cJSON_AddNumberToObject(o, "num", l->num);
        topo_json_add_idx(o, "port", l->port);
        topo_json_add_idx(o, "fport", l->fport);
        cJSON_AddStringToObject(o, "status", l->status);
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(ib, "nodes");
    for (int i = 0; i < f->nnodes; i++)
        cJSON_AddItemToArray(a, node_json(&f->nodes[i]));
    a = cJSON_AddArrayToObject(ib, "ports");
    for (int i = 0; i < f->nports; i++)
        cJSON_AddItemToArray(a, port_json(&f->ports[i]));
    a = cJSON_AddArrayToObject(ib, "links");
    for (int i = 0; i < f->nlinks; i++) {
        const struct topo_flink *l = &f->links[i];
        cJSON *o = cJSON_CreateObject();
        char buf[TOPO_TEXT + 16];
        cJSON_AddNumberToObject(o, "a", l->a);
        cJSON_AddNumberToObject(o, "b", l->b);
        topo_fport_label(f, l->a, buf, sizeof(buf));
        cJSON_AddStringToObject(o, "from", buf);
        topo_fport_label(f, l->b, buf, sizeof(buf));
        cJSON_AddStringToObject(o, "to", buf);
        topo_fport_link_str(&f->ports[l->a], buf, sizeof(buf));
        cJSON_AddStringToObject(o, "link", buf);
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(ib, "routes");
    for (int i = 0; i < f->nroutes; i++) {
        const struct topo_froute *r = &f->routes[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "from", r->src_spec);
        cJSON_AddStringToObject(o, "to", r->dst_spec);
        topo_json_add_idx(o, "src", r->src);
        topo_json_add_idx(o, "dst", r->dst);
        cJSON_AddNumberToObject(o, "src_lid", r->src_lid);
        cJSON_AddNumberToObject(o, "dst_lid", r->dst_lid);
        cJSON_AddStringToObject(o, "status", topo_route_status_str(r->status));
        cJSON_AddStringToObject(o, "detail", r->detail);
        cJSON *ha = cJSON_AddArrayToObject(o, "hops");
        for (int k = 0; k < r->nhops; k++) {
            const struct topo_fhop *h = &f->hops[r->first_hop + k];
            cJSON *ho = cJSON_CreateObject();
            topo_json_add_idx(ho, "node", h->node);
            cJSON_AddNumberToObject(ho, "in", h->in_port);
            cJSON_AddNumberToObject(ho, "out", h->out_port);
            cJSON_AddItemToArray(ha, ho);
        }
        cJSON_AddItemToArray(a, o);
    }
    if (f->valid & TOPO_FAB_V_COUNTERS) {
        cJSON *c = cJSON_AddObjectToObject(ib, "counters");
        cJSON_AddNumberToObject(c, "window_s", f->window_s);
        a = cJSON_AddArrayToObject(c, "values");
        for (int i = 0; i < f->ncounters; i++) {
            const struct topo_fcounter *x = &f->counters[i];
            cJSON *o = cJSON_CreateObject();
            topo_json_add_idx(o, "port", x->fport);
            cJSON_AddStringToObject(o, "name", x->name);
            add_u64(o, "v0", x->valid0, x->v0);
            add_u64(o, "v1", x->valid1, x->v1);
            cJSON_AddItemToArray(a, o);
        }
    } else {
        cJSON_AddNullToObject(ib, "counters");
    }
    return ib;
}

static cJSON *lldp_json(const struct topo_fabric *f)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "status", f->lldp_status);
    cJSON *a = cJSON_AddArrayToObject(l, "neighbours");
    for (int i = 0; i < f->nneighbours; i++) {
        const struct topo_neighbour *n = &f->neighbours[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "ifname", n->ifname);
        topo_json_add_idx(o, "netdev", n->netdev);
        cJSON_AddStringToObject(o, "protocol", n->protocol);
        cJSON_AddStringToObject(o, "chassis_id", n->chassis_id);
        cJSON_AddStringToObject(o, "chassis_id_type", n->chassis_id_type);
        cJSON_AddStringToObject(o, "sysname", n->sysname);
        cJSON_AddStringToObject(o, "sysdesc", n->sysdesc);
        cJSON_AddStringToObject(o, "port_id", n->port_id);
        cJSON_AddStringToObject(o, "port_id_type", n->port_id_type);
        cJSON_AddStringToObject(o, "port_desc", n->port_desc);
        cJSON_AddStringToObject(o, "mgmt_addr", n->mgmt_addr);
        jsonutil_add_num_or_null(o, "vlan", n->valid & TOPO_NB_V_VLAN, n->vlan);
        cJSON_AddStringToObject(o, "vlans", n->vlans);
        jsonutil_add_num_or_null(o, "ttl", n->valid & TOPO_NB_V_TTL, n->ttl);
        cJSON_AddItemToArray(a, o);
    }
    return l;
}

cJSON *topo_fabric_to_json(const struct topo_model *m)
{
    const struct topo_fabric *f = &m->fabric;
    if (!f->valid)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (f->valid & TOPO_FAB_V_IB)
        cJSON_AddItemToObject(o, "ib", ib_json(f));
    else
        cJSON_AddNullToObject(o, "ib");
    if (f->valid & TOPO_FAB_V_LLDP)
        cJSON_AddItemToObject(o, "lldp", lldp_json(f));
    else
        cJSON_AddNullToObject(o, "lldp");
    cJSON *a = cJSON_AddArrayToObject(o, "notes");
    for (int i = 0; i < f->nnotes; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(f->notes[i]));
    return o;
}

/* ---- reading ---- */

/* An index member in [-1, hi): null/absent -> -1. */
static int opt_idx(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                   int hi)
{
    int64_t v;
    return topo_jrd_int(c, o, arr, i, key, 0, hi - 1, &v) ? (int)v : -1;
}

static bool get_guid(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                     uint64_t *out)
{
    const char *s = jsonutil_str(o, key);
    char *end;
    if (!s || strncmp(s, "0x", 2)) {
        topo_jrd_bad(c, arr, i, key, "must be a GUID string like \"0x0002c90300a1b2c3\"");
        return false;
    }
    errno = 0;
    *out = strtoull(s, &end, 16);
    if (errno || *end) {
        topo_jrd_bad(c, arr, i, key, "must be a GUID string like \"0x0002c90300a1b2c3\"");
        return false;
    }
    return true;
}

static void load_node(struct topo_jrd *c, const cJSON *o, int i, struct topo_fnode *n, int nlocals)
{
    int t = topo_name_to_enum(jsonutil_str(o, "type"), TOPO_NAMES(fnode_types));
    if (t < 0)
        topo_jrd_bad(c, "nodes", i, "type", "must be switch, CA or router");
    n->type = t < 0 ? TOPO_FNODE_CA : (enum topo_fnode_type)t;
    get_guid(c, o, "nodes", i, "guid", &n->guid);
    get_guid(c, o, "nodes", i, "sys_guid", &n->sys_guid);
    topo_jrd_str(o, "desc", n->desc, sizeof(n->desc));
    int64_t v, w;
    /* NodeInfo: NumPorts is 8 bits, VendorID a 24-bit OUI, DeviceID 16 bits (IBA 14.2.5.3). */
    if (topo_jrd_int(c, o, "nodes", i, "nports", 0, 255, &v))
        n->nports = (int)v;
    if (topo_jrd_int(c, o, "nodes", i, "vendor_id", 0, 0xffffff, &v) &&
        topo_jrd_int(c, o, "nodes", i, "device_id", 0, 0xffff, &w)) {
        n->vendor_id = (uint32_t)v;
        n->device_id = (uint16_t)w;
        n->valid |= TOPO_FNODE_V_IDS;
    }
    if (topo_jrd_int(c, o, "nodes", i, "lid", 0, 0xffff, &v)) {
        n->lid = (uint32_t)v;
        n->valid |= TOPO_FNODE_V_LID;
    }
    if (topo_jrd_int(c, o, "nodes", i, "hops", 0, MAX_HOPS, &v)) {
        n->hops = (int)v;
        n->local = opt_idx(c, o, "nodes", i, "local", nlocals);
        if (n->local < 0) /* hops count cables from one of the locals */
            topo_jrd_bad(c, "nodes", i, "local", "must name a locals entry when hops is given");
        n->valid |= TOPO_FNODE_V_HOPS;
    }
}

static void load_port(struct topo_jrd *c, const cJSON *o, int i, struct topo_fport *p, int nnodes,
                      int nports)
{
    p->node = opt_idx(c, o, "ports", i, "node", nnodes);
    if (p->node < 0)
        topo_jrd_bad(c, "ports", i, "node", "must name a node");
    double v, w;
    int64_t n, k;
    if (topo_jrd_int(c, o, "ports", i, "num", 0, 255, &n))
        p->num = (int)n;
    get_guid(c, o, "ports", i, "guid", &p->guid);
    int s = topo_name_to_enum(jsonutil_str(o, "state"), TOPO_NAMES(port_states));
    int ph = topo_name_to_enum(jsonutil_str(o, "phys_state"), TOPO_NAMES(phys_states));
    if (s >= 0 && ph >= 0) {
        p->state = (enum topo_port_state)s;
        p->phys_state = (enum topo_phys_state)ph;
        p->valid |= TOPO_FPORT_V_STATE;
    }
    if (topo_jrd_int(c, o, "ports", i, "lid", 0, 0xffff, &n) &&
        topo_jrd_int(c, o, "ports", i, "lmc", 0, 7, &k)) {
        p->lid = (uint32_t)n;
        p->lmc = (int)k;
        p->valid |= TOPO_FPORT_V_LID;
    }
    if (topo_jrd_int(c, o, "ports", i, "width", 0, 32, &n)) {
        p->width = (int)n;
        p->valid |= TOPO_FPORT_V_WIDTH;
    }
    if (topo_jrd_int(c, o, "ports", i, "width_supported", 0, 32, &n) &&
        topo_jrd_int(c, o, "ports", i, "width_enabled", 0, 32, &k)) {
        p->width_sup = (int)n;
        p->width_ena = (int)k;
        p->valid |= TOPO_FPORT_V_WIDTH_CAP;
    }
    if (topo_jrd_num(c, o, "ports", i, "lane_gbps", &v)) {
        p->lane_gbps = v;
        topo_jrd_str(o, "speed", p->speed, sizeof(p->speed));
        p->valid |= TOPO_FPORT_V_SPEED;
    }
    if (topo_jrd_num(c, o, "ports", i, "lane_supported_gbps", &v) &&
        topo_jrd_num(c, o, "ports", i, "lane_enabled_gbps", &w)) {
        p->lane_sup_gbps = v;
        p->lane_ena_gbps = w;
        p->valid |= TOPO_FPORT_V_SPEED_CAP;
    }
    p->remote = opt_idx(c, o, "ports", i, "remote", nports);
}

static void load_ib(struct topo_jrd *c, const cJSON *ib, struct topo_model *m)
{
    struct topo_fabric *f = &m->fabric;
    f->valid |= TOPO_FAB_V_IB;
    topo_jrd_str(ib, "status", f->ib_status, sizeof(f->ib_status));
    double v;
    int64_t iv;
    /* As `fabtop topo --mad-timeout/--mad-retries` take them. */
    if (topo_jrd_int(c, ib, "ib", -1, "mad_timeout_ms", 0, 60000, &iv))
        f->mad_timeout_ms = (int)iv;
    if (topo_jrd_int(c, ib, "ib", -1, "mad_retries", -1, 20, &iv))
        f->mad_retries = (int)iv;
    const cJSON *la = topo_jrd_array(c, ib, "locals", true),
                *na = topo_jrd_array(c, ib, "nodes", true),
                *pa = topo_jrd_array(c, ib, "ports", true), *o;
    int nlocals = la ? cJSON_GetArraySize(la) : 0, nnodes = na ? cJSON_GetArraySize(na) : 0;
    int nports = pa ? cJSON_GetArraySize(pa) : 0;
    int i = 0;
    if (na)
        cJSON_ArrayForEach(o, na)
        {
            int k = topo_fabric_add_node(f);
            load_node(c, o, i++, &f->nodes[k], nlocals);
        }
    i = 0;
    if (pa)
        cJSON_ArrayForEach(o, pa)
        {
            int k = topo_fabric_add_port(f);
            load_port(c, o, i++, &f->ports[k], nnodes, nports);
        }
    /* Each node's ports are one contiguous run, in the order they were discovered. */
    for (int p = 0; p < f->nports; p++) {
        int n = f->ports[p].node;
        if (n < 0)
            continue;
        struct topo_fnode *fn = &f->nodes[n];
        if (fn->first_port < 0)
            fn->first_port = p;
        else if (fn->first_port + fn->nfports != p)
            topo_jrd_bad(c, "ports", p, "node",
                         "breaks its node's run of ports (keep them together)");
        fn->nfports++;
    }
    i = 0;
    if (la)
        cJSON_ArrayForEach(o, la)
        {
            int k = topo_fabric_add_local(f);
            struct topo_flocal *l = &f->locals[k];
            topo_jrd_str(o, "ca", l->ca, sizeof(l->ca));
            if (topo_jrd_int(c, o, "locals", i, "num", 0, 255, &iv))
                l->num = (int)iv;
            l->port = opt_idx(c, o, "locals", i, "port", m->nports);
            l->fport = opt_idx(c, o, "locals", i, "fport", nports);
            topo_jrd_str(o, "status", l->status, sizeof(l->status));
            i++;
        }
    const cJSON *ra = topo_jrd_array(c, ib, "routes", true);
    i = 0;
    if (ra)
        cJSON_ArrayForEach(o, ra)
        {
            int k = topo_fabric_add_route(f);
            struct topo_froute *r = &f->routes[k];
            topo_jrd_str(o, "from", r->src_spec, sizeof(r->src_spec));
            topo_jrd_str(o, "to", r->dst_spec, sizeof(r->dst_spec));
            r->src = opt_idx(c, o, "routes", i, "src", nports);
            r->dst = opt_idx(c, o, "routes", i, "dst", nports);
            if (topo_jrd_int(c, o, "routes", i, "src_lid", 0, 0xffff, &iv))
                r->src_lid = (uint32_t)iv;
            if (topo_jrd_int(c, o, "routes", i, "dst_lid", 0, 0xffff, &iv))
                r->dst_lid = (uint32_t)iv;
            int s = topo_name_to_enum(jsonutil_str(o, "status"), TOPO_NAMES(route_states));
            if (s < 0)
                topo_jrd_bad(c, "routes", i, "status", "is not a route status");
            r->status = s < 0 ? TOPO_ROUTE_UNRESOLVED : (enum topo_route_status)s;
            topo_jrd_str(o, "detail", r->detail, sizeof(r->detail));
            const cJSON *ha = topo_jrd_array(c, o, "hops", true), *h;
            r->first_hop = f->nhops;
            int j = 0;
            if (ha)
                cJSON_ArrayForEach(h, ha)
                {
                    int hk = topo_fabric_add_hop(f);
                    struct topo_fhop *hp = &f->hops[hk];
                    hp->node = opt_idx(c, h, "routes.hops", j, "node", nnodes);
                    /* Port numbers; -1: the forwarding table had no port for it. */
                    if (topo_jrd_int(c, h, "routes.hops", j, "in", -1, 255, &iv))
                        hp->in_port = (int)iv;
                    if (topo_jrd_int(c, h, "routes.hops", j, "out", -1, 255, &iv))
                        hp->out_port = (int)iv;
                    j++;
                }
            r->nhops = f->nhops - r->first_hop;
            i++;
        }
    const cJSON *ctr = cJSON_GetObjectItemCaseSensitive(ib, "counters");
    if (cJSON_IsObject(ctr)) {
        f->valid |= TOPO_FAB_V_COUNTERS;
        if (topo_jrd_num(c, ctr, "counters", -1, "window_s", &v))
            f->window_s = v;
        const cJSON *va = topo_jrd_array(c, ctr, "values", true);
        i = 0;
        if (va)
            cJSON_ArrayForEach(o, va)
            {
                int k = topo_fabric_add_counter(f);
                struct topo_fcounter *x = &f->counters[k];
                x->fport = opt_idx(c, o, "counters", i, "port", nports);
                topo_jrd_str(o, "name", x->name, sizeof(x->name));
                x->valid0 = topo_jrd_u64(c, o, "counters", i, "v0", &x->v0);
                x->valid1 = topo_jrd_u64(c, o, "counters", i, "v1", &x->v1);
                i++;
            }
    }
}

static void load_lldp(struct topo_jrd *c, const cJSON *l, struct topo_model *m)
{
    struct topo_fabric *f = &m->fabric;
    f->valid |= TOPO_FAB_V_LLDP;
    topo_jrd_str(l, "status", f->lldp_status, sizeof(f->lldp_status));
    const cJSON *a = topo_jrd_array(c, l, "neighbours", true), *o;
    int i = 0;
    if (!a)
        return;
    cJSON_ArrayForEach(o, a)
    {
        int k = topo_fabric_add_neighbour(f);
        struct topo_neighbour *n = &f->neighbours[k];
        topo_jrd_str(o, "ifname", n->ifname, sizeof(n->ifname));
        n->netdev = opt_idx(c, o, "neighbours", i, "netdev", m->nnetdevs);
        topo_jrd_str(o, "protocol", n->protocol, sizeof(n->protocol));
        topo_jrd_str(o, "chassis_id", n->chassis_id, sizeof(n->chassis_id));
        topo_jrd_str(o, "chassis_id_type", n->chassis_id_type, sizeof(n->chassis_id_type));
        topo_jrd_str(o, "sysname", n->sysname, sizeof(n->sysname));
        topo_jrd_str(o, "sysdesc", n->sysdesc, sizeof(n->sysdesc));
        topo_jrd_str(o, "port_id", n->port_id, sizeof(n->port_id));
        topo_jrd_str(o, "port_id_type", n->port_id_type, sizeof(n->port_id_type));
        topo_jrd_str(o, "port_desc", n->port_desc, sizeof(n->port_desc));
        topo_jrd_str(o, "mgmt_addr", n->mgmt_addr, sizeof(n->mgmt_addr));
        int64_t v;
        /* An 802.1Q VLAN id is 12 bits, an LLDP TTL 16 (IEEE 802.1AB 8.5.4). */
        if (topo_jrd_int(c, o, "neighbours", i, "vlan", 0, 4095, &v)) {
            n->vlan = (int)v;
            n->valid |= TOPO_NB_V_VLAN;
        }
        topo_jrd_str(o, "vlans", n->vlans, sizeof(n->vlans));
        if (topo_jrd_int(c, o, "neighbours", i, "ttl", 0, 65535, &v)) {
            n->ttl = (int)v;
            n->valid |= TOPO_NB_V_TTL;
        }
        i++;
    }
}

int topo_fabric_from_json(const cJSON *o, struct topo_model *m, const char *what,
                          struct ft_err *err)
{
    struct topo_jrd c = {.what = what, .scope = "fabric ", .err = err};
    if (!o || cJSON_IsNull(o))
        return 0;
    if (!cJSON_IsObject(o))
        return ft_err_set(err, -EBADMSG, "%s: \"fabric\" must be an object or null", what);
    const cJSON *ib = cJSON_GetObjectItemCaseSensitive(o, "ib");
    if (cJSON_IsObject(ib))
        load_ib(&c, ib, m);
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "lldp");
    if (cJSON_IsObject(l))
        load_lldp(&c, l, m);
    const cJSON *a = topo_jrd_array(&c, o, "notes", true), *n;
    if (a)
        cJSON_ArrayForEach(n, a) if (cJSON_IsString(n))
            topo_fabric_note(&m->fabric, "%s", n->valuestring);
    topo_fabric_finalize(&m->fabric);
    return c.rc;
}
