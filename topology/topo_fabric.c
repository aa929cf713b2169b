/* topo_fabric: appenders, derived links, lookups, names and the PortInfo width/speed
 * encodings for the model's fabric section. Pure data: no MAD I/O, no printing. */
/* strcasestr is a GNU extension. */
#define _GNU_SOURCE
#include "topology/topo_fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

/* Grow an array by one zeroed element; capacity doubles at powers of two. */
static void *grow(void *arr, int n, size_t size)
{
    if (n == 0 || (n & (n - 1)) == 0)
        arr = xalloc_resize(arr, (size_t)(n ? 2 * n : 4) * size);
    memset((char *)arr + (size_t)n * size, 0, size);
    return arr;
}

int topo_fabric_add_node(struct topo_fabric *f)
{
    f->nodes = grow(f->nodes, f->nnodes, sizeof(*f->nodes));
    struct topo_fnode *n = &f->nodes[f->nnodes];
    n->hops = -1;
    n->local = -1;
    n->first_port = -1;
    return f->nnodes++;
}

int topo_fabric_add_port(struct topo_fabric *f)
{
    f->ports = grow(f->ports, f->nports, sizeof(*f->ports));
    struct topo_fport *p = &f->ports[f->nports];
    p->node = -1;
    p->remote = -1;
    return f->nports++;
}

int topo_fabric_add_local(struct topo_fabric *f)
{
    f->locals = grow(f->locals, f->nlocals, sizeof(*f->locals));
    f->locals[f->nlocals].port = -1;
    f->locals[f->nlocals].fport = -1;
    return f->nlocals++;
}

int topo_fabric_add_route(struct topo_fabric *f)
{
    f->routes = grow(f->routes, f->nroutes, sizeof(*f->routes));
    struct topo_froute *r = &f->routes[f->nroutes];
    r->src = r->dst = -1;
    r->first_hop = f->nhops;
    return f->nroutes++;
}

int topo_fabric_add_hop(struct topo_fabric *f)
{
    f->hops = grow(f->hops, f->nhops, sizeof(*f->hops));
    f->hops[f->nhops].node = -1;
    return f->nhops++;
}

int topo_fabric_add_counter(struct topo_fabric *f)
{
    f->counters = grow(f->counters, f->ncounters, sizeof(*f->counters));
    f->counters[f->ncounters].fport = -1;
    return f->ncounters++;
}

int topo_fabric_add_neighbour(struct topo_fabric *f)
{
    f->neighbours = grow(f->neighbours, f->nneighbours, sizeof(*f->neighbours));
    f->neighbours[f->nneighbours].netdev = -1;
    return f->nneighbours++;
}

void topo_fabric_note(struct topo_fabric *f, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (int i = 0; i < f->nnotes; i++)
        if (!strcmp(f->notes[i], buf))
            return;
    f->notes = grow(f->notes, f->nnotes, sizeof(*f->notes));
    f->notes[f->nnotes++] = xalloc_strdup(buf);
}

void topo_fabric_free(struct topo_fabric *f)
{
    for (int i = 0; i < f->nnotes; i++)
        free(f->notes[i]);
    free(f->notes);
    free(f->nodes);
    free(f->ports);
    free(f->links);
    free(f->locals);
    free(f->routes);
    free(f->hops);
    free(f->counters);
    free(f->neighbours);
    memset(f, 0, sizeof(*f));
}

void topo_fabric_finalize(struct topo_fabric *f)
{
    for (int i = 0; i < f->nports; i++) {
        int r = f->ports[i].remote;
        if (r < 0)
            continue;
        if (r >= f->nports || r == i || f->ports[r].remote != i)
            f->ports[i].remote = -1;
    }
    free(f->links);
    f->links = NULL;
    f->nlinks = 0;
    for (int i = 0; i < f->nports; i++) {
        int r = f->ports[i].remote;
        if (r <= i)
            continue;
        f->links = grow(f->links, f->nlinks, sizeof(*f->links));
        f->links[f->nlinks].a = i;
        f->links[f->nlinks].b = r;
        f->nlinks++;
    }
}

