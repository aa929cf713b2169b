/* topo_ceiling: the narrowest payload rate on a path and the terms that make it
 * (docs/diagnosis.md has every formula with worked examples). */
#include "topology/topo_ceiling.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *topo_ceil_kind_str(enum topo_ceil_kind k)
{
    switch (k) {
    case TOPO_CEIL_LIMIT:
        return "limit";
    case TOPO_CEIL_RATE:
        return "rate";
    case TOPO_CEIL_FACTOR:
        return "factor";
    case TOPO_CEIL_SIZE:
        return "size";
    case TOPO_CEIL_ASSUMED:
        return "assumed";
    }
    return "unknown";
}

const char *topo_ceil_proto_str(enum topo_ceil_proto p)
{
    switch (p) {
    case TOPO_CEIL_ROCE_V2:
        return "RoCE v2";
    case TOPO_CEIL_IB:
        return "InfiniBand";
    case TOPO_CEIL_TCP:
        return "TCP";
    }
    return "unknown";
}

int topo_ceiling_add(struct topo_ceiling *c, const char *name, enum topo_ceil_kind kind,
                     double value, const char *unit, const char *fmt, ...)
{
    if (!c || c->nterms >= TOPO_CEIL_MAX_TERMS)
        return -1;
    struct topo_ceil_term *t = &c->terms[c->nterms];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->kind = kind;
    t->value = value;
    snprintf(t->unit, sizeof(t->unit), "%s", unit);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->detail, sizeof(t->detail), fmt, ap);
        va_end(ap);
    }
    return c->nterms++;
}

void topo_ceiling_settle(struct topo_ceiling *c)
{
    c->valid = false;
    c->narrowest = -1;
    c->gbps = 0;
    for (int i = 0; i < c->nterms; i++) {
        const struct topo_ceil_term *t = &c->terms[i];
        if (t->kind != TOPO_CEIL_LIMIT || !(t->value > 0) || !isfinite(t->value))
            continue;
        if (!c->valid || t->value < c->gbps) {
            c->valid = true;
            c->gbps = t->value;
            c->narrowest = i;
        }
    }
}

double topo_ceiling_percent(const struct topo_ceiling *c, double goodput_gbps)
{
    if (!c || !c->valid || !(c->gbps > 0) || !(goodput_gbps >= 0) || !isfinite(goodput_gbps))
        return NAN;
    return 100.0 * goodput_gbps / c->gbps;
}

/* ---- the port's data rate ----
 * sysfs `rate` (Documentation/ABI/stable/sysfs-class-infiniband: "rate: ... the port's
 * current active speed and width") is printed by the kernel's rate_show() as the lane speed
 * times the width, e.g. "40 Gb/sec (4X QDR)": it is a signalling rate for SDR/DDR/QDR/FDR and
 * a data rate from FDR10 on. IBTA Vol 2 (Physical): SDR 2.5, DDR 5 and QDR 10 Gbaud lanes use
 * 8b/10b, so 4X QDR moves 32 Gb/s of data; FDR lanes signal 14.0625 Gbaud with 64b/66b, which
 * the kernel prints as 14 (4X: "56 Gb/sec"), so 4 x 14.0625 x 64/66 = 54.545 Gb/s of data; FDR10
 * (10.3125 Gbaud 64b/66b), EDR (25.78125), HDR and NDR are named by their data rate (10, 25, 50,
 * 100 per lane). On an Ethernet (RoCE) port the kernel maps the netdev's ethtool speed onto an IB
 * speed and width (ib_get_eth_speed() in drivers/infiniband/core/verbs.c: 40 GbE reads "4X QDR"),
 * and Ethernet speeds (IEEE 802.3 40/100GBASE-R: 64b/66b below the MAC) are MAC data rates: there
 * the name says nothing about the encoding and no factor applies. */
