/* topo_lint: the bring-up checklist. Each rule is a function over the model (and the
 * error-counter samples) that appends findings; topo_lint_run runs them in table order and
 * sorts the result, errors first. Rules stay quiet on a healthy idle node: link speed that
 * drops at idle is INFO only, and counters alarm on change over a window, never on totals. */
#include "topology/topo_lint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_affinity.h"
#include "topology/topo_fablint.h"
#include "topology/topo_ibcounters.h"

/* RLIMIT_MEMLOCK below this warns. The kernel charges every ibv_reg_mr of host memory to
 * the locked-memory limit (drivers/infiniband/core/umem.c, ib_umem_get: pinned_vm against
 * RLIMIT_MEMLOCK unless CAP_IPC_LOCK). One QP with its CQ and rings plus a few MiB of
 * buffers fits in the 8 MiB default that kernels since 5.16 give, but a serving workload
 * does not: a bulk flow with 16 x 1 MiB messages in flight registers 32 MiB on each side,
 * and NCCL's host-memory path registers 4 MiB (NCCL_BUFFSIZE) per channel per peer.
 * 64 MiB leaves room for one such flow plus NCCL's buffers for a few peers; below it
 * registration failures under real traffic are likely. libibverbs' own warning (<= 32 KiB,
 * libibverbs/init.c check_memlock_limit) only catches limits too small for a single QP. */
#define LINT_MEMLOCK_MIN (64ull << 20)

/* PCIe ACS Control register bits (PCIe Base Spec 7.7.11.3; linux/pci_regs.h PCI_ACS_RR,
 * PCI_ACS_CR): P2P Request Redirect Enable and P2P Completion Redirect Enable. */
#define ACS_CTRL_RR 0x0004u
#define ACS_CTRL_CR 0x0008u

/* ---- findings ---- */

