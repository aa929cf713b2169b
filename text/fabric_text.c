/* fabric_text: text renderings of the fabric section (switches, links, CAs, routes,
 * switch port counters, LLDP neighbours). Units are written out; n/a is never 0. */
#include "text/fabric_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topology/topo_fabric.h"
#include "topology/topo_ibcounters.h"

#define MAX_CA_LINES 64

static void port_state(struct strbuf *sb, const struct topo_fport *p)
{
    if (p->valid & TOPO_FPORT_V_STATE)
        strbuf_printf(sb, "%s/%s", topo_port_state_str(p->state),
                      topo_phys_state_str(p->phys_state));
    else
        strbuf_add(sb, "state n/a");
}

void fabric_text_locals(struct strbuf *sb, const struct topo_model *m, const char *ind)
{
    const struct topo_fabric *f = &m->fabric;
    for (int i = 0; i < f->nlocals; i++) {
        const struct topo_flocal *l = &f->locals[i];
        strbuf_printf(sb, "%s%s port %d", ind, l->ca, l->num);
        if (l->fport < 0) {
            strbuf_printf(sb, ": %s\n", l->status[0] ? l->status : "not discovered");
            continue;
        }
        const struct topo_fport *p = &f->ports[l->fport];
        if ((p->valid & TOPO_FPORT_V_LID) && p->lid)
            strbuf_printf(sb, " (LID %u)", p->lid);
        if (p->remote < 0) {
            strbuf_add(sb, ": no link, ");
            port_state(sb, p);
            strbuf_add(sb, "\n");
            continue;
        }
        char peer[TOPO_TEXT + 16], link[64];
        topo_fport_label(f, p->remote, peer, sizeof(peer));
        topo_fport_link_str(p, link, sizeof(link));
        strbuf_printf(sb, " -> %s%s%s, ", peer, link[0] ? ", " : "", link);
        port_state(sb, p);
        strbuf_add(sb, "\n");
    }
}

static const struct topo_fcounter *find_counter(const struct topo_fabric *f, int fport,
                                                const char *name)
{
    for (int i = 0; i < f->ncounters; i++)
        if (f->counters[i].fport == fport && !strcmp(f->counters[i].name, name))
            return &f->counters[i];
    return NULL;
}

/* Data rate over the window from a words counter, Gb/s; < 0 when unknown. */
static double data_gbps(const struct topo_fabric *f, int fport, const char *n64, const char *n32)
{
    const struct topo_fcounter *c = find_counter(f, fport, n64);
    if (!c)
        c = find_counter(f, fport, n32);
    if (!c || !c->valid0 || !c->valid1 || c->v1 < c->v0 || f->window_s <= 0)
        return -1;
    const struct topo_ibcounter *t = topo_ibc_find(c->name);
    uint64_t bytes = topo_ibc_bytes(t, c->v1 - c->v0);
    return (double)bytes * 8 / f->window_s / 1e9;
}

static void rate_str(char *buf, size_t len, double gbps)
{
    if (gbps < 0)
        snprintf(buf, len, "n/a");
    else if (gbps >= 1)
        snprintf(buf, len, "%.3g Gb/s", gbps);
    else
        snprintf(buf, len, "%.3g Mb/s", gbps * 1e3);
}

void fabric_text_counters(struct strbuf *sb, const struct topo_model *m, int fport)
{
    const struct topo_fabric *f = &m->fabric;
    static const char *const shown[] = {"port_xmit_wait",
                                        "port_xmit_discards",
                                        "symbol_error",
                                        "link_downed",
                                        "port_rcv_errors",
                                        "link_error_recovery",
                                        "local_link_integrity_errors"};
    int listed = 0, zero = 0, unknown = 0;
    for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++) {
        const struct topo_fcounter *c = find_counter(f, fport, shown[k]);
        if (!c)
            continue;
        if (!c->valid0 && !c->valid1) {
            unknown++;
            continue;
        }
        uint64_t last = c->valid1 ? c->v1 : c->v0;
        long long d = c->valid0 && c->valid1 ? (long long)c->v1 - (long long)c->v0 : 0;
        if (last == 0 && d == 0) {
            zero++;
            continue;
        }
        const struct topo_ibcounter *t = topo_ibc_find(c->name);
        strbuf_printf(sb, "%s%s %" PRIu64, listed++ ? ", " : "", t ? t->iba_name : c->name, last);
        if (c->valid0 && c->valid1)
            strbuf_printf(sb, " (%+lld)", d);
    }
    if (zero)
        strbuf_printf(sb, "%s%s0", listed ? ", " : "",
                      listed ? "other errors and XmitWait " : "errors and XmitWait ");
    if (unknown && !listed && !zero)
        strbuf_add(sb, "counters n/a");
    double tx = data_gbps(f, fport, "port_xmit_data_64", "port_xmit_data");
    double rx = data_gbps(f, fport, "port_rcv_data_64", "port_rcv_data");
    if (tx >= 0 || rx >= 0) {
        char a[32], b[32];
        rate_str(a, sizeof(a), tx);
        rate_str(b, sizeof(b), rx);
        strbuf_printf(sb, "; data out %s, in %s", a, b);
    }
}