int topo_ceiling_port_data(double rate_gbps, const char *speed, enum topo_link_layer ll,
                           double *data_gbps, char *detail, size_t len)
{
    if (!(rate_gbps > 0) || !isfinite(rate_gbps) || !data_gbps)
        return -EINVAL;
    const char *sp = speed ? speed : "";
    double f = 1;
    const char *why = "1 (a data rate already)";
    if (ll == TOPO_LL_ETHERNET) {
        why = "1 (Ethernet: a MAC data rate)";
    } else if (!strcmp(sp, "SDR") || !strcmp(sp, "DDR") || !strcmp(sp, "QDR")) {
        f = 8.0 / 10.0;
        why = "8/10 (8b/10b)";
    } else if (!strcmp(sp, "FDR")) {
        /* the kernel's 14 Gb/s per FDR lane is 14.0625 Gbaud rounded down */
        f = 14.0625 / 14.0 * 64.0 / 66.0;
        why = "14.0625/14 x 64/66 (64b/66b)";
    }
    *data_gbps = rate_gbps * f;
    if (detail && len)
        snprintf(detail, len, "%g Gb/s%s%s x %s = %.3f Gb/s", rate_gbps, sp[0] ? " " : "", sp, why,
                 *data_gbps);
    return 0;
}

/* ---- per-packet framing ---- */

/* Ethernet on the wire around an L3 packet of l3 bytes (IEEE 802.3 clause 3 and 4): preamble
 * and SFD 8, header 14, 802.1Q tag 4, FCS 4, the inter-frame gap 12 byte times; a frame (header
 * to FCS) shorter than 64 bytes is padded to 64. */
#define ETH_L1  (8 + 12)
#define ETH_HDR 14
#define ETH_TAG 4
#define ETH_FCS 4
#define ETH_MIN 64

static uint64_t eth_wire(uint64_t l3, bool vlan)
{
    uint64_t frame = ETH_HDR + (vlan ? ETH_TAG : 0) + l3 + ETH_FCS;
    if (frame < ETH_MIN)
        frame = ETH_MIN;
    return frame + ETH_L1;
}

/* InfiniBand transport headers (IBTA Vol 1, 9.2-9.3): BTH 12, RETH 16 (first packet of an
 * RDMA WRITE, and the READ request), AETH 4 (ACK, READ response first/last/only), ICRC 4;
 * link (ch. 7): LRH 8, GRH 40 when routed, VCRC 2. RoCE v2 (IBTA Annex A17) carries BTH
 * onwards and the ICRC in UDP (8, destination port 4791) over IPv4 (20) or IPv6 (40). */
#define IB_LRH  8
#define IB_GRH  40
#define IB_BTH  12
#define IB_RETH 16
#define IB_AETH 4
#define IB_ICRC 4
#define IB_VCRC 2
#define IP4_HDR 20
#define IP6_HDR 40
#define UDP_HDR 8
#define TCP_HDR 20
#define TCP_TS  12 /* the timestamp option (RFC 7323) padded to 4-byte words */

/* Bytes on the link of one RDMA packet carrying ext transport header bytes and pay payload. */
static uint64_t rdma_packet(const struct topo_ceil_wire *w, uint64_t ext, uint64_t pay)
{
    uint64_t tp = IB_BTH + ext + pay + IB_ICRC;
    if (w->proto == TOPO_CEIL_IB)
        return IB_LRH + (w->grh ? IB_GRH : 0) + tp + IB_VCRC;
    return eth_wire((w->ipv6 ? IP6_HDR : IP4_HDR) + UDP_HDR + tp, w->vlan);
}