static void set_msg(struct topo_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_msg(struct topo_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
    va_end(ap);
}

static void set_remedy(struct topo_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_remedy(struct topo_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->remedy, sizeof(f->remedy), fmt, ap);
    va_end(ap);
}

/* ---- names ---- */

/* "GPU0 0000:17:00.0", "mlx5_0 0000:4d:00.0" or the bare address. */
static void pci_label(const struct topo_model *m, int pci, char *buf, size_t len)
{
    char bdf[24], name[TOPO_NAME];
    topo_bdf_str(&m->pci[pci].addr, bdf, sizeof(bdf));
    int g = topo_model_gpu_of_pci(m, pci), n = topo_model_nic_of_pci(m, pci);
    if (g >= 0) {
        topo_gpu_name(m, g, name, sizeof(name));
        snprintf(buf, len, "%s %s", name, bdf);
    } else if (n >= 0) {
        topo_nic_name(m, n, name, sizeof(name));
        snprintf(buf, len, "%s %s", name, bdf);
    } else {
        snprintf(buf, len, "%s", bdf);
    }
}

static bool port_active(const struct topo_port *p)
{
    return (p->valid & TOPO_PORT_V_STATE) &&
           (p->state == TOPO_PORT_ACTIVE || p->state == TOPO_PORT_ACTIVE_DEFER);
}

static bool port_known_down(const struct topo_port *p)
{
    return (p->valid & TOPO_PORT_V_STATE) && !port_active(p);
}

static enum topo_link_layer port_ll(const struct topo_port *p)
{
    return (p->valid & TOPO_PORT_V_LL) ? p->link_layer : TOPO_LL_UNKNOWN;
}

/* Has a function of the same adapter slot (domain:bus:device) already been reported by
 * this rule? Dual-function cards share one PCIe link, so one finding is enough. */
static bool slot_reported(const struct topo_model *m, const struct topo_findings *out,
                          const char *rule, int pci)
{
    const struct topo_bdf *a = &m->pci[pci].addr;
    for (int i = 0; i < out->n; i++) {
        const struct topo_finding *f = &out->v[i];
        if (f->pci < 0 || strcmp(f->rule, rule))
            continue;
        const struct topo_bdf *b = &m->pci[f->pci].addr;
        if (a->domain == b->domain && a->bus == b->bus && a->dev == b->dev)
            return true;
    }
    return false;
}

/* ---- PCIe link ---- */

/* Which PCI objects report their own upstream link: endpoint functions and switch
 * upstream ports. Root ports and switch downstream ports report the link to their child,
 * whose capability may be smaller by design, so the child speaks for that link. */
static bool reports_own_link(const struct topo_pci *p)
{
    return p->kind == TOPO_PCI_DEVICE ||
           (p->kind == TOPO_PCI_BRIDGE && p->role == TOPO_BRIDGE_SWITCH_UP);
}

/* The port above a device (its link partner), or NULL when not a known bridge. */
static const struct topo_pci *upstream_port(const struct topo_model *m, const struct topo_pci *p)
{
    if (p->parent < 0 || p->parent >= m->npci)
        return NULL;
    const struct topo_pci *u = &m->pci[p->parent];
    return u->kind == TOPO_PCI_BRIDGE ? u : NULL;
}

static int pcie_gen(double gts)
{
    static const double speeds[] = {2.5, 5, 8, 16, 32, 64, 128};
    for (int i = 0; i < 7; i++)
        if (gts < speeds[i] + 0.1)
            return i + 1;
    return 0;
}

/* Fraction of the raw line rate left after line encoding:
 *   2.5 and 5 GT/s (Gen1/2): 8b/10b              -> 0.8
 *   8, 16, 32 GT/s (Gen3-5): 128b/130b           -> 128/130
 *   64 GT/s and up (Gen6/7): FLIT mode; a 256-byte flit carries 236 bytes of TLP (the rest
 *   is 6 bytes DLP, 8 CRC, 6 FEC), so we assume 236/256 (PCIe Base Spec 6.0, Flit Mode).
 * (PCIe Base Spec 5.0 chapter 4.2 for the first two.) TLP headers and DLLPs cost several
 * percent more, so real throughput is lower still; we compare against this ceiling. */
static double pcie_encoding(double gts)
{
    if (gts < 7.9)
        return 8.0 / 10.0;
    if (gts < 63.0)
        return 128.0 / 130.0;
    return 236.0 / 256.0;
}

static const char *pcie_encoding_str(double gts)
{
    return gts < 7.9 ? "8b/10b" : gts < 63.0 ? "128b/130b" : "FLIT 236/256";
}

/* 1. pcie-width and 2. pcie-speed */
static void rule_pcie_link(const struct topo_model *m, const struct topo_lint_opts *o,
                           struct topo_findings *out)
{
    (void)o;
    for (int i = 0; i < m->npci; i++) {
        const struct topo_pci *p = &m->pci[i];
        if (!reports_own_link(p))
            continue;
        const struct topo_pci *up = upstream_port(m, p);
        char obj[64];
        unsigned wv = TOPO_PCI_V_CUR_WIDTH | TOPO_PCI_V_MAX_WIDTH;
        if ((p->valid & wv) == wv && p->cur_width > 0 && p->max_width > 0 &&
            p->cur_width < p->max_width && !slot_reported(m, out, "pcie-width", i)) {
            pci_label(m, i, obj, sizeof(obj));
            struct topo_finding *f = topo_findings_add(out, "pcie-width", TOPO_SEV_WARN, i, -1);
            snprintf(f->object, sizeof(f->object), "%s", obj);
            char why[96] = "";
            if (up && (up->valid & TOPO_PCI_V_MAX_WIDTH) && up->max_width > 0 &&
                up->max_width < p->max_width)
                snprintf(why, sizeof(why), "; the port above it supports only x%d", up->max_width);
            set_msg(f,
                    "PCIe link trained at x%d but the device supports x%d: %.0f%% of its "
                    "bandwidth is lost%s",
                    p->cur_width, p->max_width,
                    100.0 * (p->max_width - p->cur_width) / p->max_width, why);
            set_remedy(f,
                       why[0] ? "move the card to a slot wired for x%d"
                              : "reseat the card or riser, check the slot's wiring and "
                                "BIOS bifurcation (x%d expected)",
                       p->max_width);
        }
        unsigned sv = TOPO_PCI_V_CUR_SPEED | TOPO_PCI_V_MAX_SPEED;
        if ((p->valid & sv) == sv && p->cur_speed_gts > 0 && p->max_speed_gts > 0 &&
            p->cur_speed_gts + 0.01 < p->max_speed_gts && !slot_reported(m, out, "pcie-speed", i)) {
            pci_label(m, i, obj, sizeof(obj));
            struct topo_finding *f = topo_findings_add(out, "pcie-speed", TOPO_SEV_INFO, i, -1);
            snprintf(f->object, sizeof(f->object), "%s", obj);
            set_msg(f,
                    "PCIe link at %g GT/s (Gen%d), below its maximum %g GT/s (Gen%d); GPUs "
                    "and NICs slow their links when idle, so check under load",
                    p->cur_speed_gts, pcie_gen(p->cur_speed_gts), p->max_speed_gts,
                    pcie_gen(p->max_speed_gts));
            set_remedy(f, "re-check while traffic runs (fabtop run, or lspci -vv LnkSta); if it "
                          "stays low, check the slot, riser and BIOS link speed setting");
        }
    }
}

/* Usable one-direction PCIe bandwidth of a device's link, Gb/s, from its maximum speed
 * (the current one drops at idle) capped by the port above, and its trained width. */
static bool pcie_usable_gbps(const struct topo_model *m, const struct topo_pci *p, double *gbps,
                             double *gts, int *width)
{
    if (!(p->valid & TOPO_PCI_V_MAX_SPEED) || p->max_speed_gts <= 0)
        return false;
    double s = p->max_speed_gts;
    int w = 0;
    if ((p->valid & TOPO_PCI_V_CUR_WIDTH) && p->cur_width > 0)
        w = p->cur_width;
    else if ((p->valid & TOPO_PCI_V_MAX_WIDTH) && p->max_width > 0)
        w = p->max_width;
    if (!w)
        return false;
    const struct topo_pci *up = upstream_port(m, p);
    if (up && (up->valid & TOPO_PCI_V_MAX_SPEED) && up->max_speed_gts > 0 && up->max_speed_gts < s)
        s = up->max_speed_gts;
    if (up && !(p->valid & TOPO_PCI_V_CUR_WIDTH) && (up->valid & TOPO_PCI_V_MAX_WIDTH) &&
        up->max_width > 0 && up->max_width < w)
        w = up->max_width;
    *gts = s;
    *width = w;
    *gbps = s * w * pcie_encoding(s);
    return true;
}

/* 3. nic-pcie-bottleneck */
static void rule_nic_pcie(const struct topo_model *m, const struct topo_lint_opts *o,
                          struct topo_findings *out)
{
    (void)o;
    for (int n = 0; n < m->nnics; n++) {
        const struct topo_nic *nic = &m->nics[n];
        if (nic->pci < 0 || nic->pci >= m->npci)
            continue;
        double ports_gbps = 0;
        int nact = 0;
        for (int k = 0; k < nic->nports; k++) {
            int pi = nic->first_port + k;
            if (pi < 0 || pi >= m->nports)
                continue;
            const struct topo_port *p = &m->ports[pi];
            if (port_active(p) && (p->valid & TOPO_PORT_V_RATE) && p->rate_gbps > 0) {
                ports_gbps += p->rate_gbps;
                nact++;
            }
        }
        if (nic->nports == 0) {
            /* A plain network function: its netdevs' link speed stands in for port rate. */
            for (int d = 0; d < m->nnetdevs; d++) {
                const struct topo_netdev *nd = &m->netdevs[d];
                if (nd->nic != n || !(nd->valid & TOPO_NET_V_SPEED) || nd->speed_mbps <= 0)
                    continue;
                if ((nd->valid & TOPO_NET_V_OPER) && strcmp(nd->operstate, "up"))
                    continue;
                ports_gbps += nd->speed_mbps / 1000.0;
                nact++;
            }
        }
        double gbps, gts;
        int w;
        const struct topo_pci *pc = &m->pci[nic->pci];
        if (!nact || !pcie_usable_gbps(m, pc, &gbps, &gts, &w) || ports_gbps <= gbps)
            continue;
        char name[TOPO_NAME];
        topo_nic_name(m, n, name, sizeof(name));
        struct topo_finding *f =
            topo_findings_add(out, "nic-pcie-bottleneck", TOPO_SEV_WARN, nic->pci,
                              nic->nports > 0 ? nic->first_port : -1);
        pci_label(m, nic->pci, f->object, sizeof(f->object));
        set_msg(f,
                "PCIe x%d at %g GT/s (Gen%d, %s) carries at most %.0f Gb/s per direction, "
                "below the %.0f Gb/s of its %d active port%s: the NIC cannot reach line rate",
                w, gts, pcie_gen(gts), pcie_encoding_str(gts), gbps, ports_gbps, nact,
                nact == 1 ? "" : "s");
        /* The first x16 generation that carries the ports' rate. */
        int gen = 0;
        static const double gen_gts[] = {2.5, 5, 8, 16, 32, 64, 128};
        for (int k = 0; k < 7 && !gen; k++)
            if (16 * gen_gts[k] * pcie_encoding(gen_gts[k]) >= ports_gbps)
                gen = k + 1;
        if (gen)
            set_remedy(f,
                       "put %s in an x16 Gen%d slot (%.0f Gb/s) or faster, or expect at most "
                       "%.0f Gb/s from it",
                       name, gen, 16 * gen_gts[gen - 1] * pcie_encoding(gen_gts[gen - 1]), gbps);
        else
            set_remedy(f, "spread the ports over more adapters, or expect at most %.0f Gb/s", gbps);
    }
}

/* ---- ports ---- */

/* 4. port-state */
static void rule_port_state(const struct topo_model *m, const struct topo_lint_opts *o,
                            struct topo_findings *out)
{
    (void)o;
    for (int i = 0; i < m->nports; i++) {
        const struct topo_port *p = &m->ports[i];
        if (!topo_port_is_rdma(m, i))
            continue;
        bool bad_state = port_known_down(p);
        bool bad_phys = (p->valid & TOPO_PORT_V_PHYS) && p->phys_state != TOPO_PHYS_LINKUP;
        if (!bad_state && !bad_phys)
            continue;
        struct topo_finding *f =
            topo_findings_add(out, "port-state", TOPO_SEV_ERROR, topo_port_pci(m, i), i);
        topo_port_label(m, i, f->object, sizeof(f->object));
        set_msg(f, "port state %s, physical state %s (%s link layer): it carries no RDMA traffic",
                (p->valid & TOPO_PORT_V_STATE) ? topo_port_state_str(p->state) : "unknown",
                (p->valid & TOPO_PORT_V_PHYS) ? topo_phys_state_str(p->phys_state) : "unknown",
                topo_link_layer_str(port_ll(p)));
        enum topo_link_layer ll = port_ll(p);
        const char *nd =
            p->netdev >= 0 && p->netdev < m->nnetdevs ? m->netdevs[p->netdev].name : "the netdev";
        if (bad_phys && p->phys_state == TOPO_PHYS_DISABLED && ll == TOPO_LL_ETHERNET)
            set_remedy(f, "the port is disabled: ip link set %s up, and check the switch port", nd);
        else if (bad_phys && p->phys_state == TOPO_PHYS_DISABLED)
            set_remedy(f, "the port is administratively disabled: enable it (ibportstate LID "
                          "PORT enable) or on the switch side");
        else if (bad_phys)
            set_remedy(f, "no physical link: check the cable and transceiver, and that the "
                          "switch port is up and of the same link layer");
        else if (ll != TOPO_LL_ETHERNET &&
                 (p->state == TOPO_PORT_INIT || p->state == TOPO_PORT_ARMED))
            set_remedy(f, "the link is up but the subnet manager has not activated it: start "
                          "opensm or check the fabric's SM");
        else if (ll == TOPO_LL_ETHERNET)
            set_remedy(f,
                       "bring the link up (ip link set %s up) and check the cable and the "
                       "switch port",
                       nd);
        else
            set_remedy(f, "check the cable and the switch port, and on InfiniBand that a subnet "
                          "manager runs (ibstat, sminfo)");
    }
}

/* 5. ib-no-sm */
static void rule_ib_no_sm(const struct topo_model *m, const struct topo_lint_opts *o,
                          struct topo_findings *out)
{
    (void)o;
    for (int i = 0; i < m->nports; i++) {
        const struct topo_port *p = &m->ports[i];
        if (!topo_port_is_rdma(m, i) || port_ll(p) != TOPO_LL_INFINIBAND)
            continue;
        /* Without a physical link no SM can reach the port: port-state says so. */
        if ((p->valid & TOPO_PORT_V_PHYS) && p->phys_state != TOPO_PHYS_LINKUP)
            continue;
        bool no_sm = (p->valid & TOPO_PORT_V_SMLID) && p->sm_lid == 0;
        bool no_lid = (p->valid & TOPO_PORT_V_LID) && (p->lid == 0 || p->lid == 0xffff);
        if (!no_sm && !no_lid)
            continue;
        struct topo_finding *f =
            topo_findings_add(out, "ib-no-sm", TOPO_SEV_ERROR, topo_port_pci(m, i), i);
        topo_port_label(m, i, f->object, sizeof(f->object));
        char lid[32] = "unknown", sm[32] = "unknown";
        if (p->valid & TOPO_PORT_V_LID)
            snprintf(lid, sizeof(lid), "0x%x", (unsigned)p->lid);
        if (p->valid & TOPO_PORT_V_SMLID)
            snprintf(sm, sizeof(sm), "0x%x", (unsigned)p->sm_lid);
        set_msg(f,
                "no subnet manager: LID %s, SM LID %s; the port cannot be addressed and "
                "stays out of ACTIVE",
                lid, sm);
        set_remedy(f, "start a subnet manager (systemctl start opensm, or on a managed switch) "
                      "and check that it sees this port (sminfo, ibstat)");
    }
}

/* The most common value among active ports of one link layer (ties: the larger). */
static double mode_of(const double *v, int n)
{
    double best = 0;
    int best_n = 0;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = 0; j < n; j++)
            c += v[j] == v[i];
        if (c > best_n || (c == best_n && v[i] > best)) {
            best = v[i];
            best_n = c;
        }
    }
    return best;
}

