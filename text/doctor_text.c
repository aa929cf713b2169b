/* doctor_text: the rows of both ends' facts, then the walk and the findings. */
#include "text/doctor_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *ival(int v, char *buf, size_t len)
{
    if (v == DOCTOR_UNKNOWN)
        return "n/a";
    snprintf(buf, len, "%d", v);
    return buf;
}

static const char *onoff(int v)
{
    return v == DOCTOR_UNKNOWN ? "n/a" : v ? "on" : "off";
}

static const char *memlock(int64_t v, char *buf, size_t len)
{
    if (v == DOCTOR_UNKNOWN)
        return "n/a";
    if (v == DOCTOR_UNLIMITED)
        return "unlimited";
    snprintf(buf, len, "%lld KiB", (long long)(v >> 10));
    return buf;
}

/* One row; same: whether both ends are expected to agree (a difference is marked '!'). */
static void row(struct strbuf *sb, const char *attr, const char *l, const char *p, bool same)
{
    bool mark = same && strcmp(l, p) && strcmp(l, "n/a") && strcmp(p, "n/a");
    strbuf_printf(sb, "%c %-22s %-26s %s\n", mark ? '!' : ' ', attr, l, p);
}

static void rowi(struct strbuf *sb, const char *attr, int l, int p, bool same)
{
    char a[32], b[32];
    row(sb, attr, ival(l, a, sizeof(a)), ival(p, b, sizeof(b)), same);
}

/* The DCB rows: "n/a" without a RoCE port's DCB answer. */
static const char *dcb_trust(const struct doctor_rdma_port *r, char *buf, size_t len)
{
    if (!r || strcmp(r->link_layer, "Ethernet"))
        return "n/a";
    if (!r->dcb.available)
        return "n/a (not offered)";
    snprintf(buf, len, "%s trust", r->dcb.trust_dscp ? "DSCP" : "PCP");
    return buf;
}

static const char *dcb_prio(const struct doctor_rdma_port *r, int dscp, char *buf, size_t len)
{
    int p = doctor_dcb_priority(r, dscp);
    if (p < 0)
        return r && r->dcb.available ? "unmapped" : "n/a";
    snprintf(buf, len, "%d%s", p, r->dcb.trust_dscp ? "" : " (untagged, PCP trust)");
    return buf;
}

static const char *dcb_pfc(const struct doctor_rdma_port *r, char *buf, size_t len)
{
    if (!r || !r->dcb.available || !r->dcb.pfc_known)
        return "n/a";
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < 8 && o < len; i++)
        if ((r->dcb.pfc_en >> i) & 1)
            o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", i);
    return o ? buf : "none";
}

static const char *dcb_ets(const struct doctor_rdma_port *r, int dscp, char *buf, size_t len)
{
    int p = doctor_dcb_priority(r, dscp);
    if (p < 0 || !r->dcb.ets_known)
        return "n/a";
    int tc = r->dcb.prio_tc[p];
    if (tc < 0 || tc > 7)
        return "n/a";
    if (r->dcb.tc_tsa[tc] == TOPO_DCB_TSA_ETS)
        snprintf(buf, len, "TC %d, %d%% (ETS)", tc, r->dcb.tc_tx_bw[tc]);
    else
        snprintf(buf, len, "TC %d, %s", tc, r->dcb.tc_tsa[tc] == 0 ? "strict" : "other");
    return buf;
}

static const char *dcb_ecn(const struct doctor_rdma_port *r, int dscp, char *buf, size_t len)
{
    if (!r || !r->dcb.ecn_known)
        return "n/a";
    int p = doctor_dcb_priority(r, dscp);
    if (p < 0)
        p = 0;
    int np = r->dcb.ecn_np[p], rp = r->dcb.ecn_rp[p];
    snprintf(buf, len, "%s/%s", doctor_switch_str(np), doctor_switch_str(rp));
    return buf;
}