static int rdma_fraction(const struct topo_ceil_wire *w, double *fraction, struct topo_ceiling *t)
{
    if (w->mtu < 256 || w->mtu > 4096)
        return -EINVAL;
    uint64_t mtu = (uint64_t)w->mtu, msg = w->msg_bytes;
    uint64_t npk = (msg + mtu - 1) / mtu, last = msg - (npk - 1) * mtu;
    /* The data direction: every packet's headers, plus RETH on a WRITE's first packet or
     * AETH on a READ response's first and last (its only, when one packet). */
    uint64_t ext = 0;
    const char *ext_what = "none (SEND)";
    if (w->op == TOPO_CEIL_WRITE) {
        ext = IB_RETH;
        ext_what = "RETH 16 B on the first packet (RDMA WRITE)";
    } else if (w->op == TOPO_CEIL_READ) {
        ext = npk > 1 ? 2 * IB_AETH : IB_AETH;
        ext_what = "AETH 4 B on the first and last READ response";
    }
    uint64_t data = (npk - 1) * rdma_packet(w, 0, mtu) + rdma_packet(w, 0, last) + ext;
    /* The other direction: one ACK per message (a responder may coalesce ACKs, IBTA Vol 1
     * 9.7.5.1.1; one per message is the fewest it sends) or, for a READ, the request. */
    uint64_t rev =
        w->op == TOPO_CEIL_READ ? rdma_packet(w, IB_RETH, 0) : rdma_packet(w, IB_AETH, 0);
    uint64_t all = data + (w->bidir ? rev : 0);
    *fraction = (double)msg / (double)all;
    if (t) {
        uint64_t per = rdma_packet(w, 0, mtu) - mtu;
        topo_ceiling_add(t, "path MTU", w->mtu_assumed ? TOPO_CEIL_ASSUMED : TOPO_CEIL_SIZE,
                         (double)mtu, "B", "payload bytes per packet%s",
                         w->mtu_assumed ? " (not discovered: assumed)" : "");
        if (w->proto == TOPO_CEIL_IB)
            topo_ceiling_add(t, "per-packet overhead", TOPO_CEIL_SIZE, (double)per, "B",
                             "LRH 8%s + BTH 12 + ICRC 4 + VCRC 2", w->grh ? " + GRH 40" : "");
        else
            topo_ceiling_add(t, "per-packet overhead", TOPO_CEIL_SIZE, (double)per, "B",
                             "preamble 8 + Ethernet 14%s + %s + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + "
                             "gap 12",
                             w->vlan ? " + VLAN 4" : "", w->ipv6 ? "IPv6 40" : "IPv4 20");
        topo_ceiling_add(t, "packets per message", TOPO_CEIL_SIZE, (double)npk, "packets",
                         "%llu B messages / %llu B path MTU, rounded up", (unsigned long long)msg,
                         (unsigned long long)mtu);
        topo_ceiling_add(t, "per-message headers", TOPO_CEIL_SIZE, (double)ext, "B", "%s",
                         ext_what);
        topo_ceiling_add(
            t, "other direction", TOPO_CEIL_SIZE, (double)rev, "B", "%s of %llu B per message, %s",
            w->op == TOPO_CEIL_READ ? "the READ request" : "one ACK", (unsigned long long)rev,
            w->bidir ? "counted in: the other direction streams too"
                     : "on the other direction's link");
        topo_ceiling_add(t, "wire payload fraction", TOPO_CEIL_FACTOR, *fraction, "fraction",
                         "%llu / %llu B on the link per message", (unsigned long long)msg,
                         (unsigned long long)all);
    }
    return 0;
}

/* TCP (RFC 9293) over IP: a segment's payload is at most MSS = MTU - IP header - 20 - the
 * 12 B timestamp option Linux sends by default (net.ipv4.tcp_timestamps): 1448 at MTU 1500.
 * Every segment is framed by Ethernet. The receiver ACKs every second full segment (delayed
 * ACK, RFC 1122 4.2.3.2, RFC 5681 4.2); with bidir those ACKs share the link. */
