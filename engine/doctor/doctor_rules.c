/* doctor_rules: the comparison rules, pure functions over both ends' facts, the queue
 * pair's attributes and the path MTU probe; each names the attribute, both values and the
 * fix. Effective sysctl values follow Documentation/networking/ip-sysctl.rst: rp_filter and
 * arp_ignore take the maximum of conf/all and conf/IFACE. */
#include "engine/doctor/doctor.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct out {
    struct doctor_finding *f;
    int max, n;
};

static void __attribute__((format(printf, 7, 8)))
add(struct out *o, enum doctor_sev sev, const char *rule, const char *attr, const char *lv,
    const char *pv, const char *fmt, ...)
{
    if (o->n < o->max) {
        struct doctor_finding *f = &o->f[o->n];
        memset(f, 0, sizeof(*f));
        f->sev = sev;
        snprintf(f->rule, sizeof(f->rule), "%s", rule);
        snprintf(f->attr, sizeof(f->attr), "%s", attr);
        snprintf(f->local, sizeof(f->local), "%s", lv ? lv : "");
        snprintf(f->peer, sizeof(f->peer), "%s", pv ? pv : "");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
        va_end(ap);
    }
    o->n++;
}

static int maxv(int a, int b)
{
    return a > b ? a : b;
}

static const char *itoa(int v, char *buf)
{
    if (v == DOCTOR_UNKNOWN)
        return "n/a";
    snprintf(buf, 16, "%d", v);
    return buf;
}

/* rp_filter strict on an end whose route back leaves by another interface than the one
 * its address (where the other end's packets arrive) lives on; ARP flux on an end with
 * several interfaces in one subnet. */
static void route_end(struct out *o, const struct doctor_facts *f, bool local)
{
    char a[16], b[16];
    const char *who = f->host[0] ? f->host : (local ? "this host" : "the peer");
    int rp = maxv(f->rp_filter_all, f->rp_filter_dev);
    if (f->addr_dev[0] && f->route_dev[0] && strcmp(f->addr_dev, f->route_dev) && rp == 1) {
        char v[64];
        snprintf(v, sizeof(v), "%d (all %s, %s %s)", rp, itoa(f->rp_filter_all, a), f->addr_dev,
                 itoa(f->rp_filter_dev, b));
        add(o, DOCTOR_ERROR, "rp-filter", "rp_filter", local ? v : "", local ? "" : v,
            "rp_filter is strict (1) on %s at %s, and the route back to %s leaves by %s, not "
            "%s: packets from %s arriving on %s are dropped (asymmetric route); set "
            "net.ipv4.conf.%s.rp_filter=2 (loose) and conf.all to at most 2, or route %s by %s",
            f->addr_dev, who, f->peer_addr, f->route_dev, f->addr_dev, f->peer_addr, f->addr_dev,
            f->addr_dev, f->peer_addr, f->addr_dev);
    }
    int ai = maxv(f->arp_ignore_all, f->arp_ignore_dev);
    if (f->nsib > 0 && ai == 0) {
        char list[160] = "";
        for (int i = 0; i < f->nsib; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", f->sib[i]);
        }
        char v[96];
        snprintf(v, sizeof(v), "%s + %s in %s", f->addr_dev, list, f->subnet);
        add(o, DOCTOR_WARN, "arp-flux", "interfaces in one subnet", local ? v : "", local ? "" : v,
            "ARP flux at %s: %s and %s hold addresses in %s and arp_ignore is 0, so either "
            "interface answers ARP for the other's address and traffic for %s may arrive on "
            "the wrong NIC; set net.ipv4.conf.all.arp_ignore=1 and arp_announce=2, or give each "
            "NIC its own subnet or routing table",
            who, f->addr_dev, list, f->subnet, f->local_addr);
    }
}

int doctor_rule_route(const struct doctor_facts *l, const struct doctor_facts *p,
                      struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    route_end(&o, l, true);
    if (p)
        route_end(&o, p, false);
    return o.n;
}