static void table(struct strbuf *sb, const struct doctor_run *r)
{
    const struct doctor_facts *l = &r->local, *p = &r->remote;
    const struct doctor_pmtu *pr = &r->probe;
    const struct doctor_qp *qp = &r->qp;
    char a[64], b[64];
    row(sb, "", "this end", "peer", false);
    row(sb, "host", l->host, p->host, false);
    row(sb, "address", l->local_addr, p->local_addr, false);
    row(sb, "interface", l->addr_dev, p->addr_dev, false);
    char rl[96], rp[96];
    snprintf(rl, sizeof(rl), "%s%s%s", l->route_dev, l->route_via[0] ? " via " : "", l->route_via);
    snprintf(rp, sizeof(rp), "%s%s%s", p->route_dev, p->route_via[0] ? " via " : "", p->route_via);
    row(sb, "route to the other end", rl, rp, false);
    row(sb, "subnet", l->subnet, p->subnet, false);
    rowi(sb, "netdev MTU (bytes)", l->mtu, p->mtu, true);
    snprintf(a, sizeof(a), "all %s, %s %s", ival(l->rp_filter_all, rl, 16), l->addr_dev,
             ival(l->rp_filter_dev, rl + 16, 16));
    snprintf(b, sizeof(b), "all %s, %s %s", ival(p->rp_filter_all, rp, 16), p->addr_dev,
             ival(p->rp_filter_dev, rp + 16, 16));
    row(sb, "rp_filter", a, b, false);
    snprintf(a, sizeof(a), "all %s, %s %s", ival(l->arp_ignore_all, rl, 16), l->addr_dev,
             ival(l->arp_ignore_dev, rl + 16, 16));
    snprintf(b, sizeof(b), "all %s, %s %s", ival(p->arp_ignore_all, rp, 16), p->addr_dev,
             ival(p->arp_ignore_dev, rp + 16, 16));
    row(sb, "arp_ignore", a, b, false);
    snprintf(a, sizeof(a), "%d", l->nsib);
    snprintf(b, sizeof(b), "%d", p->nsib);
    row(sb, "other NICs in subnet", a, b, true);
    rowi(sb, "tcp_ecn", l->tcp_ecn, p->tcp_ecn, true);
    row(sb, "driver", l->driver[0] ? l->driver : "n/a", p->driver[0] ? p->driver : "n/a", true);
    row(sb, "driver version", l->driver_version[0] ? l->driver_version : "n/a",
        p->driver_version[0] ? p->driver_version : "n/a", true);
    row(sb, "firmware", l->firmware[0] ? l->firmware : "n/a", p->firmware[0] ? p->firmware : "n/a",
        true);
    row(sb, "TSO", onoff(l->tso), onoff(p->tso), true);
    row(sb, "GSO", onoff(l->gso), onoff(p->gso), true);
    row(sb, "GRO", onoff(l->gro), onoff(p->gro), true);
    row(sb, "RX checksum", onoff(l->rx_csum), onoff(p->rx_csum), true);
    row(sb, "TX checksum", onoff(l->tx_csum), onoff(p->tx_csum), true);
    row(sb, "memlock (soft)", memlock(l->memlock_soft, a, sizeof(a)),
        memlock(p->memlock_soft, b, sizeof(b)), false);
    rowi(sb, "IOMMU groups", l->iommu_groups, p->iommu_groups, true);
    if (qp->dev[0]) {
        const struct doctor_rdma_port *x = doctor_port(l, qp->dev, qp->port);
        const struct doctor_rdma_port *y = doctor_port(p, NULL, qp->port);
        row(sb, "RDMA port", x ? x->dev : "none", y ? y->dev : "none", false);
        row(sb, "link layer", x ? x->link_layer : "n/a", y ? y->link_layer : "n/a", true);
        row(sb, "port state", x ? x->state : "n/a", y ? y->state : "n/a", true);
        rowi(sb, "active MTU (bytes)", x ? x->active_mtu : DOCTOR_UNKNOWN,
             y ? y->active_mtu : DOCTOR_UNKNOWN, true);
        rowi(sb, "RoCE netdev MTU (bytes)", x ? x->netdev_mtu : DOCTOR_UNKNOWN,
             y ? y->netdev_mtu : DOCTOR_UNKNOWN, true);
        char dl[64], dp[64];
        row(sb, "DCB", dcb_trust(x, dl, sizeof(dl)), dcb_trust(y, dp, sizeof(dp)), true);
        char pk[48];
        snprintf(pk, sizeof(pk), "priority of DSCP %ld", (long)qp->dscp);
        row(sb, pk, dcb_prio(x, qp->dscp, dl, sizeof(dl)), dcb_prio(y, qp->dscp, dp, sizeof(dp)),
            true);
        row(sb, "PFC on priorities", dcb_pfc(x, dl, sizeof(dl)), dcb_pfc(y, dp, sizeof(dp)), true);
        row(sb, "ETS class and share", dcb_ets(x, qp->dscp, dl, sizeof(dl)),
            dcb_ets(y, qp->dscp, dp, sizeof(dp)), true);
        row(sb, "ACS redirect to GPUs", x ? (x->acs[0] ? x->acs : "none") : "n/a",
            y ? (y->acs[0] ? y->acs : "none") : "n/a", false);
        row(sb, "RoCE ECN np/rp", dcb_ecn(x, qp->dscp, dl, sizeof(dl)),
            dcb_ecn(y, qp->dscp, dp, sizeof(dp)), true);
        for (int i = 0; x && i < x->ngids; i++) {
            char k[32];
            snprintf(k, sizeof(k), "GID %d", x->gids[i].index);
            const char *pt = "n/a";
            for (int g = 0; y && g < y->ngids; g++)
                if (y->gids[g].index == x->gids[i].index)
                    pt = y->gids[g].type;
            row(sb, k, x->gids[i].type, pt, true);
        }
    }
    if (pr->valid) {
        snprintf(a, sizeof(a), "%d of %d bytes", pr->largest_ok, pr->tried);
        row(sb, "path MTU (DF probe)", a, pr->icmp_mtu ? "ICMP frag-needed seen" : "", false);
    }
}

void doctor_text(const struct doctor_run *r, struct strbuf *sb)
{
    table(sb, r);
    strbuf_add(sb, "\n");
    if (r->walked) {
        char text[2048];
        qp_walk_text(&r->walk, text, sizeof(text));
        strbuf_printf(sb, "%s\n", text);
    }
    int ne = 0;
    for (int i = 0; i < r->n; i++) {
        strbuf_printf(sb, "%s: %s: %s\n", r->f[i].sev == DOCTOR_ERROR ? "error" : "warning",
                      r->f[i].rule, r->f[i].msg);
        ne += r->f[i].sev == DOCTOR_ERROR;
    }
    strbuf_printf(sb, "%d error(s), %d warning(s)\n", ne, r->n - ne);
}