static int tcp_fraction(const struct topo_ceil_wire *w, double *fraction, struct topo_ceiling *t)
{
    uint64_t hdr = (w->ipv6 ? IP6_HDR : IP4_HDR) + TCP_HDR + (w->no_timestamps ? 0 : TCP_TS);
    if (w->mtu < 576 || w->mtu > 65535 || (uint64_t)w->mtu <= hdr)
        return -EINVAL;
    uint64_t mss = (uint64_t)w->mtu - hdr, msg = w->msg_bytes;
    uint64_t nseg = (msg + mss - 1) / mss, last = msg - (nseg - 1) * mss;
    uint64_t data = (nseg - 1) * eth_wire(hdr + mss, w->vlan) + eth_wire(hdr + last, w->vlan);
    uint64_t nack = (nseg + 1) / 2, ack = eth_wire(hdr, w->vlan);
    uint64_t all = data + (w->bidir ? nack * ack : 0);
    *fraction = (double)msg / (double)all;
    if (t) {
        topo_ceiling_add(t, "IP MTU", w->mtu_assumed ? TOPO_CEIL_ASSUMED : TOPO_CEIL_SIZE,
                         (double)w->mtu, "B", "%s",
                         w->mtu_assumed ? "not discovered: assumed" : "");
        topo_ceiling_add(t, "MSS", TOPO_CEIL_SIZE, (double)mss, "B", "MTU - %s - TCP 20%s",
                         w->ipv6 ? "IPv6 40" : "IPv4 20",
                         w->no_timestamps ? "" : " - timestamps 12");
        topo_ceiling_add(t, "per-segment overhead", TOPO_CEIL_SIZE,
                         (double)(eth_wire(hdr + mss, w->vlan) - mss), "B",
                         "headers %llu + preamble 8 + Ethernet 14%s + FCS 4 + gap 12",
                         (unsigned long long)hdr, w->vlan ? " + VLAN 4" : "");
        topo_ceiling_add(t, "segments per write", TOPO_CEIL_SIZE, (double)nseg, "segments",
                         "%llu B / %llu B MSS, rounded up", (unsigned long long)msg,
                         (unsigned long long)mss);
        topo_ceiling_add(t, "other direction", TOPO_CEIL_SIZE, (double)(nack * ack), "B",
                         "%llu ACKs of %llu B per write (one per two segments), %s",
                         (unsigned long long)nack, (unsigned long long)ack,
                         w->bidir ? "counted in: the other direction streams too"
                                  : "on the other direction's link");
        topo_ceiling_add(t, "wire payload fraction", TOPO_CEIL_FACTOR, *fraction, "fraction",
                         "%llu / %llu B on the link per write", (unsigned long long)msg,
                         (unsigned long long)all);
    }
    return 0;
}

int topo_ceiling_wire_fraction(const struct topo_ceil_wire *w, double *fraction,
                               struct topo_ceiling *t)
{
    if (!w || !fraction || w->msg_bytes == 0 || w->msg_bytes > (UINT64_C(1) << 40))
        return -EINVAL;
    switch (w->proto) {
    case TOPO_CEIL_ROCE_V2:
    case TOPO_CEIL_IB:
        if (w->op != TOPO_CEIL_WRITE && w->op != TOPO_CEIL_SEND && w->op != TOPO_CEIL_READ)
            return -EINVAL;
        return rdma_fraction(w, fraction, t);
    case TOPO_CEIL_TCP:
        return tcp_fraction(w, fraction, t);
    }
    return -EINVAL;
}

/* ---- PCIe ----
 * hwloc's link speed (hwloc_obj_attr_u.pcidev.linkspeed, GB/s) is lanes x GT/s x the
 * generation's encoding / 8, i.e. after 8b/10b (Gen1-2) or 128b/130b (Gen3-5): 63.015 GB/s
 * for Gen5 x16 is not to be multiplied by 128/130 again. PCIe 6.0 runs 64 GT/s PAM4 in FLIT
 * mode: a 256 B flit carries 236 B of TLPs (plus 6 B DLP, 8 B CRC, 6 B FEC), so its payload
 * link rate is width x 64 / 8 x 236/256 GB/s. On top of the link, every TLP carries framing
 * and headers: an STP token 4 B, a 4-DW memory header 16 B (64-bit address) and LCRC 4 B
 * (PCIe Base Spec 4.0, 4.2.2.3.2 and 2.2), 24 B around at most max-payload bytes; flit mode
 * drops STP and LCRC (16 B). DLLPs (ACK, flow control) and read requests are not counted,
 * so the PCIe ceiling is an upper bound. */
int topo_ceiling_pcie(double link_gbs, double gts, int width, int mps, double *payload_gbps,
                      double *link_out)
{
    if (!payload_gbps || mps < 128 || mps > 4096)
        return -EINVAL;
    bool gen6 = gts >= 60 && width > 0;
    double link;
    if (gen6)
        link = gts * width / 8.0 * 236.0 / 256.0;
    else if (link_gbs > 0 && isfinite(link_gbs))
        link = link_gbs;
    else if (gts > 0 && width > 0)
        link = gts * width / 8.0 * (gts < 8 ? 8.0 / 10.0 : 128.0 / 130.0);
    else
        return -EINVAL;
    double ovh = gen6 ? 16 : TOPO_CEIL_PCIE_TLP_OVERHEAD;
    *payload_gbps = link * 8.0 * mps / (mps + ovh);
    if (link_out)
        *link_out = link;
    return 0;
}