static bool has_counters(const struct topo_fabric *f, int fport)
{
    for (int i = 0; i < f->ncounters; i++)
        if (f->counters[i].fport == fport)
            return true;
    return false;
}

void fabric_text_node(struct strbuf *sb, const struct topo_model *m, int node, const char *ind)
{
    const struct topo_fabric *f = &m->fabric;
    const struct topo_fnode *n = &f->nodes[node];
    char lbl[TOPO_TEXT], guid[24];
    topo_fnode_label(f, node, lbl, sizeof(lbl));
    topo_guid_str(n->guid, guid, sizeof(guid));
    strbuf_printf(sb, "%s%s %s, %s", ind, n->type == TOPO_FNODE_SWITCH ? "switch" : "CA", lbl,
                  guid);
    if (n->valid & TOPO_FNODE_V_LID)
        strbuf_printf(sb, ", LID %u", n->lid);
    strbuf_printf(sb, ", %d port%s", n->nports, n->nports == 1 ? "" : "s");
    if ((n->valid & TOPO_FNODE_V_HOPS) && n->local >= 0 && n->local < f->nlocals)
        strbuf_printf(sb, ", %d hop%s from %s port %d", n->hops, n->hops == 1 ? "" : "s",
                      f->locals[n->local].ca, f->locals[n->local].num);
    strbuf_add(sb, "\n");
    int down = 0;
    for (int k = 0; k < n->nfports; k++) {
        int pi = n->first_port + k;
        const struct topo_fport *p = &f->ports[pi];
        if (n->type == TOPO_FNODE_SWITCH && p->num == 0)
            continue;
        if (p->remote < 0) {
            down++;
            continue;
        }
        char peer[TOPO_TEXT + 16], link[64];
        topo_fport_label(f, p->remote, peer, sizeof(peer));
        topo_fport_link_str(p, link, sizeof(link));
        strbuf_printf(sb, "%s  port %-3d -> %s, %s, ", ind, p->num, peer, link[0] ? link : "n/a");
        port_state(sb, p);
        strbuf_add(sb, "\n");
        if (has_counters(f, pi)) {
            strbuf_printf(sb, "%s           ", ind);
            fabric_text_counters(sb, m, pi);
            strbuf_add(sb, "\n");
        }
    }
    if (down)
        strbuf_printf(sb, "%s  %d other port%s without a link\n", ind, down, down == 1 ? "" : "s");
}

void fabric_text_route(struct strbuf *sb, const struct topo_model *m, int ri, const char *ind)
{
    const struct topo_fabric *f = &m->fabric;
    const struct topo_froute *r = &f->routes[ri];
    char a[TOPO_TEXT + 16] = "?", b[TOPO_TEXT + 16] = "?";
    if (r->src >= 0)
        topo_fport_label(f, r->src, a, sizeof(a));
    if (r->dst >= 0)
        topo_fport_label(f, r->dst, b, sizeof(b));
    strbuf_printf(sb, "%s%s -> %s", ind, r->src_spec, r->dst_spec);
    if (r->src >= 0 && r->dst >= 0)
        strbuf_printf(sb, " (%s, LID %u -> %s, LID %u)", a, r->src_lid, b, r->dst_lid);
    strbuf_printf(sb, ": %s", r->status == TOPO_ROUTE_OK ? "ok" : topo_route_status_str(r->status));
    if (r->status == TOPO_ROUTE_OK)
        strbuf_printf(sb, ", %d switch%s", r->nhops, r->nhops == 1 ? "" : "es");
    strbuf_add(sb, "\n");
    for (int k = 0; k < r->nhops; k++) {
        const struct topo_fhop *h = &f->hops[r->first_hop + k];
        char lbl[TOPO_TEXT];
        topo_fnode_label(f, h->node, lbl, sizeof(lbl));
        strbuf_printf(sb, "%s  %s: in port %d, out port ", ind, lbl, h->in_port);
        if (h->out_port < 0) {
            strbuf_add(sb, "n/a\n");
            continue;
        }
        strbuf_printf(sb, "%d", h->out_port);
        int op = topo_fabric_port_of(f, h->node, h->out_port);
        if (op >= 0 && f->ports[op].remote >= 0) {
            char nxt[TOPO_TEXT + 16], link[64];
            topo_fport_label(f, f->ports[op].remote, nxt, sizeof(nxt));
            topo_fport_link_str(&f->ports[op], link, sizeof(link));
            strbuf_printf(sb, " -> %s (%s)", nxt, link[0] ? link : "n/a");
        }
        strbuf_add(sb, "\n");
        if (op >= 0 && has_counters(f, op)) {
            strbuf_printf(sb, "%s    egress: ", ind);
            fabric_text_counters(sb, m, op);
            strbuf_add(sb, "\n");
        }
    }
    if (r->status != TOPO_ROUTE_OK && r->detail[0])
        strbuf_printf(sb, "%s  stopped: %s\n", ind, r->detail);
}

