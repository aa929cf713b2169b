/* topo_fablint: lint rules over the fabric section and the ports that face it. Each rule
 * appends findings with a remedy; none fires on a healthy idle fabric (counters alarm on
 * change over the window, never on totals). */
#include "topology/topo_fablint.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "topology/topo_cabling.h"
#include "topology/topo_fabric.h"
#include "topology/topo_ibcounters.h"

static void fmt(char *buf, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, len, f, ap);
    va_end(ap);
}

/* ---- port-ll-mismatch ---- */

/* A port of the same adapter (else of another adapter of the same model) whose link layer
 * differs from ll; LinkUp ones first. -1 if none. */
static int sibling_other_ll(const struct topo_model *m, int port, enum topo_link_layer ll)
{
    const struct topo_port *p = &m->ports[port];
    int ad = m->nics[p->nic].adapter;
    int best = -1, best_score = -1;
    for (int j = 0; j < m->nports; j++) {
        const struct topo_port *q = &m->ports[j];
        if (j == port || !topo_port_is_rdma(m, j) || !(q->valid & TOPO_PORT_V_LL) ||
            q->link_layer == TOPO_LL_UNKNOWN || q->link_layer == ll)
            continue;
        int qad = m->nics[q->nic].adapter;
        bool same_adapter = ad >= 0 && qad == ad;
        bool same_model = ad >= 0 && qad >= 0 && ad < m->nadapters && qad < m->nadapters &&
                          m->adapters[ad].vendor_id == m->adapters[qad].vendor_id &&
                          m->adapters[ad].device_id == m->adapters[qad].device_id;
        if (!same_adapter && !same_model)
            continue;
        int score = (same_adapter ? 2 : 0) +
                    ((q->valid & TOPO_PORT_V_PHYS) && q->phys_state == TOPO_PHYS_LINKUP);
        if (score > best_score) {
            best = j;
            best_score = score;
        }
    }
    return best;
}

void topo_fablint_ll_polling(const struct topo_model *m, const struct topo_lint_opts *o,
                             struct topo_findings *out)
{
    enum topo_link_layer want = o ? o->expect_ll : TOPO_LL_UNKNOWN;
    for (int i = 0; i < m->nports; i++) {
        const struct topo_port *p = &m->ports[i];
        if (!topo_port_is_rdma(m, i) || !(p->valid & TOPO_PORT_V_PHYS) ||
            p->phys_state != TOPO_PHYS_POLLING || !(p->valid & TOPO_PORT_V_LL) ||
            p->link_layer == TOPO_LL_UNKNOWN)
            continue;
        char obj[64], because[200];
        topo_port_label(m, i, obj, sizeof(obj));
        if (want != TOPO_LL_UNKNOWN && p->link_layer != want) {
            fmt(because, sizeof(because), "the fabric is %s (as stated with --expect-link-layer)",
                topo_link_layer_str(want));
        } else {
            int s = sibling_other_ll(m, i, p->link_layer);
            if (s < 0)
                continue;
            char sl[64];
            topo_port_label(m, s, sl, sizeof(sl));
            const struct topo_port *q = &m->ports[s];
            fmt(because, sizeof(because), "its sibling %s runs %s%s", sl,
                topo_link_layer_str(q->link_layer),
                (q->valid & TOPO_PORT_V_PHYS) && q->phys_state == TOPO_PHYS_LINKUP
                    ? " with its link up"
                    : "");
        }
        struct topo_finding *f =
            topo_findings_add(out, "port-ll-mismatch", TOPO_SEV_ERROR, topo_port_pci(m, i), i);
        snprintf(f->object, sizeof(f->object), "%s", obj);
        fmt(f->msg, sizeof(f->msg),
            "stuck in Polling with link layer %s, while %s: an adapter port in %s mode cabled "
            "to a %s switch never links up, so there is no neighbour to compare with",
            topo_link_layer_str(p->link_layer), because, topo_link_layer_str(p->link_layer),
            p->link_layer == TOPO_LL_ETHERNET ? "InfiniBand" : "Ethernet");
        const char *dev = m->nics[p->nic].rdma_dev;
        fmt(f->remedy, sizeof(f->remedy),
            "set the port's link type to the switch's (NVIDIA ConnectX: mlxconfig -d %s set "
            "LINK_TYPE_P%d=%d, then reset the adapter), or cable it to a %s switch",
            dev, p->num, p->link_layer == TOPO_LL_ETHERNET ? 1 : 2,
            topo_link_layer_str(p->link_layer));
    }
}