/* 6. port-rate-mismatch */
static void rule_port_rate(const struct topo_model *m, const struct topo_lint_opts *o,
                           struct topo_findings *out)
{
    (void)o;
    double *rates = xalloc_zero((size_t)(m->nports ? m->nports : 1), sizeof(double));
    for (int ll = TOPO_LL_INFINIBAND; ll <= TOPO_LL_ETHERNET; ll++) {
        int n = 0;
        for (int i = 0; i < m->nports; i++) {
            const struct topo_port *p = &m->ports[i];
            if (topo_port_is_rdma(m, i) && port_active(p) &&
                port_ll(p) == (enum topo_link_layer)ll && (p->valid & TOPO_PORT_V_RATE) &&
                p->rate_gbps > 0)
                rates[n++] = p->rate_gbps;
        }
        if (n < 2)
            continue;
        double common = mode_of(rates, n);
        int same = 0;
        for (int k = 0; k < n; k++)
            same += rates[k] == common;
        for (int i = 0; i < m->nports; i++) {
            const struct topo_port *p = &m->ports[i];
            if (!topo_port_is_rdma(m, i) || !port_active(p) ||
                port_ll(p) != (enum topo_link_layer)ll || !(p->valid & TOPO_PORT_V_RATE) ||
                p->rate_gbps <= 0 || p->rate_gbps == common)
                continue;
            struct topo_finding *f =
                topo_findings_add(out, "port-rate-mismatch", TOPO_SEV_WARN, topo_port_pci(m, i), i);
            topo_port_label(m, i, f->object, sizeof(f->object));
            char sp[48] = "";
            if (p->speed[0])
                snprintf(sp, sizeof(sp), " (%dX %s)", p->width, p->speed);
            set_msg(f,
                    "active at %g Gb/s%s while %d other active %s port%s run%s at %g Gb/s: "
                    "collectives run at the slowest rank's pace",
                    p->rate_gbps, sp, same, topo_link_layer_str((enum topo_link_layer)ll),
                    same == 1 ? "" : "s", same == 1 ? "s" : "", common);
            set_remedy(f, "%s",
                       p->rate_gbps < common
                           ? "check the cable/transceiver rating and the switch port's speed "
                             "setting; reseat to retrain the link"
                           : "the other ports are slower: check their cables and switch ports");
        }
    }
    free(rates);
}