void fabric_text_neighbour(struct strbuf *sb, const struct topo_model *m, int i, const char *ind)
{
    const struct topo_neighbour *n = &m->fabric.neighbours[i];
    strbuf_printf(sb, "%s%s: %s", ind, n->ifname, n->sysname[0] ? n->sysname : n->chassis_id);
    strbuf_printf(sb, " port %s", n->port_id[0] ? n->port_id : "n/a");
    if (n->port_id_type[0])
        strbuf_printf(sb, " (%s)", n->port_id_type);
    if (n->port_desc[0])
        strbuf_printf(sb, " \"%s\"", n->port_desc);
    strbuf_printf(sb, ", mgmt %s", n->mgmt_addr[0] ? n->mgmt_addr : "n/a");
    if (n->valid & TOPO_NB_V_VLAN)
        strbuf_printf(sb, ", VLAN %d", n->vlan);
    else
        strbuf_add(sb, ", VLAN n/a");
    if (n->vlans[0] && strchr(n->vlans, ','))
        strbuf_printf(sb, " (VLANs %s)", n->vlans);
    if (n->protocol[0] && strcmp(n->protocol, "LLDP"))
        strbuf_printf(sb, ", via %s", n->protocol);
    strbuf_add(sb, "\n");
}

void fabric_text(struct strbuf *sb, const struct topo_model *m)
{
    const struct topo_fabric *f = &m->fabric;
    strbuf_add(sb, "Fabric\n");
    if (!f->valid) {
        strbuf_add(sb, "  not discovered (fabtop topo --fabric on a live system; InfiniBand "
                       "discovery needs root)\n");
        return;
    }
    if (f->valid & TOPO_FAB_V_IB) {
        strbuf_printf(sb, "  InfiniBand: %s\n", f->ib_status);
        fabric_text_locals(sb, m, "    ");
        int nsw = 0, nca = 0;
        for (int i = 0; i < f->nnodes; i++) {
            nsw += f->nodes[i].type == TOPO_FNODE_SWITCH;
            nca += f->nodes[i].type != TOPO_FNODE_SWITCH;
        }
        if (nsw) {
            strbuf_add(sb, "  Switches:\n");
            for (int i = 0; i < f->nnodes; i++)
                if (f->nodes[i].type == TOPO_FNODE_SWITCH)
                    fabric_text_node(sb, m, i, "    ");
        }
        if (nca) {
            strbuf_add(sb, "  Channel adapters (hops = cables from the local port):\n");
            int shown = 0;
            for (int i = 0; i < f->nnodes; i++) {
                const struct topo_fnode *n = &f->nodes[i];
                if (n->type == TOPO_FNODE_SWITCH)
                    continue;
                if (shown++ >= MAX_CA_LINES)
                    continue;
                char lbl[TOPO_TEXT], guid[24];
                topo_fnode_label(f, i, lbl, sizeof(lbl));
                topo_guid_str(n->guid, guid, sizeof(guid));
                strbuf_printf(sb, "    %s, %s", lbl, guid);
                if (n->valid & TOPO_FNODE_V_LID)
                    strbuf_printf(sb, ", LID %u", n->lid);
                if (n->valid & TOPO_FNODE_V_HOPS)
                    strbuf_printf(sb, ", %d hop%s", n->hops, n->hops == 1 ? "" : "s");
                for (int k = 0; k < n->nfports; k++) {
                    const struct topo_fport *p = &f->ports[n->first_port + k];
                    if (p->remote < 0)
                        continue;
                    char peer[TOPO_TEXT + 16], link[64];
                    topo_fport_label(f, p->remote, peer, sizeof(peer));
                    topo_fport_link_str(p, link, sizeof(link));
                    strbuf_printf(sb, "; port %d -> %s%s%s", p->num, peer, link[0] ? ", " : "",
                                  link);
                }
                strbuf_add(sb, "\n");
            }
            if (shown > MAX_CA_LINES)
                strbuf_printf(sb, "    ... and %d more (all of them in --json)\n",
                              shown - MAX_CA_LINES);
        }
        if (f->nroutes) {
            strbuf_add(sb, "  Routes (walked through the switches' forwarding tables):\n");
            for (int i = 0; i < f->nroutes; i++)
                fabric_text_route(sb, m, i, "    ");
        }
        if (f->valid & TOPO_FAB_V_COUNTERS) {
            if (f->window_s > 0)
                strbuf_printf(sb,
                              "  Switch port counters: two samples %g s apart, changes in "
                              "parentheses\n",
                              f->window_s);
            else
                strbuf_add(sb, "  Switch port counters: one sample (--window 0), no changes\n");
        }
    }
    if (f->valid & TOPO_FAB_V_LLDP) {
        strbuf_printf(sb, "  Ethernet neighbours (LLDP): %s\n", f->lldp_status);
        for (int i = 0; i < f->nneighbours; i++)
            fabric_text_neighbour(sb, m, i, "    ");
    }
    if (f->nnotes) {
        strbuf_add(sb, "  Notes:\n");
        for (int i = 0; i < f->nnotes; i++)
            strbuf_printf(sb, "    - %s\n", f->notes[i]);
    }
}