int doctor_rule_mtu(const struct doctor_facts *l, const struct doctor_facts *p,
                    struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    char a[16], b[16];
    if (p && l->mtu > 0 && p->mtu > 0 && l->mtu != p->mtu)
        add(&o, DOCTOR_WARN, "mtu-mismatch", "netdev MTU", itoa(l->mtu, a), itoa(p->mtu, b),
            "netdev MTU %d bytes on %s at %s but %d bytes on %s at %s: the larger end sends what "
            "the smaller cannot take unless path MTU discovery works; set both to %d",
            l->mtu, l->route_dev, l->host, p->mtu, p->route_dev, p->host,
            l->mtu > p->mtu ? l->mtu : p->mtu);
    return o.n;
}

int doctor_rule_pmtu(const struct doctor_facts *l, const struct doctor_facts *p,
                     const struct doctor_pmtu *pr, struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    (void)p;
    if (!pr || !pr->valid)
        return 0;
    char a[16], b[16];
    /* The message a router sends back: ICMP type 3 code 4 (RFC 1191) for IPv4, ICMPv6 type 2
     * (RFC 8201) for IPv6, whose routers never fragment. */
    bool v6 = strchr(l->peer_addr, ':') != NULL;
    const char *icmp = v6 ? "ICMPv6 \"packet too big\"" : "ICMP \"fragmentation needed\"",
               *kind = v6 ? "ICMPv6 type 2" : "ICMP type 3 code 4";
    if (pr->largest_ok == 0)
        add(&o, DOCTOR_ERROR, "pmtu-none", "path MTU", itoa(pr->tried, a), "none",
            "no UDP probe to %s came back at any size (up to %d bytes): the path drops this "
            "traffic (filter, rp_filter or a route)",
            l->peer_addr, pr->tried);
    else if (pr->largest_ok < pr->tried && !pr->icmp_mtu)
        add(&o, DOCTOR_ERROR, "pmtu-blackhole", "path MTU", itoa(pr->tried, a),
            itoa(pr->largest_ok, b),
            "MTU black hole toward %s: packets above %d bytes vanish (sent with don't-fragment, "
            "no %s came back), although %s's MTU is %d; TCP without MSS clamping hangs on "
            "full-size segments; let %s through or set the MTU to %d on both ends",
            l->peer_addr, pr->largest_ok, icmp, l->route_dev, pr->tried, kind, pr->largest_ok);
    else if (pr->largest_ok < pr->tried)
        add(&o, DOCTOR_WARN, "pmtu-smaller", "path MTU", itoa(pr->tried, a),
            itoa(pr->icmp_mtu ? pr->icmp_mtu : pr->largest_ok, b),
            "the path to %s carries at most %d bytes (%s names %d), below %s's MTU %d: "
            "discovery works, but every new path pays a round trip",
            l->peer_addr, pr->largest_ok, icmp, pr->icmp_mtu, l->route_dev, pr->tried);
    return o.n;
}

static const struct doctor_gid *gid_of(const struct doctor_rdma_port *r, int index)
{
    for (int i = 0; i < r->ngids; i++)
        if (r->gids[i].index == index)
            return &r->gids[i];
    return NULL;
}

/* The ports a queue pair on qp uses at this end (the device named) and at the peer (the one
 * its agent picks), each NULL when there is none; false when qp names no device. */
static bool qp_ends(const struct doctor_facts *l, const struct doctor_facts *p,
                    const struct doctor_qp *qp, const struct doctor_rdma_port *ends[2])
{
    if (!qp || !qp->dev[0])
        return false;
    ends[0] = doctor_port(l, qp->dev, qp->port);
    ends[1] = p ? doctor_port(p, NULL, qp->port) : NULL;
    return true;
}