const char *topo_ceiling_pcie_gen(double gts)
{
    /* Per-lane rates: 2.5, 5, 8, 16, 32, 64 GT/s (the PCIe base specifications). */
    if (gts >= 60)
        return "Gen6";
    if (gts >= 31)
        return "Gen5";
    if (gts >= 15)
        return "Gen4";
    if (gts >= 7.9)
        return "Gen3";
    if (gts >= 4.9)
        return "Gen2";
    if (gts >= 2.4)
        return "Gen1";
    return "";
}

/* One PCI object's link as a LIMIT term; false when the model knows nothing of it. */
static bool pcie_term(const struct topo_model *m, int pci, const char *what, bool *mps_added,
                      struct topo_ceiling *c)
{
    const struct topo_pci *p = &m->pci[pci];
    double gbs = (p->valid & TOPO_PCI_V_LINK_GBS) ? p->link_gbs : 0;
    double gts = (p->valid & TOPO_PCI_V_CUR_SPEED) ? p->cur_speed_gts : 0;
    int w = (p->valid & TOPO_PCI_V_CUR_WIDTH) ? p->cur_width : 0;
    double pay, link;
    if (topo_ceiling_pcie(gbs, gts, w, TOPO_CEIL_PCIE_MPS, &pay, &link) < 0)
        return false;
    if (!*mps_added) {
        topo_ceiling_add(c, "PCIe max payload", TOPO_CEIL_ASSUMED, TOPO_CEIL_PCIE_MPS, "B",
                         "not discovered: assumed; %d B TLP overhead each",
                         TOPO_CEIL_PCIE_TLP_OVERHEAD);
        *mps_added = true;
    }
    char bdf[32], how[64] = "";
    topo_bdf_str(&p->addr, bdf, sizeof(bdf));
    if (gts > 0 && w > 0)
        snprintf(how, sizeof(how), "%s x%d, ", topo_ceiling_pcie_gen(gts), w);
    bool gen6 = gts >= 60 && w > 0;
    char name[40];
    snprintf(name, sizeof(name), "%s", what);
    topo_ceiling_add(
        c, name, TOPO_CEIL_LIMIT, pay, "Gb/s", "%s: %s%.3f GB/s after %s x 8 x %d/(%d+%d)", bdf,
        how, link, gen6 ? "FLIT 236/256" : (gbs > 0 ? "encoding (hwloc)" : "encoding"),
        TOPO_CEIL_PCIE_MPS, TOPO_CEIL_PCIE_MPS, gen6 ? 16 : TOPO_CEIL_PCIE_TLP_OVERHEAD);
    return true;
}

/* The device's own link and the uplinks of the PCIe switches above it. */
static void pcie_path(const struct topo_model *m, int pci, const char *what, struct topo_ceiling *c)
{
    if (pci < 0 || pci >= m->npci)
        return;
    bool mps = false;
    pcie_term(m, pci, what, &mps, c);
    int guard = 0;
    for (int up = m->pci[pci].parent; up >= 0 && up < m->npci && guard < 64;
         up = m->pci[up].parent, guard++)
        if (m->pci[up].role == TOPO_BRIDGE_SWITCH_UP)
            pcie_term(m, up, "PCIe switch uplink", &mps, c);
}

/* ---- NICs ---- */

static int netdev_of_nic(const struct topo_model *m, int nic)
{
    for (int d = 0; d < m->nnetdevs; d++)
        if (m->netdevs[d].nic == nic)
            return d;
    return -1;
}