/* 7. roce-no-v2-gid */
static void rule_roce_gid(const struct topo_model *m, const struct topo_lint_opts *o,
                          struct topo_findings *out)
{
    (void)o;
    for (int i = 0; i < m->nports; i++) {
        const struct topo_port *p = &m->ports[i];
        if (!topo_port_is_rdma(m, i) || port_ll(p) != TOPO_LL_ETHERNET ||
            !(p->valid & TOPO_PORT_V_GIDS))
            continue;
        int v2 = 0, v1 = 0;
        for (int g = 0; g < p->ngids; g++) {
            v2 += p->gids[g].type == TOPO_GID_ROCE_V2;
            v1 += p->gids[g].type == TOPO_GID_ROCE_V1;
        }
        /* With entries but unknown types nothing can be said; an empty table has no v2. */
        if (p->ngids > 0 && !(p->valid & TOPO_PORT_V_GIDTYPES))
            continue;
        if (v2 > 0)
            continue;
        struct topo_finding *f =
            topo_findings_add(out, "roce-no-v2-gid", TOPO_SEV_WARN, topo_port_pci(m, i), i);
        topo_port_label(m, i, f->object, sizeof(f->object));
        const char *nd =
            p->netdev >= 0 && p->netdev < m->nnetdevs ? m->netdevs[p->netdev].name : "its netdev";
        if (p->ngids == 0)
            set_msg(f, "the GID table is empty: no RoCE v2 (routable, UDP/IP) GID, so RDMA "
                       "connections over IP cannot be made");
        else
            set_msg(f,
                    "%d GID%s (%d of them RoCE v1) but no RoCE v2 GID: no RDMA over routed "
                    "UDP/IP, at best the non-routable RoCE v1",
                    p->ngids, p->ngids == 1 ? "" : "s", v1);
        set_remedy(f,
                   "give %s an IP address (RoCE v2 GIDs follow the netdev's addresses) and "
                   "check that RoCE v2 is enabled for the device",
                   nd);
    }
}

static int netdev_mtu(const struct topo_model *m, const struct topo_port *p)
{
    if (p->netdev < 0 || p->netdev >= m->nnetdevs)
        return -1;
    const struct topo_netdev *d = &m->netdevs[p->netdev];
    return (d->valid & TOPO_NET_V_MTU) ? d->mtu : -1;
}

/* 8. roce-mtu and mtu-mismatch */
static void rule_mtu(const struct topo_model *m, const struct topo_lint_opts *o,
                     struct topo_findings *out)
{
    (void)o;
    char *flagged = xalloc_zero((size_t)(m->nports ? m->nports : 1), 1);
    for (int i = 0; i < m->nports; i++) {
        const struct topo_port *p = &m->ports[i];
        unsigned need = TOPO_PORT_V_MTU | TOPO_PORT_V_MAXMTU;
        if (!topo_port_is_rdma(m, i) || port_ll(p) != TOPO_LL_ETHERNET ||
            (p->valid & need) != need || port_known_down(p) || p->active_mtu <= 0 ||
            p->active_mtu >= p->max_mtu)
            continue;
        flagged[i] = 1;
        struct topo_finding *f =
            topo_findings_add(out, "roce-mtu", TOPO_SEV_WARN, topo_port_pci(m, i), i);
        topo_port_label(m, i, f->object, sizeof(f->object));
        int nmtu = netdev_mtu(m, p);
        const char *nd =
            p->netdev >= 0 && p->netdev < m->nnetdevs ? m->netdevs[p->netdev].name : "the netdev";
        char from[64] = "";
        if (nmtu > 0)
            snprintf(from, sizeof(from), " (derived from %s's MTU %d)", nd, nmtu);
        set_msg(f,
                "RoCE active MTU %d%s is below the port's maximum %d: every message is cut "
                "into smaller packets",
                p->active_mtu, from, p->max_mtu);
        set_remedy(f,
                   "raise the netdev MTU (ip link set %s mtu 4200, or 9000 for jumbo frames) "
                   "and the switch ports' MTU to match",
                   nd);
    }
    /* Different active MTUs within one link layer: the path MTU is the smallest. */
    for (int ll = TOPO_LL_INFINIBAND; ll <= TOPO_LL_ETHERNET; ll++) {
        int maxmtu = 0, nmax = 0;
        for (int i = 0; i < m->nports; i++) {
            const struct topo_port *p = &m->ports[i];
            if (topo_port_is_rdma(m, i) && port_active(p) &&
                port_ll(p) == (enum topo_link_layer)ll && (p->valid & TOPO_PORT_V_MTU) &&
                p->active_mtu > 0) {
                if (p->active_mtu > maxmtu) {
                    maxmtu = p->active_mtu;
                    nmax = 0;
                }
                nmax += p->active_mtu == maxmtu;
            }
        }
        for (int i = 0; i < m->nports; i++) {
            const struct topo_port *p = &m->ports[i];
            if (!topo_port_is_rdma(m, i) || !port_active(p) ||
                port_ll(p) != (enum topo_link_layer)ll || !(p->valid & TOPO_PORT_V_MTU) ||
                p->active_mtu <= 0 || p->active_mtu >= maxmtu || flagged[i])
                continue;
            struct topo_finding *f =
                topo_findings_add(out, "mtu-mismatch", TOPO_SEV_WARN, topo_port_pci(m, i), i);
            topo_port_label(m, i, f->object, sizeof(f->object));
            set_msg(f,
                    "active MTU %d while %d other active %s port%s use%s %d: traffic between "
                    "them runs at the smaller MTU",
                    p->active_mtu, nmax, topo_link_layer_str((enum topo_link_layer)ll),
                    nmax == 1 ? "" : "s", nmax == 1 ? "s" : "", maxmtu);
            if (ll == TOPO_LL_INFINIBAND)
                set_remedy(f, "set one MTU for the fabric in the SM's partition configuration "
                              "(opensm partitions.conf mtu=5 for 4096)");
            else
                set_remedy(f, "use one netdev MTU on every RoCE port (ip link set DEV mtu 4200 or "
                              "9000) and on the switches");
        }
    }
    free(flagged);
}