/* ---- fabric-link-mismatch, fabric-link-degraded ---- */

static bool same_speed(double a, double b)
{
    return fabs(a - b) < 0.01;
}

void topo_fablint_host_vs_switch(const struct topo_model *m, const struct topo_lint_opts *o,
                                 struct topo_findings *out)
{
    (void)o;
    const struct topo_fabric *f = &m->fabric;
    for (int li = 0; li < f->nlocals; li++) {
        const struct topo_flocal *l = &f->locals[li];
        if (l->port < 0 || l->port >= m->nports || l->fport < 0)
            continue;
        int peer = f->ports[l->fport].remote;
        const struct topo_port *hp = &m->ports[l->port];
        if (peer < 0 || !(hp->valid & TOPO_PORT_V_RATE) || hp->width <= 0)
            continue;
        const struct topo_fport *sp = &f->ports[peer];
        double host_lane = hp->rate_gbps / hp->width;
        bool wdiff = (sp->valid & TOPO_FPORT_V_WIDTH) && sp->width != hp->width;
        bool sdiff = (sp->valid & TOPO_FPORT_V_SPEED) && !same_speed(sp->lane_gbps, host_lane);
        if (!wdiff && !sdiff)
            continue;
        char obj[64], sl[TOPO_TEXT + 16], link[64];
        topo_port_label(m, l->port, obj, sizeof(obj));
        topo_fport_label(f, peer, sl, sizeof(sl));
        topo_fport_link_str(sp, link, sizeof(link));
        struct topo_finding *x = topo_findings_add(out, "fabric-link-mismatch", TOPO_SEV_WARN,
                                                   topo_port_pci(m, l->port), l->port);
        snprintf(x->object, sizeof(x->object), "%s", obj);
        fmt(x->msg, sizeof(x->msg),
            "the host sees %dX at %g Gb/s per lane (%g Gb/s), but its switch port %s reports %s",
            hp->width, host_lane, hp->rate_gbps, sl, link[0] ? link : "n/a");
        fmt(x->remedy, sizeof(x->remedy),
            "one side has stale or wrong information: re-read both (ibstat; smpquery portinfo "
            "on the switch), then reseat the cable if they still differ");
    }
    for (int i = 0; i < f->nlinks; i++) {
        const struct topo_fport *a = &f->ports[f->links[i].a], *b = &f->ports[f->links[i].b];
        bool wdiff = (a->valid & b->valid & TOPO_FPORT_V_WIDTH) && a->width != b->width;
        bool sdiff =
            (a->valid & b->valid & TOPO_FPORT_V_SPEED) && !same_speed(a->lane_gbps, b->lane_gbps);
        if (!wdiff && !sdiff)
            continue;
        char la[TOPO_TEXT + 16], lb[TOPO_TEXT + 16], ka[64], kb[64];
        topo_fport_label(f, f->links[i].a, la, sizeof(la));
        topo_fport_label(f, f->links[i].b, lb, sizeof(lb));
        topo_fport_link_str(a, ka, sizeof(ka));
        topo_fport_link_str(b, kb, sizeof(kb));
        struct topo_finding *x =
            topo_findings_add(out, "fabric-link-mismatch", TOPO_SEV_WARN, -1, -1);
        snprintf(x->object, sizeof(x->object), "%.63s", la);
        fmt(x->msg, sizeof(x->msg), "%s reports %s but its peer %s reports %s", la, ka, lb, kb);
        fmt(x->remedy, sizeof(x->remedy),
            "the two ends of one cable disagree: query both again (smpquery portinfo), and "
            "reseat or replace the cable if they still do");
    }
}

/* A link narrower or slower than its ends allow. Three cases, for width and speed alike:
 * below what both ends enable: the link trained down (a cable or lane fault), WARN;
 * below what one end enables: the ends disagree (LinkWidth/SpeedEnabled differ), WARN;
 * below what both support but as both enable: a policy (counted in one INFO). */