int topo_fabric_find_node(const struct topo_fabric *f, uint64_t guid)
{
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i].guid == guid)
            return i;
    return -1;
}

int topo_fabric_port_of(const struct topo_fabric *f, int node, int num)
{
    if (node < 0 || node >= f->nnodes)
        return -1;
    const struct topo_fnode *n = &f->nodes[node];
    for (int k = 0; k < n->nfports; k++) {
        int p = n->first_port + k;
        if (p >= 0 && p < f->nports && f->ports[p].num == num)
            return p;
    }
    return -1;
}

int topo_fabric_find_lid(const struct topo_fabric *f, uint32_t lid)
{
    if (lid == 0)
        return -1;
    for (int i = 0; i < f->nports; i++) {
        const struct topo_fport *p = &f->ports[i];
        if (!(p->valid & TOPO_FPORT_V_LID) || p->lid == 0 || p->node < 0)
            continue;
        const struct topo_fnode *n = &f->nodes[p->node];
        if (n->type == TOPO_FNODE_SWITCH && p->num != 0)
            continue;
        int lmc = p->lmc >= 0 && p->lmc <= 7 ? p->lmc : 0;
        if (lid >= p->lid && lid < p->lid + (1u << lmc))
            return i;
    }
    return -1;
}

int topo_fabric_node_endpoint(const struct topo_fabric *f, int node)
{
    if (node < 0 || node >= f->nnodes)
        return -1;
    const struct topo_fnode *n = &f->nodes[node];
    if (n->type == TOPO_FNODE_SWITCH)
        return topo_fabric_port_of(f, node, 0);
    int first = -1;
    for (int k = 0; k < n->nfports; k++) {
        int p = n->first_port + k;
        const struct topo_fport *fp = &f->ports[p];
        if (first < 0)
            first = p;
        if ((fp->valid & TOPO_FPORT_V_LID) && fp->lid && (fp->valid & TOPO_FPORT_V_STATE) &&
            fp->state == TOPO_PORT_ACTIVE)
            return p;
    }
    return first;
}

/* A number the whole string spells, decimal or 0x-hex; false otherwise. */
static bool parse_number(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || s[0] == '-' || s[0] == '+')
        return false;
    *out = v;
    return true;
}

int topo_fabric_resolve(const struct topo_fabric *f, const char *spec, char *why, size_t len)
{
    uint64_t v;
    if (why && len)
        why[0] = 0;
    if (parse_number(spec, &v)) {
        /* LIDs are 16 bits (unicast up to 0xbfff); anything longer is a GUID. */
        if (v <= 0xffff && strlen(spec) <= 6) {
            int p = topo_fabric_find_lid(f, (uint32_t)v);
            if (p < 0 && why)
                snprintf(why, len, "no port in the discovered fabric has LID %" PRIu64, v);
            return p;
        }
        int n = topo_fabric_find_node(f, v);
        if (n >= 0)
            return topo_fabric_node_endpoint(f, n);
        for (int i = 0; i < f->nports; i++)
            if (f->ports[i].guid == v && f->nodes[f->ports[i].node].type != TOPO_FNODE_SWITCH)
                return i;
        if (why)
            snprintf(why, len, "no node or port in the discovered fabric has GUID 0x%016" PRIx64,
                     v);
        return -1;
    }
    for (int i = 0; i < f->nnodes; i++)
        if (!strcmp(f->nodes[i].desc, spec))
            return topo_fabric_node_endpoint(f, i);
    int found = -1, count = 0;
    for (int i = 0; i < f->nnodes; i++)
        if (strcasestr(f->nodes[i].desc, spec)) {
            found = i;
            count++;
        }
    if (count == 1)
        return topo_fabric_node_endpoint(f, found);
    if (why)
        snprintf(why, len,
                 count ? "'%s' matches %d node descriptions; give more of it, a LID or a GUID"
                       : "no node description in the discovered fabric matches '%s'%.0d",
                 spec, count);
    return -1;
}

const char *topo_fnode_type_str(enum topo_fnode_type t)
{
    switch (t) {
    case TOPO_FNODE_SWITCH:
        return "switch";
    case TOPO_FNODE_CA:
        return "CA";
    case TOPO_FNODE_ROUTER:
        return "router";
    default:
        return "node";
    }
}