int topo_ceiling_default_wire(const struct topo_model *m, int nic, int port,
                              struct topo_ceil_wire *w)
{
    if (!m || !w || nic < 0 || nic >= m->nnics || port >= m->nports)
        return -EINVAL;
    memset(w, 0, sizeof(*w));
    w->msg_bytes = UINT64_C(1) << 20;
    w->op = TOPO_CEIL_WRITE;
    if (port >= 0) {
        const struct topo_port *p = &m->ports[port];
        w->proto = (p->valid & TOPO_PORT_V_LL) && p->link_layer == TOPO_LL_ETHERNET
                       ? TOPO_CEIL_ROCE_V2
                       : TOPO_CEIL_IB;
        w->proto_assumed = !(p->valid & TOPO_PORT_V_LL) || p->link_layer == TOPO_LL_UNKNOWN;
        if ((p->valid & TOPO_PORT_V_MTU) && p->active_mtu >= 256 && p->active_mtu <= 4096) {
            w->mtu = p->active_mtu;
        } else {
            w->mtu = 4096; /* the largest IB MTU (IBTA Vol 1, 7.7.8), which fabtop's runs ask for */
            w->mtu_assumed = true;
        }
        return 0;
    }
    w->proto = TOPO_CEIL_TCP;
    int d = netdev_of_nic(m, nic);
    if (d >= 0 && (m->netdevs[d].valid & TOPO_NET_V_MTU) && m->netdevs[d].mtu >= 576) {
        w->mtu = m->netdevs[d].mtu;
    } else {
        w->mtu = 1500; /* Ethernet's default MTU */
        w->mtu_assumed = true;
    }
    return 0;
}

/* A NIC port (port >= 0), or a netdev (netdev >= 0) of NIC nic (-1 for a netdev of none). */
static int path_ceiling(const struct topo_model *m, int nic, int port, int netdev,
                        const struct topo_ceil_wire *w, struct topo_ceiling *out)
{
    char name[TOPO_NAME + 16];
    if (port >= 0)
        topo_port_label(m, port, name, sizeof(name));
    else if (netdev >= 0)
        snprintf(name, sizeof(name), "%s", m->netdevs[netdev].name);
    else
        topo_nic_name(m, nic, name, sizeof(name));
    char size[32];
    if (w->msg_bytes % (UINT64_C(1) << 20) == 0)
        snprintf(size, sizeof(size), "%llu MiB", (unsigned long long)(w->msg_bytes >> 20));
    else if (w->msg_bytes % 1024 == 0)
        snprintf(size, sizeof(size), "%llu KiB", (unsigned long long)(w->msg_bytes >> 10));
    else
        snprintf(size, sizeof(size), "%llu B", (unsigned long long)w->msg_bytes);
    snprintf(out->path, sizeof(out->path), "%s, %s%s, %s messages", name,
             topo_ceil_proto_str(w->proto), w->proto_assumed ? " (assumed)" : "", size);

    /* The port's rate: sysfs (or verbs) for an RDMA port, the netdev's speed otherwise. */
    double rate = 0;
    const char *speed = "";
    enum topo_link_layer ll = TOPO_LL_ETHERNET;
    char src[64] = "";
    if (port >= 0) {
        const struct topo_port *p = &m->ports[port];
        ll = (p->valid & TOPO_PORT_V_LL) ? p->link_layer : TOPO_LL_UNKNOWN;
        if ((p->valid & TOPO_PORT_V_RATE) && p->rate_gbps > 0) {
            rate = p->rate_gbps;
            speed = p->speed;
            snprintf(src, sizeof(src), "sysfs rate %g Gb/sec (%dX %s)", p->rate_gbps, p->width,
                     p->speed);
        } else if (p->netdev >= 0 && (m->netdevs[p->netdev].valid & TOPO_NET_V_SPEED) &&
                   m->netdevs[p->netdev].speed_mbps > 0 && ll == TOPO_LL_ETHERNET) {
            rate = m->netdevs[p->netdev].speed_mbps / 1000.0;
            snprintf(src, sizeof(src), "%s speed %d Mb/s", m->netdevs[p->netdev].name,
                     m->netdevs[p->netdev].speed_mbps);
        }
    } else {
        int d = netdev;
        if (d >= 0 && (m->netdevs[d].valid & TOPO_NET_V_SPEED) && m->netdevs[d].speed_mbps > 0) {
            rate = m->netdevs[d].speed_mbps / 1000.0;
            snprintf(src, sizeof(src), "%s speed %d Mb/s", m->netdevs[d].name,
                     m->netdevs[d].speed_mbps);
        }
    }
    double fraction;
    int rc = topo_ceiling_wire_fraction(w, &fraction, out);
    if (rc < 0)
        return rc;
    if (rate > 0) {
        double data;
        char how[160];
        topo_ceiling_port_data(rate, speed, ll, &data, how, sizeof(how));
        topo_ceiling_add(out, "port rate", TOPO_CEIL_RATE, rate, "Gb/s", "%s", src);
        topo_ceiling_add(out, "port data rate", TOPO_CEIL_RATE, data, "Gb/s", "%s", how);
        topo_ceiling_add(out, "port payload", TOPO_CEIL_LIMIT, data * fraction, "Gb/s",
                         "%.3f Gb/s x %.6f wire payload fraction", data, fraction);
    } else {
        /* n/a, not 0: the ceiling then comes from the other terms, and says which */
        topo_ceiling_add(out, "port rate", TOPO_CEIL_RATE, NAN, "Gb/s",
                         "not discovered (no sysfs rate or link speed): the port does not bound "
                         "this ceiling");
    }
    if (nic >= 0)
        pcie_path(m, m->nics[nic].pci, "NIC PCIe link", out);
    topo_ceiling_settle(out);
    return 0;
}