/* ---- placement ---- */

/* 9. gpu-nic-far */
static void rule_gpu_nic_far(const struct topo_model *m, const struct topo_lint_opts *o,
                             struct topo_findings *out)
{
    (void)o;
    if (m->ngpus == 0)
        return;
    struct topo_affinity a;
    if (topo_affinity_compute(m, &a) < 0)
        return;
    if (a.rdma_only && a.ncols > 0) {
        for (int g = 0; g < m->ngpus; g++) {
            const struct topo_nearest *nr = &a.nearest[g];
            if (nr->n == 0 || nr->rel < TOPO_REL_PHB)
                continue;
            struct topo_finding *f =
                topo_findings_add(out, "gpu-nic-far", TOPO_SEV_WARN, m->gpus[g].pci, -1);
            char gname[16], nics[128] = "";
            topo_gpu_name(m, g, gname, sizeof(gname));
            if (m->gpus[g].pci >= 0)
                pci_label(m, m->gpus[g].pci, f->object, sizeof(f->object));
            else
                snprintf(f->object, sizeof(f->object), "%s", gname);
            size_t used = 0;
            for (int k = 0; k < nr->n && used + 2 < sizeof(nics); k++) {
                char nn[TOPO_NAME];
                topo_nic_name(m, nr->nics[k], nn, sizeof(nn));
                int w = snprintf(nics + used, sizeof(nics) - used, "%s%s", k ? ", " : "", nn);
                if (w < 0)
                    break;
                used += (size_t)w;
            }
            static const char *const how[] = {"",
                                              "",
                                              "",
                                              "",
                                              "through the CPU's PCIe host bridge",
                                              "across host bridges of one NUMA node",
                                              "across the CPU sockets' interconnect"};
            set_msg(f,
                    "%s's nearest RDMA NIC (%s) is %s, %s: NCCL uses GPUDirect RDMA only up "
                    "to PXB by default, so its network traffic is staged through host memory",
                    gname, nics, topo_rel_str(nr->rel),
                    nr->rel == TOPO_REL_SYS && nr->same_package
                        ? "across NUMA nodes of the same socket"
                        : how[nr->rel]);
            set_remedy(f, "put each GPU and its NIC under one PCIe switch (PIX/PXB); otherwise "
                          "measure before raising NCCL_NET_GDR_LEVEL");
        }
    }
    topo_affinity_free(&a);
}

/* 10. fw-mismatch */
static bool same_model(const struct topo_adapter *a, const struct topo_adapter *b)
{
    return a->vendor_id == b->vendor_id && a->device_id == b->device_id;
}

static void rule_fw(const struct topo_model *m, const struct topo_lint_opts *opts,
                    struct topo_findings *out)
{
    (void)opts;
    char *done = xalloc_zero((size_t)(m->nadapters ? m->nadapters : 1), 1);
    for (int i = 0; i < m->nadapters; i++) {
        const struct topo_adapter *a = &m->adapters[i];
        if (done[i] || !a->fw_ver[0] || (!a->vendor_id && !a->device_id))
            continue;
        /* Distinct firmware versions of this model, in model order. */
        int ver[16], nver = 0, nad = 0;
        for (int j = i; j < m->nadapters; j++) {
            const struct topo_adapter *b = &m->adapters[j];
            if (!b->fw_ver[0] || !same_model(a, b))
                continue;
            done[j] = 1;
            nad++;
            bool seen = false;
            for (int k = 0; k < nver && !seen; k++)
                seen = !strcmp(m->adapters[ver[k]].fw_ver, b->fw_ver);
            if (!seen && nver < 16)
                ver[nver++] = j;
        }
        if (nver < 2)
            continue;
        /* List each version with its adapters; point at the rarest version's first one. */
        struct strbuf sb;
        strbuf_init(&sb);
        int odd = -1, odd_count = 1 << 30;
        for (int k = 0; k < nver; k++) {
            const char *fw = m->adapters[ver[k]].fw_ver;
            strbuf_printf(&sb, "%s%s (", k ? ", " : "", fw);
            int count = 0;
            for (int j = ver[k]; j < m->nadapters; j++) {
                const struct topo_adapter *b = &m->adapters[j];
                if (!same_model(a, b) || strcmp(b->fw_ver, fw))
                    continue;
                char nn[TOPO_NAME] = "?";
                if (b->nfuncs > 0)
                    topo_nic_name(m, b->funcs[0], nn, sizeof(nn));
                strbuf_printf(&sb, "%s%s", count++ ? ", " : "", nn);
            }
            strbuf_add(&sb, ")");
            if (count < odd_count) {
                odd_count = count;
                odd = ver[k];
            }
        }
        const struct topo_adapter *o = &m->adapters[odd];
        int pci = o->nfuncs > 0 ? m->nics[o->funcs[0]].pci : -1;
        struct topo_finding *f = topo_findings_add(out, "fw-mismatch", TOPO_SEV_WARN, pci, -1);
        snprintf(f->object, sizeof(f->object), "%s", a->model);
        set_msg(f, "%d adapters of model %04x:%04x run %d firmware versions: %s", nad, a->vendor_id,
                a->device_id, nver, sb.s);
        set_remedy(f, "flash every adapter of this model to one firmware version (mlxfwmanager "
                      "or the vendor's tool), then reset the adapters or reboot");
        strbuf_free(&sb);
    }
    free(done);
}