int doctor_rule_rdma(const struct doctor_facts *l, const struct doctor_facts *p,
                     const struct doctor_qp *qp, struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    const struct doctor_rdma_port *ends[2];
    if (!qp_ends(l, p, qp, ends))
        return 0;
    const struct doctor_rdma_port *rl = ends[0], *rp = ends[1];
    if (!rl) {
        add(&o, DOCTOR_ERROR, "rdma-port", "RDMA port", "none", "", "no RDMA port %s %d at %s",
            qp->dev, qp->port > 0 ? qp->port : 1, l->host);
        return o.n;
    }
    const struct doctor_facts *fs[2] = {l, p};
    if (!rp && p)
        add(&o, DOCTOR_ERROR, "rdma-port", "RDMA port", rl->dev, "none",
            "the peer %s has no RDMA port: a verbs queue pair cannot connect", p->host);
    if (rp && strcmp(rl->link_layer, rp->link_layer))
        add(&o, DOCTOR_ERROR, "link-layer", "link layer", rl->link_layer, rp->link_layer,
            "link layer %s on %s at %s but %s on %s at %s: an InfiniBand port and an Ethernet "
            "(RoCE) port cannot talk",
            rl->link_layer, rl->dev, l->host, rp->link_layer, rp->dev, p->host);
    for (int e = 0; e < 2; e++)
        if (ends[e] && ends[e]->state[0] && strcmp(ends[e]->state, "ACTIVE"))
            add(&o, DOCTOR_ERROR, "port-state", "port state", e ? "" : ends[e]->state,
                e ? ends[e]->state : "", "%s port %d at %s is %s, not ACTIVE", ends[e]->dev,
                ends[e]->port, fs[e]->host, ends[e]->state);
    /* Netdev MTUs: a RoCE port's active MTU follows its netdev (iboe_get_mtu). */
    if (rp && rl->netdev_mtu > 0 && rp->netdev_mtu > 0 && rl->netdev_mtu != rp->netdev_mtu) {
        char a[16], b[16];
        add(&o, DOCTOR_WARN, "roce-netdev-mtu", "netdev MTU", itoa(rl->netdev_mtu, a),
            itoa(rp->netdev_mtu, b),
            "netdev MTU %d on %s (%s) at %s but %d on %s (%s) at %s: they allow RoCE MTUs %d "
            "and %d; set both netdevs' MTU to %d",
            rl->netdev_mtu, rl->netdev, rl->dev, l->host, rp->netdev_mtu, rp->netdev, rp->dev,
            p->host, doctor_roce_mtu(rl->netdev_mtu), doctor_roce_mtu(rp->netdev_mtu),
            rl->netdev_mtu > rp->netdev_mtu ? rl->netdev_mtu : rp->netdev_mtu);
    }
    /* The path MTU against each end's active MTU (and, for RoCE, what its netdev allows). */
    int pmtu = qp->path_mtu;
    for (int e = 0; pmtu > 0 && e < 2; e++) {
        const struct doctor_rdma_port *r = ends[e];
        if (!r)
            continue;
        int act = r->active_mtu;
        if (!strcmp(r->link_layer, "Ethernet") && r->netdev_mtu > 0) {
            int nm = doctor_roce_mtu(r->netdev_mtu);
            if (act <= 0 || nm < act)
                act = nm;
        }
        if (act > 0 && pmtu > act) {
            int other = ends[!e] ? ends[!e]->active_mtu : act;
            int fix = act < other || other <= 0 ? act : other;
            char a[16], b[16];
            add(&o, DOCTOR_ERROR, "path-mtu", "path MTU", e ? itoa(pmtu, a) : itoa(act, a),
                e ? itoa(act, b) : itoa(pmtu, b),
                "path MTU %d > %s active MTU %d on %s; set both netdevs' MTU to %d or use %d", pmtu,
                r->dev, act, fs[e]->host, pmtu + 104, fix);
        }
    }
    /* The GID index on both ends, and its type. */
    const char *want = qp->gid_type[0] ? qp->gid_type : "RoCE v2";
    for (int e = 0; qp->gid_index >= 0 && e < 2; e++) {
        const struct doctor_rdma_port *r = ends[e];
        if (!r || strcmp(r->link_layer, "Ethernet"))
            continue;
        char idx[16];
        snprintf(idx, sizeof(idx), "%d", qp->gid_index);
        const struct doctor_gid *g = gid_of(r, qp->gid_index);
        if (!g) {
            char have[128] = "";
            for (int i = 0; i < r->ngids; i++) {
                size_t n = strlen(have);
                snprintf(have + n, sizeof(have) - n, "%s%d (%s)", i ? ", " : "", r->gids[i].index,
                         r->gids[i].type);
            }
            add(&o, DOCTOR_ERROR, "gid-index", "GID index", e ? "" : "missing", e ? "missing" : "",
                "GID index %d does not exist on %s port %d at %s (it has %s)", qp->gid_index,
                r->dev, r->port, fs[e]->host, have[0] ? have : "none");
        } else if (g->type[0] && strcmp(g->type, want)) {
            bool v1 = !strcmp(g->type, "RoCE v1");
            add(&o, v1 ? DOCTOR_WARN : DOCTOR_ERROR, "gid-type", "GID type", e ? "" : g->type,
                e ? g->type : "", "GID index %d on %s at %s is %s, not %s%s", qp->gid_index, r->dev,
                fs[e]->host, g->type, want,
                v1 ? ": RoCE v1 has no IP header (Ethernet type 0x8915), so DSCP-based PFC, ECN "
                     "marking and ECMP do not apply and it does not cross a router; pick a "
                     "RoCE v2 GID index"
                   : "");
        }
    }
    return o.n;
}