void topo_fablint_degraded(const struct topo_model *m, const struct topo_lint_opts *o,
                           struct topo_findings *out)
{
    (void)o;
    const struct topo_fabric *f = &m->fabric;
    int policy = 0, example = -1;
    const char *example_what = "";
    for (int i = 0; i < f->nlinks; i++) {
        bool limited = false;
        int ia = f->links[i].a, ib = f->links[i].b;
        const struct topo_fport *a = &f->ports[ia], *b = &f->ports[ib];
        char la[TOPO_TEXT + 16], lb[TOPO_TEXT + 16];
        topo_fport_label(f, ia, la, sizeof(la));
        topo_fport_label(f, ib, lb, sizeof(lb));
        if ((a->valid & b->valid & TOPO_FPORT_V_WIDTH) &&
            (a->valid & b->valid & TOPO_FPORT_V_WIDTH_CAP)) {
            int sup = a->width_sup < b->width_sup ? a->width_sup : b->width_sup;
            int ena_lo = a->width_ena < b->width_ena ? a->width_ena : b->width_ena;
            int ena_hi = a->width_ena > b->width_ena ? a->width_ena : b->width_ena;
            int w = a->width < b->width ? a->width : b->width;
            const char *lo = a->width_ena <= b->width_ena ? la : lb;
            const char *hi = a->width_ena <= b->width_ena ? lb : la;
            if (w < ena_lo) {
                struct topo_finding *x =
                    topo_findings_add(out, "fabric-link-degraded", TOPO_SEV_WARN, -1, -1);
                snprintf(x->object, sizeof(x->object), "%.63s", la);
                fmt(x->msg, sizeof(x->msg),
                    "the link %s <-> %s trained at %dX although both ends enable %dX: lanes "
                    "failed to come up, it carries %d%% of the bandwidth",
                    la, lb, w, ena_lo, 100 * w / ena_lo);
                fmt(x->remedy, sizeof(x->remedy),
                    "reseat the cable on both ends, then replace it (or the transceiver) if it "
                    "trains narrow again; watch symbol errors on both ports");
            } else if (w < ena_hi && w < sup) {
                struct topo_finding *x =
                    topo_findings_add(out, "fabric-link-degraded", TOPO_SEV_WARN, -1, -1);
                snprintf(x->object, sizeof(x->object), "%.63s", la);
                fmt(x->msg, sizeof(x->msg),
                    "the link %s <-> %s runs %dX: LinkWidthEnabled on %s allows only %dX while "
                    "%s allows %dX (both support %dX)",
                    la, lb, w, lo, ena_lo, hi, ena_hi, sup);
                fmt(x->remedy, sizeof(x->remedy),
                    "enable the full width on %s (the subnet manager's port settings, or "
                    "ibportstate LID PORT width 255), then bounce the port",
                    lo);
            } else if (w < sup) {
                limited = true;
                if (example < 0) {
                    example = i;
                    example_what = "width";
                }
            }
        }
        if ((a->valid & b->valid & TOPO_FPORT_V_SPEED) &&
            (a->valid & b->valid & TOPO_FPORT_V_SPEED_CAP)) {
            double sup = fmin(a->lane_sup_gbps, b->lane_sup_gbps);
            double ena_lo = fmin(a->lane_ena_gbps, b->lane_ena_gbps);
            double ena_hi = fmax(a->lane_ena_gbps, b->lane_ena_gbps);
            double s = fmin(a->lane_gbps, b->lane_gbps);
            /* FDR10 has QDR's lane rate: its name comes from the port, not the rate. */
            const char *sname = topo_ib_speed_name(s);
            if (!strcmp((a->lane_gbps <= b->lane_gbps ? a : b)->speed, "FDR10"))
                sname = "FDR10";
            const char *lo = a->lane_ena_gbps <= b->lane_ena_gbps ? la : lb;
            if (s < ena_lo - 0.01) {
                struct topo_finding *x =
                    topo_findings_add(out, "fabric-link-degraded", TOPO_SEV_WARN, -1, -1);
                snprintf(x->object, sizeof(x->object), "%.63s", la);
                fmt(x->msg, sizeof(x->msg),
                    "the link %s <-> %s trained at %s (%g Gb/s per lane) although both ends "
                    "enable %s (%g Gb/s)",
                    la, lb, sname, s, topo_ib_speed_name(ena_lo), ena_lo);
                fmt(x->remedy, sizeof(x->remedy),
                    "a marginal cable or transceiver trains slower: reseat or replace it and "
                    "check the cable's rated speed");
            } else if (s < ena_hi - 0.01 && s < sup - 0.01) {
                struct topo_finding *x =
                    topo_findings_add(out, "fabric-link-degraded", TOPO_SEV_WARN, -1, -1);
                snprintf(x->object, sizeof(x->object), "%.63s", la);
                fmt(x->msg, sizeof(x->msg),
                    "the link %s <-> %s runs %s: LinkSpeedEnabled on %s allows only %s while the "
                    "other end allows %s",
                    la, lb, sname, lo, topo_ib_speed_name(ena_lo), topo_ib_speed_name(ena_hi));
                fmt(x->remedy, sizeof(x->remedy),
                    "enable the speed on %s (the subnet manager's port settings, or ibportstate "
                    "LID PORT speed 15), then bounce the port",
                    lo);
            } else if (s < sup - 0.01) {
                limited = true;
                if (example < 0) {
                    example = i;
                    example_what = "lane speed";
                }
            }
        }
        policy += limited;
    }
    if (policy) {
        char la[TOPO_TEXT + 16], lb[TOPO_TEXT + 16];
        topo_fport_label(f, f->links[example].a, la, sizeof(la));
        topo_fport_label(f, f->links[example].b, lb, sizeof(lb));
        struct topo_finding *x =
            topo_findings_add(out, "fabric-link-degraded", TOPO_SEV_INFO, -1, -1);
        snprintf(x->object, sizeof(x->object), "%d link%s", policy, policy == 1 ? "" : "s");
        fmt(x->msg, sizeof(x->msg),
            "%d link%s run%s below the width or lane speed both ends support, because both "
            "ends enable no more (first: the %s of %s <-> %s)",
            policy, policy == 1 ? "" : "s", policy == 1 ? "s" : "", example_what, la, lb);
        fmt(x->remedy, sizeof(x->remedy),
            "a policy (cables rated for less, a forced speed)? fine; otherwise raise "
            "LinkWidthEnabled/LinkSpeedEnabled in the subnet manager");
    }
}