static bool has_rdma(const struct topo_model *m, bool pci_only)
{
    for (int i = 0; i < m->nnics; i++)
        if (m->nics[i].rdma_dev[0] && (!pci_only || m->nics[i].pci >= 0))
            return true;
    return false;
}

static void human_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= (1ull << 30) && b % (1ull << 30) == 0)
        snprintf(buf, len, "%llu GiB", (unsigned long long)(b >> 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.4g MiB", (double)b / (1 << 20));
    else
        snprintf(buf, len, "%.4g KiB", (double)b / (1 << 10));
}

/* 11. memlock */
static void rule_memlock(const struct topo_model *m, const struct topo_lint_opts *o,
                         struct topo_findings *out)
{
    (void)o;
    const struct topo_host *h = &m->host;
    if (!has_rdma(m, false) || !h->memlock_known || h->memlock_soft == UINT64_MAX ||
        h->memlock_soft >= LINT_MEMLOCK_MIN || h->is_root == TOPO_YES ||
        h->cap_ipc_lock == TOPO_YES)
        return;
    struct topo_finding *f = topo_findings_add(out, "memlock", TOPO_SEV_WARN, -1, -1);
    snprintf(f->object, sizeof(f->object), "%s", h->hostname[0] ? h->hostname : "host");
    char soft[32], hard[32], need[32];
    human_bytes(h->memlock_soft, soft, sizeof(soft));
    human_bytes(LINT_MEMLOCK_MIN, need, sizeof(need));
    if (h->memlock_hard == UINT64_MAX)
        snprintf(hard, sizeof(hard), "unlimited");
    else
        human_bytes(h->memlock_hard, hard, sizeof(hard));
    set_msg(f,
            "RLIMIT_MEMLOCK soft limit is %s (hard %s) for a non-root user without "
            "CAP_IPC_LOCK: RDMA memory registration (ibv_reg_mr) fails beyond it; fabtop wants "
            "at least %s, unlimited is best",
            soft, hard, need);
    if (h->memlock_hard == UINT64_MAX || h->memlock_hard >= LINT_MEMLOCK_MIN)
        set_remedy(f, "run 'ulimit -l unlimited' (the hard limit allows it), or set "
                      "'* - memlock unlimited' in /etc/security/limits.conf");
    else
        set_remedy(f, "set '* - memlock unlimited' in /etc/security/limits.conf (systemd: "
                      "LimitMEMLOCK=infinity), log in again, then 'ulimit -l unlimited'");
}

static bool nvidia_gpus(const struct topo_model *m)
{
    for (int g = 0; g < m->ngpus; g++) {
        int pci = m->gpus[g].pci;
        if (!strcmp(m->gpus[g].vendor, "NVIDIA") ||
            (pci >= 0 && pci < m->npci && m->pci[pci].vendor_id == 0x10de))
            return true;
    }
    return false;
}

/* 12. gdr-missing */
static void rule_gdr(const struct topo_model *m, const struct topo_lint_opts *o,
                     struct topo_findings *out)
{
    (void)o;
    if (m->ngpus == 0 || !has_rdma(m, true))
        return;
    const struct topo_host *h = &m->host;
    /* nvidia_peermem only matters for NVIDIA GPUs; for others dma-buf is the only path. */
    int peer = nvidia_gpus(m) ? h->nvidia_peermem : TOPO_NO;
    if (peer == TOPO_YES || h->dmabuf == TOPO_YES)
        return;
    bool known = peer == TOPO_NO && h->dmabuf == TOPO_NO;
    struct topo_finding *f =
        topo_findings_add(out, "gdr-missing", known ? TOPO_SEV_WARN : TOPO_SEV_INFO, -1, -1);
    snprintf(f->object, sizeof(f->object), "%s", h->hostname[0] ? h->hostname : "host");
    static const char *const tri[] = {"unknown", "no", "yes"};
    if (known)
        set_msg(f, "GPUs and RDMA NICs are present but neither nvidia_peermem is loaded nor "
                   "dma-buf is supported: the NICs cannot read or write GPU memory (no GPUDirect "
                   "RDMA), so transfers are staged through host memory");
    else
        set_msg(f,
                "could not tell whether GPUDirect RDMA is available (nvidia_peermem loaded: "
                "%s, dma-buf: %s)",
                tri[peer + 1], tri[h->dmabuf + 1]);
    set_remedy(f, "load nvidia_peermem (modprobe nvidia_peermem), or use a driver and kernel "
                  "with dma-buf support (open GPU kernel modules, kernel 5.12+)");
}

/* 13. acs-redirect: bridges strictly below the lowest common ancestor on a GPU-NIC path
 * that stays inside PCIe switches (PIX/PXB). Through the host bridge the traffic reaches
 * the root complex anyway, so redirect changes nothing there. */
static void rule_acs(const struct topo_model *m, const struct topo_lint_opts *o,
                     struct topo_findings *out)
{
    (void)o;
    int *pairs = xalloc_zero((size_t)(m->npci ? m->npci : 1), sizeof(int));
    int *example_gpu = xalloc_zero((size_t)(m->npci ? m->npci : 1), sizeof(int));
    int *example_nic = xalloc_zero((size_t)(m->npci ? m->npci : 1), sizeof(int));
    for (int g = 0; g < m->ngpus; g++) {
        int gp = m->gpus[g].pci;
        if (gp < 0 || gp >= m->npci)
            continue;
        for (int n = 0; n < m->nnics; n++) {
            int np = m->nics[n].pci;
            if (!m->nics[n].rdma_dev[0] || np < 0 || np >= m->npci)
                continue;
            enum topo_rel r = topo_affinity_pci(m, gp, np, NULL);
            if (r != TOPO_REL_PIX && r != TOPO_REL_PXB)
                continue;
            /* Mark the ancestors of the NIC, then walk up from the GPU to the first marked
             * one (the LCA); then walk up from the NIC to it. */
            for (int side = 0; side < 2; side++) {
                int from = side ? np : gp, other = side ? gp : np;
                for (int x = m->pci[from].parent; x >= 0; x = m->pci[x].parent) {
                    bool common = false;
                    for (int y = other; y >= 0; y = m->pci[y].parent)
                        if (y == x)
                            common = true;
                    if (common)
                        break;
                    const struct topo_pci *b = &m->pci[x];
                    if (b->kind == TOPO_PCI_BRIDGE && (b->valid & TOPO_PCI_V_ACS) &&
                        (b->acs_ctrl & (ACS_CTRL_RR | ACS_CTRL_CR))) {
                        if (!pairs[x]) {
                            example_gpu[x] = g;
                            example_nic[x] = n;
                        }
                        pairs[x]++;
                    }
                }
            }
        }
    }
    for (int x = 0; x < m->npci; x++) {
        if (!pairs[x])
            continue;
        const struct topo_pci *b = &m->pci[x];
        struct topo_finding *f = topo_findings_add(out, "acs-redirect", TOPO_SEV_WARN, x, -1);
        topo_bdf_str(&b->addr, f->object, sizeof(f->object));
        char gname[16], nname[TOPO_NAME];
        topo_gpu_name(m, example_gpu[x], gname, sizeof(gname));
        topo_nic_name(m, example_nic[x], nname, sizeof(nname));
        set_msg(f,
                "ACS control 0x%04x enables P2P %s%s%s redirect on this bridge, which is on "
                "the path of %d GPU-NIC pair%s (e.g. %s-%s): their peer-to-peer traffic detours "
                "through the root complex instead of staying in the PCIe switch",
                b->acs_ctrl, (b->acs_ctrl & ACS_CTRL_RR) ? "Request" : "",
                (b->acs_ctrl & ACS_CTRL_RR) && (b->acs_ctrl & ACS_CTRL_CR) ? " and " : "",
                (b->acs_ctrl & ACS_CTRL_CR) ? "Completion" : "", pairs[x], pairs[x] == 1 ? "" : "s",
                gname, nname);
        char bdf[24];
        topo_bdf_str(&b->addr, bdf, sizeof(bdf));
        set_remedy(f,
                   "disable ACS redirect on this port (setpci -s %s ECAP_ACS+6.w=0, at every "
                   "boot) or in the BIOS; keep it only where VM/VFIO isolation needs it",
                   bdf);
    }
    free(pairs);
    free(example_gpu);
    free(example_nic);
}

/* ---- error counters ---- */

/* 14. err-counter-rising, err-counter-saturated, err-counter-reset */
static void rule_counters(const struct topo_model *m, const struct topo_lint_opts *o,
                          struct topo_findings *out)
{
    if (!o || !o->errs)
        return;
    const struct topo_err_samples *s = o->errs;
    for (int i = 0; i < s->n; i++) {
        const struct topo_err_counter *e = &s->v[i];
        if (e->port < 0 || e->port >= m->nports)
            continue;
        const struct topo_ibcounter *c = topo_ibc_find(e->name);
        char obj[64];
        topo_port_label(m, e->port, obj, sizeof(obj));
        int pci = topo_port_pci(m, e->port);
        uint64_t max = topo_ibc_max(e->width);
        if (e->valid0 && e->valid1 && e->v1 > e->v0) {
            uint64_t d = e->v1 - e->v0;
            bool hit_max = max && e->v1 == max;
            struct topo_finding *f =
                topo_findings_add(out, "err-counter-rising", TOPO_SEV_ERROR, pci, e->port);
            snprintf(f->object, sizeof(f->object), "%s", obj);
            char rate[64] = "";
            if (s->window_s > 0) {
                double r = (double)d / s->window_s;
                snprintf(rate, sizeof(rate),
                         r >= 100 ? " in %.3g s (%.0f/s)" : " in %.3g s (%.3g/s)", s->window_s, r);
            }
            set_msg(f, "%s rose by %s%llu, from %llu to %llu%s%s%s%s", e->name,
                    hit_max ? "at least " : "", (unsigned long long)d, (unsigned long long)e->v0,
                    (unsigned long long)e->v1, rate, hit_max ? " (now saturated)" : "",
                    c ? ": " : "", c ? c->meaning : "");
            set_remedy(f, "%s", c && c->action ? c->action : "watch the counter under load");
        } else if (e->valid0 && e->valid1 && e->v1 < e->v0) {
            struct topo_finding *f =
                topo_findings_add(out, "err-counter-reset", TOPO_SEV_INFO, pci, e->port);
            snprintf(f->object, sizeof(f->object), "%s", obj);
            set_msg(f,
                    "%s went from %llu down to %llu: it was cleared during the window (a "
                    "perfquery -R, a driver reload or a port reset), so its change is unknown",
                    e->name, (unsigned long long)e->v0, (unsigned long long)e->v1);
            set_remedy(f, "sample again without clearing counters in between");
        }
        bool have = e->valid1 || e->valid0;
        uint64_t last = e->valid1 ? e->v1 : e->v0;
        if (have && max && last == max) {
            struct topo_finding *f =
                topo_findings_add(out, "err-counter-saturated", TOPO_SEV_WARN, pci, e->port);
            snprintf(f->object, sizeof(f->object), "%s", obj);
            set_msg(f,
                    "%s reads %llu = 2^%d - 1, where this %d-bit counter stops: saturated: the "
                    "real count is unknown and further increases cannot be seen",
                    e->name, (unsigned long long)last, e->width, e->width);
            const struct topo_port *p = &m->ports[e->port];
            const char *dev =
                p->nic >= 0 && p->nic < m->nnics ? m->nics[p->nic].rdma_dev : "DEVICE";
            set_remedy(f,
                       "clear it with perfquery -x -R -C %s -P %d, then watch whether it "
                       "rises again",
                       dev, p->num);
        }
    }
}

/* ---- driver ---- */

/* The rules in the order they run (the findings of each sorted stably, errors first). */
const struct topo_lint_rule topo_lint_rules[] = {
    {"pcie-width", "a PCIe device (or switch uplink) trained at fewer lanes than it supports",
     TOPO_SEV_WARN, rule_pcie_link},
    {"pcie-speed", "a PCIe link below its maximum speed (INFO: devices slow their links at idle)",
     TOPO_SEV_INFO, rule_pcie_link},
    {"nic-pcie-bottleneck", "a NIC whose PCIe link carries less than its active ports' rate",
     TOPO_SEV_WARN, rule_nic_pcie},
    {"port-state", "an RDMA port not ACTIVE, or its physical link not LinkUp", TOPO_SEV_ERROR,
     rule_port_state},
    {"ib-no-sm", "an InfiniBand port without a subnet manager (SM LID 0, or LID 0/0xffff)",
     TOPO_SEV_ERROR, rule_ib_no_sm},
    {"port-rate-mismatch", "active ports of one link layer running at different rates",
     TOPO_SEV_WARN, rule_port_rate},
    {"roce-no-v2-gid", "a RoCE port whose GID table has no RoCE v2 entry", TOPO_SEV_WARN,
     rule_roce_gid},
    {"roce-mtu", "a RoCE port whose active MTU is below its maximum (netdev MTU too small)",
     TOPO_SEV_WARN, rule_mtu},
    {"mtu-mismatch", "active ports of one link layer with different active MTUs", TOPO_SEV_WARN,
     rule_mtu},
    {"gpu-nic-far", "a GPU whose nearest RDMA NIC is PHB or farther (no GPUDirect RDMA by default)",
     TOPO_SEV_WARN, rule_gpu_nic_far},
    {"fw-mismatch", "adapters of one model running different firmware", TOPO_SEV_WARN, rule_fw},
    {"memlock", "RLIMIT_MEMLOCK too low to register RDMA memory (non-root, no CAP_IPC_LOCK)",
     TOPO_SEV_WARN, rule_memlock},
    {"gdr-missing", "GPUs and RDMA NICs without nvidia_peermem or dma-buf for GPUDirect RDMA",
     TOPO_SEV_WARN, rule_gdr},
    {"acs-redirect", "PCIe ACS P2P redirect on a bridge between a GPU and a NIC", TOPO_SEV_WARN,
     rule_acs},
    {"err-counter-rising", "an InfiniBand error counter that increased during the window",
     TOPO_SEV_ERROR, rule_counters},
    {"err-counter-saturated", "an InfiniBand error counter stuck at its maximum value",
     TOPO_SEV_WARN, rule_counters},
    {"err-counter-reset", "an InfiniBand error counter that was cleared during the window (INFO)",
     TOPO_SEV_INFO, rule_counters},
    /* Fabric rules (topo_fablint.c). */
    {"port-ll-mismatch",
     "a port stuck in Polling whose link layer differs from its siblings' or the stated one",
     TOPO_SEV_ERROR, topo_fablint_ll_polling},
    {"fabric-link-mismatch",
     "a host port and its switch port (or two ends of a cable) at different widths or speeds",
     TOPO_SEV_WARN, topo_fablint_host_vs_switch},
    {"fabric-link-degraded", "a fabric link narrower or slower than both its ends support",
     TOPO_SEV_WARN, topo_fablint_degraded},
    {"cabling-plan", "cabling that differs from the plan given with --cabling", TOPO_SEV_ERROR,
     topo_fablint_cabling},
    {"route-broken", "a route whose forwarding tables do not lead to its destination",
     TOPO_SEV_ERROR, topo_fablint_routes},
    {"switch-counter-rising", "a switch port error counter that rose during the window",
     TOPO_SEV_ERROR, topo_fablint_switch_counters},
    {"switch-counter-saturated", "a switch port error counter stuck at its maximum value",
     TOPO_SEV_WARN, topo_fablint_switch_counters},
    {"switch-xmit-wait", "a switch egress that waited for credits during the window (congestion)",
     TOPO_SEV_WARN, topo_fablint_switch_counters},
};
const int topo_lint_nrules = (int)(sizeof(topo_lint_rules) / sizeof(topo_lint_rules[0]));

void topo_lint_run(const struct topo_model *m, const struct topo_lint_opts *o,
                   struct topo_findings *out)
{
    if (!m || !out)
        return;
    for (int i = 0; i < topo_lint_nrules; i++)
        if (i == 0 || topo_lint_rules[i].check != topo_lint_rules[i - 1].check)
            topo_lint_rules[i].check(m, o, out);
    topo_findings_sort(out);
}

/* ---- sampling ---- */

static int counter_path(const struct topo_model *m, int port, const char *dir, const char *name,
                        char *buf, size_t len)
{
    const struct topo_port *p = &m->ports[port];
    int n = snprintf(buf, len, "sys/class/infiniband/%s/ports/%d/%s/%s", m->nics[p->nic].rdma_dev,
                     p->num, dir, name);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int topo_lint_sample(const struct topo_model *m, const char *root, bool second,
                     struct topo_err_samples *s)
{
    if (!m || !s)
        return -EINVAL;
    char rel[512];
    int nread = 0;
    if (second) {
        for (int i = 0; i < s->n; i++) {
            struct topo_err_counter *e = &s->v[i];
            e->valid1 = false;
            const struct topo_ibcounter *c = topo_ibc_find(e->name);
            if (e->port < 0 || e->port >= m->nports || !topo_port_is_rdma(m, e->port) || !c ||
                counter_path(m, e->port, c->dir, c->name, rel, sizeof(rel)) < 0)
                continue;
            uint64_t v;
            if (fsutil_read_u64(root, rel, &v) == 0) {
                e->v1 = v;
                e->valid1 = true;
                nread++;
            }
        }
        return nread;
    }
    s->n = 0;
    for (int pi = 0; pi < m->nports; pi++) {
        if (!topo_port_is_rdma(m, pi))
            continue;
        for (int k = 0; k < topo_ibcounters_n; k++) {
            const struct topo_ibcounter *c = &topo_ibcounters[k];
            if (!c->is_error || counter_path(m, pi, c->dir, c->name, rel, sizeof(rel)) < 0)
                continue;
            uint64_t v = 0;
            int rc = fsutil_read_u64(root, rel, &v);
            /* A file that does not exist is not a counter of this port; one that exists
             * but says "N/A (no PMA)" or cannot be read is an invalid sample, never 0. */
            if (rc == -ENOENT || rc == -ENOTDIR)
                continue;
            if (s->n == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 32;
                s->v = xalloc_resize(s->v, (size_t)s->cap * sizeof(*s->v));
            }
            struct topo_err_counter *e = &s->v[s->n++];
            memset(e, 0, sizeof(*e));
            e->port = pi;
            snprintf(e->name, sizeof(e->name), "%s", c->name);
            e->width = c->width;
            e->valid0 = rc == 0;
            e->v0 = rc == 0 ? v : 0;
            nread += rc == 0;
        }
    }
    return nread;
}

void topo_err_samples_free(struct topo_err_samples *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

const char *topo_sev_str(enum topo_sev s)
{
    return s == TOPO_SEV_ERROR ? "error" : s == TOPO_SEV_WARN ? "warning" : "info";
}