int topo_ceiling_nic(const struct topo_model *m, int nic, int port, const struct topo_ceil_wire *w,
                     struct topo_ceiling *out)
{
    if (!m || !out || nic < 0 || nic >= m->nnics || port >= m->nports)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->narrowest = -1;
    struct topo_ceil_wire def;
    if (!w) {
        int rc = topo_ceiling_default_wire(m, nic, port, &def);
        if (rc < 0)
            return rc;
        w = &def;
    }
    return path_ceiling(m, nic, port, port >= 0 ? -1 : netdev_of_nic(m, nic), w, out);
}

int topo_ceiling_netdev(const struct topo_model *m, int netdev, const struct topo_ceil_wire *w,
                        struct topo_ceiling *out)
{
    if (!m || !out || !w || netdev < 0 || netdev >= m->nnetdevs)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->narrowest = -1;
    int nic = m->netdevs[netdev].nic;
    return path_ceiling(m, nic >= 0 && nic < m->nnics ? nic : -1, -1, netdev, w, out);
}

/* ---- GPUs ---- */

int topo_ceiling_gpu_host(const struct topo_model *m, int gpu, struct topo_ceiling *out)
{
    if (!m || !out || gpu < 0 || gpu >= m->ngpus)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->narrowest = -1;
    char name[32];
    topo_gpu_name(m, gpu, name, sizeof(name));
    snprintf(out->path, sizeof(out->path), "%s <-> host memory, PCIe", name);
    pcie_path(m, m->gpus[gpu].pci, "GPU PCIe link", out);
    topo_ceiling_settle(out);
    return 0;
}

/* hwloc's NVLinkBandwidth matrix (MB/s, per direction) is what fabtop records per GPU pair;
 * links x per-link speed is how it is built (topo_hwloc.c), so the term shows both. */
int topo_ceiling_gpu_nvlink(const struct topo_model *m, int gpu, struct topo_ceiling *out)
{
    if (!m || !out || gpu < 0 || gpu >= m->ngpus)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->narrowest = -1;
    char name[32], peer[40];
    topo_gpu_name(m, gpu, name, sizeof(name));
    const char *kind = "NVLink";
    double total_mbs = 0;
    int total_links = 0, nlinks = 0;
    for (int i = 0; i < m->ngpulinks; i++) {
        const struct topo_gpulink *l = &m->gpulinks[i];
        if (l->gpu != gpu || !(l->bw_mbs > 0))
            continue;
        kind = l->kind[0] ? l->kind : kind;
        if (l->peer_kind == TOPO_PEER_GPU && l->peer >= 0 && l->peer < m->ngpus)
            topo_gpu_name(m, l->peer, peer, sizeof(peer));
        else if (l->peer_kind == TOPO_PEER_SWITCH)
            snprintf(peer, sizeof(peer), "switch");
        else
            snprintf(peer, sizeof(peer), "CPU");
        char tname[40];
        snprintf(tname, sizeof(tname), "%s to %s", kind, peer);
        if (l->links > 0)
            topo_ceiling_add(out, tname, TOPO_CEIL_RATE, l->bw_mbs * 8 / 1000, "Gb/s",
                             "%d links x %g GB/s = %g GB/s per direction", l->links,
                             l->bw_mbs / l->links / 1000, l->bw_mbs / 1000);
        else
            topo_ceiling_add(out, tname, TOPO_CEIL_RATE, l->bw_mbs * 8 / 1000, "Gb/s",
                             "%g GB/s per direction (link count unknown)", l->bw_mbs / 1000);
        total_mbs += l->bw_mbs;
        total_links += l->links > 0 ? l->links : 0;
        nlinks++;
    }
    snprintf(out->path, sizeof(out->path), "%s <-> its %s peers, all at once", name, kind);
    if (nlinks) {
        char tot[40];
        snprintf(tot, sizeof(tot), "%s total", kind);
        topo_ceiling_add(out, tot, TOPO_CEIL_LIMIT, total_mbs * 8 / 1000, "Gb/s",
                         "%d links, %g GB/s per direction", total_links, total_mbs / 1000);
    }
    topo_ceiling_settle(out);
    return 0;
}