/* ---- cabling-plan ---- */

void topo_fablint_cabling(const struct topo_model *m, const struct topo_lint_opts *o,
                          struct topo_findings *out)
{
    if (!o || !o->cabling)
        return;
    const struct topo_cabling *plan = o->cabling;
    const struct topo_fabric *f = &m->fabric;
    if (!(f->valid & TOPO_FAB_V_IB)) {
        struct topo_finding *x = topo_findings_add(out, "cabling-plan", TOPO_SEV_WARN, -1, -1);
        snprintf(x->object, sizeof(x->object), "%.63s", plan->path);
        fmt(x->msg, sizeof(x->msg),
            "a cabling plan was given but no InfiniBand fabric was discovered to compare it "
            "with");
        fmt(x->remedy, sizeof(x->remedy), "run with --fabric on a node with an IB port");
        return;
    }
    struct topo_cabling_diff *d = NULL;
    int n = topo_cabling_compare(f, plan, &d);
    static const char *const remedies[] = {
        "check that the node is powered and cabled, or correct its description or GUID in the "
        "plan",
        "give the node's GUID in the plan (caguid=/switchguid= line, or \"0x...\" in JSON)",
        "seat the cable on both ends (or replace it) and check that both ports are enabled",
        "move the cable to the planned port, or update the plan if the change was intended",
        "add the cable to the plan, or remove it",
    };
    for (int i = 0; i < n; i++) {
        struct topo_finding *x = topo_findings_add(
            out, "cabling-plan",
            d[i].kind == TOPO_CABLING_UNPLANNED ? TOPO_SEV_WARN : TOPO_SEV_ERROR, -1, -1);
        if (d[i].fport >= 0)
            topo_fport_label(f, d[i].fport, x->object, sizeof(x->object));
        else
            snprintf(x->object, sizeof(x->object), "%.63s", plan->path);
        fmt(x->msg, sizeof(x->msg), "%s", d[i].text);
        fmt(x->remedy, sizeof(x->remedy), "%s", remedies[d[i].kind]);
    }
    free(d);
}

/* ---- route-broken ---- */