int doctor_rule_host(const struct doctor_facts *l, const struct doctor_facts *p,
                     const struct doctor_qp *qp, struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    const struct doctor_facts *fs[2] = {l, p};
    /* Registering memory pins it: RLIMIT_MEMLOCK bounds what one process can register. */
    for (int e = 0; qp && qp->dev[0] && e < 2; e++) {
        const struct doctor_facts *f = fs[e];
        if (!f || f->memlock_soft == DOCTOR_UNKNOWN || f->memlock_soft == DOCTOR_UNLIMITED ||
            f->memlock_soft >= (int64_t)64 << 20)
            continue;
        char v[32];
        snprintf(v, sizeof(v), "%lld KiB", (long long)(f->memlock_soft >> 10));
        add(&o, DOCTOR_WARN, "memlock", "memlock limit", e ? "" : v, e ? v : "",
            "memlock limit %lld KiB at %s: registering more fails with ENOMEM; raise it "
            "(ulimit -l unlimited, LimitMEMLOCK=infinity for a service)",
            (long long)(f->memlock_soft >> 10), f->host);
    }
    if (p && l->tcp_ecn >= 0 && p->tcp_ecn >= 0 && (l->tcp_ecn == 0 || p->tcp_ecn == 0) &&
        (l->tcp_ecn == 1 || p->tcp_ecn == 1)) {
        char a[16], b[16];
        add(&o, DOCTOR_WARN, "ecn", "net.ipv4.tcp_ecn", itoa(l->tcp_ecn, a), itoa(p->tcp_ecn, b),
            "tcp_ecn %d at %s but %d at %s: the end with 0 never negotiates ECN, so marks "
            "turn into drops; set 1 on both or leave the default 2",
            l->tcp_ecn, l->host, p->tcp_ecn, p->host);
    }
    return o.n;
}

int doctor_dcb_priority(const struct doctor_rdma_port *r, int dscp)
{
    if (!r || !r->dcb.available)
        return -1;
    return r->dcb.trust_dscp ? topo_dcb_priority_of(&r->dcb, dscp) : 0;
}

const char *doctor_switch_str(int v)
{
    return v == 1 ? "on" : v == 0 ? "off" : "n/a";
}