/* The uplink of the first PCIe switch above pci (a switch upstream port), or -1. */
static int first_uplink(const struct topo_model *m, int pci)
{
    int guard = 0;
    for (int up = pci >= 0 && pci < m->npci ? m->pci[pci].parent : -1;
         up >= 0 && up < m->npci && guard < 64; up = m->pci[up].parent, guard++)
        if (m->pci[up].role == TOPO_BRIDGE_SWITCH_UP)
            return up;
    return -1;
}

int topo_ceiling_gpus_host(const struct topo_model *m, const int *gpus, int n,
                           struct topo_ceiling *out)
{
    if (!m || !out || !gpus || n < 1 || n > 64)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (gpus[i] < 0 || gpus[i] >= m->ngpus)
            return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->narrowest = -1;
    double each[64], sum = 0;
    char name[32], names[64] = "";
    bool all = true;
    for (int i = 0; i < n; i++) {
        struct topo_ceiling g;
        topo_ceiling_gpu_host(m, gpus[i], &g);
        topo_gpu_name(m, gpus[i], name, sizeof(name));
        size_t l = strlen(names);
        snprintf(names + l, sizeof(names) - l, "%s%s", i ? "+" : "", name);
        each[i] = g.valid ? g.gbps : 0;
        all = all && g.valid;
        char tname[40];
        snprintf(tname, sizeof(tname), "%s host path", name);
        topo_ceiling_add(out, tname, TOPO_CEIL_RATE, g.valid ? g.gbps : NAN, "Gb/s", "%s",
                         g.valid ? g.terms[g.narrowest].detail : "no PCIe link known");
        sum += each[i];
    }
    snprintf(out->path, sizeof(out->path), "%s <-> host memory, PCIe, at once", names);
    if (!all) {
        topo_ceiling_settle(out);
        return 0;
    }
    /* A switch uplink that several of them share carries all of theirs. */
    bool done[64] = {false};
    for (int i = 0; i < n; i++) {
        int up = first_uplink(m, m->gpus[gpus[i]].pci);
        if (up < 0 || done[i])
            continue;
        double under = 0, rest = 0;
        int k = 0;
        for (int j = 0; j < n; j++) {
            if (first_uplink(m, m->gpus[gpus[j]].pci) == up) {
                under += each[j];
                done[j] = true;
                k++;
            } else {
                rest += each[j];
            }
        }
        struct topo_ceiling u = {.narrowest = -1};
        bool mps = false;
        if (k > 1 && pcie_term(m, up, "shared PCIe switch uplink", &mps, &u)) {
            double link = u.terms[u.nterms - 1].value;
            if (link < under)
                topo_ceiling_add(out, "shared PCIe switch uplink", TOPO_CEIL_LIMIT, link + rest,
                                 "Gb/s",
                                 "%d GPUs below one uplink: %s, plus %.3f Gb/s of the others", k,
                                 u.terms[u.nterms - 1].detail, rest);
        }
    }
    topo_ceiling_add(out, "host paths, summed", TOPO_CEIL_LIMIT, sum, "Gb/s",
                     "%d GPUs' host paths, each its narrowest", n);
    topo_ceiling_settle(out);
    return 0;
}