void topo_fablint_routes(const struct topo_model *m, const struct topo_lint_opts *o,
                         struct topo_findings *out)
{
    (void)o;
    const struct topo_fabric *f = &m->fabric;
    for (int i = 0; i < f->nroutes; i++) {
        const struct topo_froute *r = &f->routes[i];
        if (r->status == TOPO_ROUTE_OK)
            continue;
        struct topo_finding *x = topo_findings_add(
            out, "route-broken",
            r->status == TOPO_ROUTE_UNRESOLVED ? TOPO_SEV_WARN : TOPO_SEV_ERROR, -1, -1);
        snprintf(x->object, sizeof(x->object), "route %.28s -> %.28s", r->src_spec, r->dst_spec);
        fmt(x->msg, sizeof(x->msg), "%s: %s", topo_route_status_str(r->status), r->detail);
        switch (r->status) {
        case TOPO_ROUTE_DOWN:
            fmt(x->remedy, sizeof(x->remedy),
                "the subnet manager has not routed around the dead link: check that it runs "
                "(sminfo) and sweeps, and bring the link back (ibportstate, the cable)");
            break;
        case TOPO_ROUTE_NO_ENTRY:
            fmt(x->remedy, sizeof(x->remedy),
                "the forwarding tables do not cover this LID: check that the subnet manager "
                "runs and has finished a sweep (sminfo; its log)");
            break;
        case TOPO_ROUTE_LOOP:
            fmt(x->remedy, sizeof(x->remedy),
                "the forwarding tables loop: check for two subnet managers fighting, and "
                "force a heavy sweep of the master");
            break;
        case TOPO_ROUTE_NO_ANSWER:
            fmt(x->remedy, sizeof(x->remedy),
                "a switch on the path does not answer SMPs: check its management (smpquery "
                "nodeinfo over a directed route) and its power");
            break;
        default:
            fmt(x->remedy, sizeof(x->remedy),
                "name each end by LID, GUID or node description as the fabric listing shows "
                "them");
            break;
        }
    }
}

/* ---- switch counters ---- */

void topo_fablint_switch_counters(const struct topo_model *m, const struct topo_lint_opts *o,
                                  struct topo_findings *out)
{
    (void)o;
    const struct topo_fabric *f = &m->fabric;
    if (!(f->valid & TOPO_FAB_V_COUNTERS))
        return;
    for (int i = 0; i < f->ncounters; i++) {
        const struct topo_fcounter *e = &f->counters[i];
        const struct topo_ibcounter *c = topo_ibc_find(e->name);
        if (!c || e->fport < 0 || e->fport >= f->nports)
            continue;
        char obj[TOPO_TEXT + 16];
        topo_fport_label(f, e->fport, obj, sizeof(obj));
        bool rose = e->valid0 && e->valid1 && e->v1 > e->v0;
        unsigned long long d = rose ? (unsigned long long)(e->v1 - e->v0) : 0;
        char rate[64] = "";
        if (rose && f->window_s > 0)
            snprintf(rate, sizeof(rate), " in %.3g s", f->window_s);
        if (rose && c->is_error) {
            struct topo_finding *x =
                topo_findings_add(out, "switch-counter-rising", TOPO_SEV_ERROR, -1, -1);
            snprintf(x->object, sizeof(x->object), "%.63s", obj);
            fmt(x->msg, sizeof(x->msg), "%s (%s) rose by %llu, from %llu to %llu%s: %s",
                c->iba_name, e->name, d, (unsigned long long)e->v0, (unsigned long long)e->v1, rate,
                c->meaning);
            fmt(x->remedy, sizeof(x->remedy), "%s", c->action ? c->action : "watch it under load");
        } else if (rose && c->group == TOPO_IBC_CONGESTION) {
            struct topo_finding *x =
                topo_findings_add(out, "switch-xmit-wait", TOPO_SEV_WARN, -1, -1);
            snprintf(x->object, sizeof(x->object), "%.63s", obj);
            fmt(x->msg, sizeof(x->msg),
                "%s rose by %llu ticks%s: this switch egress waited for credits, so the "
                "congestion is at or beyond it, not at the host",
                c->iba_name, d, rate);
            fmt(x->remedy, sizeof(x->remedy),
                "find what else sends through this port (incast, a slow receiver, a narrow "
                "link downstream); ticks are device-specific, compare with its neighbours");
        }
        uint64_t last = e->valid1 ? e->v1 : e->v0;
        uint64_t max = topo_ibc_max(c->width);
        if (c->is_error && (e->valid0 || e->valid1) && max && last == max) {
            struct topo_finding *x =
                topo_findings_add(out, "switch-counter-saturated", TOPO_SEV_WARN, -1, -1);
            snprintf(x->object, sizeof(x->object), "%.63s", obj);
            fmt(x->msg, sizeof(x->msg),
                "%s reads %llu = 2^%d - 1, where it stops: its real count is unknown and new "
                "errors cannot be seen",
                c->iba_name, (unsigned long long)last, c->width);
            fmt(x->remedy, sizeof(x->remedy),
                "clear it (perfquery -R SWITCH-LID PORT) and watch whether it rises again");
        }
    }
}