const char *topo_route_status_str(enum topo_route_status s)
{
    static const char *const names[] = {"ok",   "no-entry",  "link-down",
                                        "loop", "no-answer", "unresolved"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

void topo_guid_str(uint64_t guid, char *buf, size_t len)
{
    snprintf(buf, len, "0x%016" PRIx64, guid);
}

void topo_fnode_label(const struct topo_fabric *f, int node, char *buf, size_t len)
{
    if (node < 0 || node >= f->nnodes) {
        snprintf(buf, len, "?");
        return;
    }
    const struct topo_fnode *n = &f->nodes[node];
    if (n->desc[0]) {
        snprintf(buf, len, "%s", n->desc);
        return;
    }
    char g[24];
    topo_guid_str(n->guid, g, sizeof(g));
    snprintf(buf, len, "%s %s", topo_fnode_type_str(n->type), g);
}

void topo_fport_label(const struct topo_fabric *f, int port, char *buf, size_t len)
{
    if (port < 0 || port >= f->nports) {
        snprintf(buf, len, "?");
        return;
    }
    char n[TOPO_TEXT];
    topo_fnode_label(f, f->ports[port].node, n, sizeof(n));
    snprintf(buf, len, "%s port %d", n, f->ports[port].num);
}

double topo_fport_rate_gbps(const struct topo_fport *p)
{
    if (!(p->valid & TOPO_FPORT_V_WIDTH) || !(p->valid & TOPO_FPORT_V_SPEED))
        return 0;
    return p->width * p->lane_gbps;
}

void topo_fport_link_str(const struct topo_fport *p, char *buf, size_t len)
{
    bool w = (p->valid & TOPO_FPORT_V_WIDTH) && p->width > 0;
    bool s = (p->valid & TOPO_FPORT_V_SPEED) && p->lane_gbps > 0;
    if (w && s)
        snprintf(buf, len, "%dX %s, %g Gb/s", p->width, p->speed, topo_fport_rate_gbps(p));
    else if (w)
        snprintf(buf, len, "%dX", p->width);
    else if (s)
        snprintf(buf, len, "%s", p->speed);
    else if (len)
        buf[0] = 0;
}

int topo_ib_width_lanes(unsigned code)
{
    switch (code) {
    case 1:
        return 1;
    case 2:
        return 4;
    case 4:
        return 8;
    case 8:
        return 12;
    case 16:
        return 2;
    default:
        return 0;
    }
}

int topo_ib_width_mask_max(unsigned mask)
{
    int best = 0;
    for (unsigned bit = 1; bit <= 16; bit <<= 1) {
        int l = (mask & bit) ? topo_ib_width_lanes(bit) : 0;
        if (l > best)
            best = l;
    }
    return best;
}

/* Nominal lane speeds (Gb/s) of the LinkSpeed and LinkSpeedExt bits, lowest bit first. */
static const double speed_bits[] = {2.5, 5, 10};
static const double ext_bits[] = {14, 25, 50, 100};

double topo_ib_speed_gbps(unsigned active, unsigned ext_active)
{
    for (int i = 0; i < 4; i++)
        if (ext_active == (1u << i))
            return ext_bits[i];
    for (int i = 0; i < 3; i++)
        if (active == (1u << i))
            return speed_bits[i];
    return 0;
}

double topo_ib_speed_mask_max(unsigned mask, unsigned ext_mask)
{
    for (int i = 3; i >= 0; i--)
        if (ext_mask & (1u << i))
            return ext_bits[i];
    for (int i = 2; i >= 0; i--)
        if (mask & (1u << i))
            return speed_bits[i];
    return 0;
}

const char *topo_ib_speed_name(double g)
{
    static const struct {
        double gbps;
        const char *name;
    } names[] = {{2.5, "SDR"}, {5, "DDR"},  {10, "QDR"},  {14, "FDR"},
                 {25, "EDR"},  {50, "HDR"}, {100, "NDR"}, {200, "XDR"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (g > names[i].gbps - 0.01 && g < names[i].gbps + 0.01)
            return names[i].name;
    return "?";
}