int doctor_rule_dcb(const struct doctor_facts *l, const struct doctor_facts *p,
                    const struct doctor_qp *qp, struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    const struct doctor_rdma_port *ends[2];
    if (!qp_ends(l, p, qp, ends))
        return 0;
    const struct doctor_facts *fs[2] = {l, p};
    int dscp = qp->dscp > 0 && qp->dscp < 64 ? qp->dscp : 26;
    int prio[2] = {-1, -1};
    bool by_dscp[2] = {false, false}, dcb[2] = {false, false};
    for (int e = 0; e < 2; e++) {
        const struct doctor_rdma_port *r = ends[e];
        if (!r || strcmp(r->link_layer, "Ethernet"))
            continue; /* DCB classes RoCE's Ethernet frames; InfiniBand has its own SL-to-VL */
        dcb[e] = r->dcb.available;
        by_dscp[e] = dcb[e] && r->dcb.trust_dscp;
        prio[e] = doctor_dcb_priority(r, dscp);
    }
    char a[48], b[48];
    /* Trust: both ends must put the DSCP in one class, or the two directions differ. */
    if (dcb[0] && dcb[1] && by_dscp[0] != by_dscp[1]) {
        int d = by_dscp[0] ? 0 : 1;
        snprintf(a, sizeof(a), "%s", by_dscp[0] ? "dscp" : "pcp");
        snprintf(b, sizeof(b), "%s", by_dscp[1] ? "dscp" : "pcp");
        add(&o, DOCTOR_WARN, "dcb-trust", "DCB trust", a, b,
            "%s at %s classifies by DSCP (DSCP %d -> priority %d) but %s at %s by PCP "
            "(untagged: priority 0): the two directions travel in different classes; set DSCP "
            "trust on both (e.g. mlnx_qos -i %s --trust dscp)",
            ends[d]->netdev, fs[d]->host, dscp, prio[d], ends[!d]->netdev, fs[!d]->host,
            ends[!d]->netdev);
    }
    if (dcb[0] && by_dscp[0] && prio[0] < 0)
        add(&o, DOCTOR_WARN, "dcb-trust", "DSCP priority", "unmapped", "",
            "%s at %s trusts DSCP but maps no priority to DSCP %d: RoCE traffic lands in the "
            "default class; map it (e.g. dcb app add dev %s dscp-prio %d:3)",
            ends[0]->netdev, l->host, dscp, ends[0]->netdev, dscp);
    /* PFC on the DSCP's priority: RoCE without it is lossy; ends that differ are worse. */
    bool pfc[2] = {false, false};
    for (int e = 0; e < 2; e++)
        if (dcb[e] && prio[e] >= 0 && ends[e]->dcb.pfc_known)
            pfc[e] = (ends[e]->dcb.pfc_en >> prio[e]) & 1;
    bool pk[2] = {dcb[0] && prio[0] >= 0 && ends[0]->dcb.pfc_known,
                  dcb[1] && prio[1] >= 0 && ends[1]->dcb.pfc_known};
    if (pk[0] && pk[1] && pfc[0] != pfc[1]) {
        int on = pfc[0] ? 0 : 1;
        snprintf(a, sizeof(a), "priority %d %s", prio[0], pfc[0] ? "on" : "off");
        snprintf(b, sizeof(b), "priority %d %s", prio[1], pfc[1] ? "on" : "off");
        add(&o, DOCTOR_ERROR, "pfc", "PFC", a, b,
            "PFC is on for priority %d at %s but off for priority %d at %s (DSCP %d): one "
            "direction is lossless and the other drops under congestion; enable PFC on "
            "priority %d on both ends and on the switch ports between",
            prio[on], fs[on]->host, prio[!on], fs[!on]->host, dscp, prio[on]);
    } else {
        for (int e = 0; e < 2; e++)
            if (pk[e] && !pfc[e]) {
                snprintf(a, sizeof(a), "priority %d off", prio[e]);
                add(&o, DOCTOR_WARN, "pfc", "PFC", e ? "" : a, e ? a : "",
                    "PFC is off for priority %d (DSCP %d) on %s at %s: RoCE in that class is "
                    "lossy, a congested switch drops instead of pausing and the queue pair "
                    "pays a retransmission timeout; enable it (e.g. mlnx_qos -i %s --pfc "
                    "with priority %d set), or run lossy RoCE on purpose with ECN",
                    prio[e], dscp, ends[e]->netdev, fs[e]->host, ends[e]->netdev, prio[e]);
            }
    }
    /* ETS: the class the priority maps to must get a share of the port. */
    for (int e = 0; e < 2; e++) {
        if (!dcb[e] || prio[e] < 0 || !ends[e]->dcb.ets_known)
            continue;
        const struct topo_dcb_info *d = &ends[e]->dcb;
        int tc = d->prio_tc[prio[e]];
        if (tc >= 0 && tc < 8 && d->tc_tsa[tc] == TOPO_DCB_TSA_ETS && d->tc_tx_bw[tc] == 0) {
            snprintf(a, sizeof(a), "TC %d: 0%%", tc);
            add(&o, DOCTOR_WARN, "ets", "ETS share", e ? "" : a, e ? a : "",
                "priority %d (DSCP %d) is in traffic class %d on %s at %s, which ETS gives 0%% "
                "of the port: RoCE there gets only what the other classes leave",
                prio[e], dscp, tc, ends[e]->netdev, fs[e]->host);
        }
    }
    /* RoCE ECN (DCQCN) where the driver shows it: both roles on, on the DSCP's priority. */
    for (int e = 0; e < 2; e++) {
        const struct doctor_rdma_port *r = ends[e];
        if (!r || strcmp(r->link_layer, "Ethernet") || !r->dcb.ecn_known)
            continue;
        int pr = prio[e] >= 0 ? prio[e] : 0;
        int np = r->dcb.ecn_np[pr], rp = r->dcb.ecn_rp[pr];
        if (np == 0 || rp == 0) {
            snprintf(a, sizeof(a), "np %s, rp %s", doctor_switch_str(np), doctor_switch_str(rp));
            add(&o, DOCTOR_WARN, "roce-ecn", "RoCE ECN", e ? "" : a, e ? a : "",
                "RoCE ECN (DCQCN) on priority %d of %s at %s: %s%s%s; enable both (echo 1 > "
                "/sys/class/net/%s/ecn/roce_np/enable/%d and roce_rp)",
                pr, r->netdev, fs[e]->host,
                np == 0 ? "as a receiver it sends no CNP for marked packets" : "",
                np == 0 && rp == 0 ? ", and " : "",
                rp == 0 ? "as a sender it ignores CNPs and never slows down" : "", r->netdev, pr);
        }
    }
    return o.n;
}

int doctor_rule_acs(const struct doctor_facts *l, const struct doctor_facts *p,
                    const struct doctor_qp *qp, struct doctor_finding *out, int max)
{
    struct out o = {out, max, 0};
    const struct doctor_rdma_port *ends[2];
    if (!qp_ends(l, p, qp, ends))
        return 0;
    const struct doctor_facts *fs[2] = {l, p};
    for (int e = 0; e < 2; e++) {
        const struct doctor_rdma_port *r = ends[e];
        if (!r || !r->acs[0])
            continue;
        char n[16];
        snprintf(n, sizeof(n), "%d GPU%s", r->acs_gpus, r->acs_gpus == 1 ? "" : "s");
        add(&o, DOCTOR_WARN, "pcie-acs", "PCIe ACS", e ? "" : r->acs, e ? r->acs : "",
            "PCIe ACS redirects peer-to-peer traffic between %s at %s and the %s under one "
            "switch with it (%s): GPUDirect RDMA there detours through the root complex; turn "
            "the redirect off on those ports (setpci ECAP_ACS+6.w) where no VM needs the "
            "isolation",
            r->dev, fs[e]->host, n, r->acs);
    }
    return o.n;
}

int doctor_compare(const struct doctor_facts *l, const struct doctor_facts *p,
                   const struct doctor_qp *qp, const struct doctor_pmtu *probe,
                   struct doctor_finding *out, int max)
{
    int n = 0;
    n += doctor_rule_route(l, p, out + (n < max ? n : max), n < max ? max - n : 0);
    n += doctor_rule_mtu(l, p, out + (n < max ? n : max), n < max ? max - n : 0);
    n += doctor_rule_pmtu(l, p, probe, out + (n < max ? n : max), n < max ? max - n : 0);
    n += doctor_rule_rdma(l, p, qp, out + (n < max ? n : max), n < max ? max - n : 0);
    n += doctor_rule_host(l, p, qp, out + (n < max ? n : max), n < max ? max - n : 0);
    n += doctor_rule_dcb(l, p, qp, out + (n < max ? n : max), n < max ? max - n : 0);
    n += doctor_rule_acs(l, p, qp, out + (n < max ? n : max), n < max ? max - n : 0);
    return n;
}

int doctor_status(const struct doctor_finding *f, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        if ((int)f[i].sev > s)
            s = (int)f[i].sev;
    return s;
}
