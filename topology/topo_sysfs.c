/* topo_sysfs: the sysfs enricher. It places RDMA devices on the model's PCI functions by
 * the PCI address their sysfs links name (never by device name), reads ports, GID tables,
 * netdevs, PCIe link speed/width and ACS, all below a root ("/" live, or a captured tree),
 * and adds software RDMA devices (rxe) that hwloc does not attach to PCI. */
#include "topology/topo_enrich.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

/* A software RDMA device (rxe) and the netdev it runs on, linked after the netdev pass. */
struct soft_dev {
    int nic;
    char parent[32];
};

struct sys_ctx {
    struct topo_model *m;
    const char *root;
    bool live; /* the running system: getifaddrs() describes the same netdevs */
    struct soft_dev *soft;
    int nsoft;
};

static bool applies(const struct topo_model *m, const struct topo_load_opts *o)
{
    (void)m;
    return !o->input; /* live ("/") or a captured sysfs root */
}

/* ---- small readers ---- */

/* Read root/rel into buf; true when it held some text. */
static bool read_str(struct sys_ctx *c, const char *rel, char *buf, size_t len)
{
    int n = fsutil_read(c->root, rel, buf, len);
    if (n <= 0) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

static void copy_if_read(struct sys_ctx *c, const char *rel, char *dst, size_t len)
{
    char buf[256];
    if (read_str(c, rel, buf, sizeof(buf)))
        snprintf(dst, len, "%s", buf);
}

/* Parse a decimal integer that fills the whole string. */
static bool parse_int(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s)
        return false;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

/* ---- where a class device lives ---- */

enum dev_link {
    LINK_NONE,     /* no device link: a virtual device, or a capture without links */
    LINK_DANGLING, /* the class entry or its device link points at nothing */
    LINK_PCI,      /* a PCI function: *bdf is filled */
    LINK_OTHER,    /* something else (a netdev, a platform device) */
};

/* The PCI address a path component names ("0000:82:00.0"). */
static bool bdf_component(const char *s, size_t n, struct topo_bdf *bdf)
{
    char buf[32];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return topo_bdf_parse(buf, bdf) == 0;
}

/* The last PCI address among the components of a device path below devices/: the device
 * itself, or the PCI function it hangs from (a virtio netdev's device is "virtio2" below
 * 0000:00:03.0; an mlx5 sub-function is an auxiliary device below its PF). hwloc attaches
 * OS devices to that same nearest PCI ancestor. */
static bool nearest_pci(const char *path, size_t len, struct topo_bdf *bdf)
{
    const char *end = path + len, *p = path;
    for (const char *d = path; (d = strstr(d, "/devices/")) && d < end; d++)
        p = d + 9;
    bool found = false;
    while (p < end) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        size_t n = (size_t)((slash ? slash : end) - p);
        struct topo_bdf b;
        if (bdf_component(p, n, &b)) {
            *bdf = b;
            found = true;
        }
        p += n + 1;
    }
    return found;
}

/* Where /sys/class/CLS/NAME belongs. The `device` link names the parent device; a capture
 * that dropped it may still keep the class entry's own link, whose target is the device
 * path ".../0000:82:00.0/CLS/NAME" (hwloc locates OS devices the same way). */
static enum dev_link class_device(struct sys_ctx *c, const char *cls, const char *name,
                                  struct topo_bdf *bdf)
{
    char rel[512], path[4096], real[PATH_MAX];
    struct stat st;
    snprintf(rel, sizeof(rel), "sys/class/%s/%s", cls, name);
    if (fsutil_path(path, sizeof(path), c->root, rel) < 0 || lstat(path, &st) < 0)
        return LINK_NONE;
    if (stat(path, &st) < 0) {
        /* a virtual device (bridge, VLAN) whose directory was not captured */
        char t[4096];
        ssize_t tn = readlink(path, t, sizeof(t) - 1);
        t[tn > 0 ? tn : 0] = '\0';
        return strstr(t, "/devices/virtual/") ? LINK_NONE : LINK_DANGLING;
    }

    char dev[4096];
    snprintf(dev, sizeof(dev), "%s/device", path);
    if (lstat(dev, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (!realpath(dev, real))
            return LINK_DANGLING;
        return nearest_pci(real, strlen(real), bdf) ? LINK_PCI : LINK_OTHER;
    }

    char target[4096];
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0)
        return LINK_NONE;
    target[n] = '\0';
    char tail[128];
    snprintf(tail, sizeof(tail), "/%s/%s", cls, name);
    size_t tl = strlen(tail);
    if ((size_t)n <= tl || strcmp(target + n - tl, tail))
        return LINK_NONE;
    return nearest_pci(target, (size_t)n - tl, bdf) ? LINK_PCI : LINK_NONE;
}

/* ---- port attribute formats (drivers/infiniband/core/sysfs.c) ---- */

/* "4: ACTIVE" (state_show prints "%d: %s" with names NOP DOWN INIT ARMED ACTIVE
 * ACTIVE_DEFER). The name must agree with the number, else the file is not kernel
 * output and the state is left unknown. */
static bool parse_numbered(const char *s, const char *const *names, int nnames, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < 0 || v >= nnames)
        return false;
    if (*end == '\0') {
        *out = (int)v;
        return true;
    }
    if (end[0] != ':' || end[1] != ' ')
        return false;
    const char *name = end + 2;
    if (strcasecmp(name, names[v]) && strcmp(name, "<unknown>"))
        return false;
    *out = (int)v;
    return true;
}

static bool parse_state(const char *s, enum topo_port_state *out)
{
    static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
    int v;
    if (!parse_numbered(s, names, 6, &v) || v == 0) /* 0 (NOP) is no state at all */
        return false;
    *out = (enum topo_port_state)v;
    return true;
}

/* phys_state_show: "5: LinkUp"; 7 was written "Phy Test". */
static bool parse_phys(const char *s, enum topo_phys_state *out)
{
    static const char *const names[] = {"<unknown>",
                                        "Sleep",
                                        "Polling",
                                        "Disabled",
                                        "PortConfigurationTraining",
                                        "LinkUp",
                                        "LinkErrorRecovery",
                                        "Phy Test"};
    int v;
    if (!parse_numbered(s, names, 8, &v) || v == 0)
        return false;
    *out = (enum topo_phys_state)v;
    return true;
}

/* Per-lane data rates of the IB speed names, Gb/s (ib_verbs.h enum ib_port_speed and
 * rate_show's table; FDR is 14.0625 but the kernel counts it as 14). */
static const struct {
    const char *name;
    double lane_gbps;
} ib_speeds[] = {
    {"SDR", 2.5}, {"DDR", 5},  {"QDR", 10},  {"FDR10", 10}, {"FDR", 14},
    {"EDR", 25},  {"HDR", 50}, {"NDR", 100}, {"XDR", 200},
};

static bool valid_width(long w)
{
    return w == 1 || w == 2 || w == 4 || w == 8 || w == 12;
}

/* rate_show prints "%d%s Gb/sec (%dX%s)": the total rate (".5" for half Gb/s), the
 * width and " NAME" (older kernels print no name for SDR: "10 Gb/sec (4X)"). */
static bool parse_rate(const char *s, double *gbps, int *width, char *speed, size_t slen)
{
    char *end;
    errno = 0;
    double r = strtod(s, &end);
    if (errno || end == s || !(r > 0) || r > 1e6 || strncmp(end, " Gb/sec (", 9))
        return false;
    const char *p = end + 9;
    long w = strtol(p, &end, 10);
    if (end == p || *end != 'X' || !valid_width(w))
        return false;
    p = end + 1;
    char name[32] = "SDR";
    if (*p == ' ') {
        p++;
        size_t n = strcspn(p, ")");
        if (n == 0 || n >= sizeof(name))
            return false;
        memcpy(name, p, n);
        name[n] = '\0';
        p += n;
    }
    if (strcmp(p, ")"))
        return false;
    for (size_t i = 0; i < sizeof(ib_speeds) / sizeof(ib_speeds[0]); i++)
        if (!strcmp(name, ib_speeds[i].name) && fabs(ib_speeds[i].lane_gbps * (double)w - r) > 0.01)
            return false; /* the kernel derives the total from these two; this is not its text */
    *gbps = r;
    *width = (int)w;
    snprintf(speed, slen, "%s", name);
    return true;
}

/* ---- GIDs ---- */

/* sysfs prints GIDs with %pI6 ("fe80:0000:...:bfa1"). An IB GID is subnet prefix + port
 * GUID; unused entries read all zero, or fe80:: with a zero GUID (mlx4 IB ports). */
static bool gid_unused(const struct in6_addr *a)
{
    static const uint8_t zero[8] = {0};
    bool zero_id = !memcmp(a->s6_addr + 8, zero, 8);
    bool zero_prefix = !memcmp(a->s6_addr, zero, 8);
    return zero_id && (zero_prefix || IN6_IS_ADDR_LINKLOCAL(a));
}

/* The IP address a RoCE GID carries: IPv4 for ::ffff:a.b.c.d, IPv6 text unless it is
 * link-local (fe80::/10, derived from the MAC). IB GIDs carry none. */
static void gid_ip(const struct in6_addr *a, bool ib, char *ip, size_t len)
{
    ip[0] = '\0';
    if (IN6_IS_ADDR_V4MAPPED(a)) {
        inet_ntop(AF_INET, a->s6_addr + 12, ip, (socklen_t)len);
        return;
    }
    if (ib || IN6_IS_ADDR_LINKLOCAL(a))
        return;
    inet_ntop(AF_INET6, a, ip, (socklen_t)len);
}

/* Replace the port's GID list with the sysfs table. gid_attrs/types/I holds "IB/RoCE v1"
 * or "RoCE v2" (ib_cache_gid_type_str); reading it (or ndevs/I) for an unused entry fails
 * with EINVAL on live kernels, and IB GIDs have no ndev: both read as empty here. */
static void read_gids(struct sys_ctx *c, const char *portdir, struct topo_port *p)
{
    char rel[512];
    char **names = NULL;
    snprintf(rel, sizeof(rel), "%s/gids", portdir);
    if (fsutil_list(c->root, rel, &names) < 0)
        return; /* keep what hwloc gave, if anything */
    free(p->gids);
    p->gids = NULL;
    p->ngids = 0;
    p->valid |= TOPO_PORT_V_GIDS;
    p->valid &= ~TOPO_PORT_V_GIDTYPES;
    bool ll_ib = (p->valid & TOPO_PORT_V_LL) && p->link_layer == TOPO_LL_INFINIBAND;
    bool typed = false;
    for (char **n = names; *n; n++) {
        long idx;
        if (!parse_int(*n, &idx) || idx < 0)
            continue;
        char text[64];
        struct in6_addr a;
        snprintf(rel, sizeof(rel), "%s/gids/%s", portdir, *n);
        if (!read_str(c, rel, text, sizeof(text)) || inet_pton(AF_INET6, text, &a) != 1 ||
            gid_unused(&a))
            continue;
        struct topo_gid g = {.index = (int)idx, .type = TOPO_GID_IB};
        snprintf(g.gid, sizeof(g.gid), "%s", text);
        char type[32];
        snprintf(rel, sizeof(rel), "%s/gid_attrs/types/%s", portdir, *n);
        bool have_type = read_str(c, rel, type, sizeof(type));
        if (have_type && !strcmp(type, "RoCE v2")) {
            g.type = TOPO_GID_ROCE_V2;
            typed = true;
        } else if (have_type && !strcmp(type, "IB/RoCE v1") && (p->valid & TOPO_PORT_V_LL)) {
            /* one kernel name for both: the port's link layer tells them apart */
            g.type = ll_ib ? TOPO_GID_IB : TOPO_GID_ROCE_V1;
            typed = true;
        }
        snprintf(rel, sizeof(rel), "%s/gid_attrs/ndevs/%s", portdir, *n);
        read_str(c, rel, g.ndev, sizeof(g.ndev));
        gid_ip(&a, ll_ib, g.ip, sizeof(g.ip));
        topo_port_add_gid(p, &g);
    }
    fsutil_free_list(names);
    /* On an InfiniBand port every GID is an IB GID, with or without gid_attrs. */
    if (p->ngids > 0 && (typed || ll_ib))
        p->valid |= TOPO_PORT_V_GIDTYPES;
}

/* ---- RDMA devices and ports ---- */

static int find_port(struct topo_model *m, int nic, int num)
{
    for (int i = 0; i < m->nports; i++)
        if (m->ports[i].nic == nic && m->ports[i].num == num)
            return i;
    int k = topo_model_add_port(m);
    m->ports[k].nic = nic;
    m->ports[k].num = num;
    return k;
}

/* A present file whose text is not in the kernel's format: leave the fact unknown and
 * say so once. */
static void garbage(struct sys_ctx *c, const char *dev, int port, const char *file,
                    const char *text)
{
    topo_model_note(c->m, "%s port %d: %s \"%.40s\" is not in the kernel's format; left unknown",
                    dev, port, file, text);
}

/* A numeric port attribute: 1 with *v set, 0 when absent or empty, -1 (and a note) when
 * its text is not a number up to max. */
static int port_number(struct sys_ctx *c, const char *dev, int port, const char *file, uint64_t max,
                       uint64_t *v)
{
    char rel[512], buf[64];
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%d/%s", dev, port, file);
    if (!read_str(c, rel, buf, sizeof(buf)))
        return 0;
    if (fsutil_parse_u64(buf, v) == 0 && *v <= max)
        return 1;
    garbage(c, dev, port, file, buf);
    return -1;
}

static void read_port(struct sys_ctx *c, const char *dev, int nic, int num)
{
    char dir[256], rel[512], buf[128];
    snprintf(dir, sizeof(dir), "sys/class/infiniband/%s/ports/%d", dev, num);
    int k = find_port(c->m, nic, num);
    struct topo_port *p = &c->m->ports[k];

#define PORT_FILE(name)                                                                            \
    (snprintf(rel, sizeof(rel), "%s/%s", dir, name), read_str(c, rel, buf, sizeof(buf)))
    if (PORT_FILE("state")) {
        p->valid &= ~TOPO_PORT_V_STATE;
        if (parse_state(buf, &p->state))
            p->valid |= TOPO_PORT_V_STATE;
        else
            garbage(c, dev, num, "state", buf);
    }
    if (PORT_FILE("phys_state")) {
        p->valid &= ~TOPO_PORT_V_PHYS;
        if (parse_phys(buf, &p->phys_state))
            p->valid |= TOPO_PORT_V_PHYS;
        else
            garbage(c, dev, num, "phys_state", buf);
    }
    if (PORT_FILE("link_layer")) {
        p->valid &= ~TOPO_PORT_V_LL;
        if (!strcmp(buf, "InfiniBand")) {
            p->link_layer = TOPO_LL_INFINIBAND;
            p->valid |= TOPO_PORT_V_LL;
        } else if (!strcmp(buf, "Ethernet")) {
            p->link_layer = TOPO_LL_ETHERNET;
            p->valid |= TOPO_PORT_V_LL;
        } else if (strcmp(buf, "Unknown")) {
            garbage(c, dev, num, "link_layer", buf);
        }
    }
    if (PORT_FILE("rate")) {
        p->valid &= ~TOPO_PORT_V_RATE;
        if (parse_rate(buf, &p->rate_gbps, &p->width, p->speed, sizeof(p->speed)))
            p->valid |= TOPO_PORT_V_RATE;
        else if (strcmp(buf, "Unknown"))
            garbage(c, dev, num, "rate", buf);
    }
    /* lid and sm_lid are "0x%x", lid_mask_count and sm_sl "%u" (lid_show & co.) */
    uint64_t v;
    int r = port_number(c, dev, num, "lid", 0xffff, &v);
    if (r > 0) {
        p->lid = (uint32_t)v;
        p->valid |= TOPO_PORT_V_LID;
        if (port_number(c, dev, num, "lid_mask_count", 7, &v) > 0)
            p->lmc = (int)v;
    } else if (r < 0) {
        p->valid &= ~TOPO_PORT_V_LID;
    }
    r = port_number(c, dev, num, "sm_lid", 0xffff, &v);
    if (r > 0) {
        p->sm_lid = (uint32_t)v;
        p->valid |= TOPO_PORT_V_SMLID;
        if (port_number(c, dev, num, "sm_sl", 15, &v) > 0)
            p->sm_sl = (int)v;
    } else if (r < 0) {
        p->valid &= ~TOPO_PORT_V_SMLID;
    }
#undef PORT_FILE
    read_gids(c, dir, p);
}

/* The netdev a software RDMA device runs on: rxe's `parent` file, else the first netdev
 * its GID table names (gid_attrs/ndevs). */
static bool parent_netdev(struct sys_ctx *c, const char *dev, char *out, size_t len)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/parent", dev);
    if (read_str(c, rel, out, len))
        return true;
    char **ports = NULL;
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports", dev);
    if (fsutil_list(c->root, rel, &ports) < 0)
        return false;
    bool found = false;
    for (char **p = ports; *p && !found; p++) {
        char **idx = NULL;
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/gid_attrs/ndevs", dev, *p);
        if (fsutil_list(c->root, rel, &idx) < 0)
            continue;
        for (char **i = idx; *i && !found; i++) {
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/gid_attrs/ndevs/%s", dev,
                     *p, *i);
            found = read_str(c, rel, out, len);
        }
        fsutil_free_list(idx);
    }
    fsutil_free_list(ports);
    return found;
}

static void fill_nic_attrs(struct sys_ctx *c, struct topo_nic *n, const char *dev)
{
    char rel[512];
    snprintf(n->rdma_dev, sizeof(n->rdma_dev), "%s", dev);
#define DEV_FILE(name, field)                                                                      \
    (snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/%s", dev, name),                          \
     copy_if_read(c, rel, n->field, sizeof(n->field)))
    DEV_FILE("node_guid", node_guid);
    DEV_FILE("sys_image_guid", sys_image_guid);
    DEV_FILE("fw_ver", fw_ver);
    DEV_FILE("board_id", board_id);
    DEV_FILE("hca_type", hca_type);
#undef DEV_FILE
}

static void add_rdma_device(struct sys_ctx *c, const char *dev)
{
    struct topo_model *m = c->m;
    struct topo_bdf bdf;
    enum dev_link kind = class_device(c, "infiniband", dev, &bdf);
    if (kind == LINK_DANGLING) {
        topo_model_note(m,
                        "%s: /sys/class/infiniband/%s is a dangling link (its device is gone "
                        "or was not captured); skipped",
                        dev, dev);
        return;
    }
    char rel[512], parent[32] = "";
    /* rxe has a `parent` file: a software device on a netdev, even where an older kernel
     * also links it to that netdev's PCI function. */
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/parent", dev);
    bool soft = fsutil_exists(c->root, rel);
    bool has_parent = parent_netdev(c, dev, parent, sizeof(parent));

    int nic = -1;
    if (kind == LINK_PCI && !soft) {
        char a[32];
        topo_bdf_str(&bdf, a, sizeof(a));
        int pci = topo_model_find_pci(m, &bdf);
        if (pci < 0) {
            topo_model_note(m, "%s: its PCI function %s is not in the topology; skipped", dev, a);
            return;
        }
        nic = topo_model_nic_of_pci(m, pci);
        if (nic >= 0 && m->nics[nic].rdma_dev[0] && strcmp(m->nics[nic].rdma_dev, dev)) {
            topo_model_note(m, "%s: PCI function %s already carries RDMA device %s; skipped", dev,
                            a, m->nics[nic].rdma_dev);
            return;
        }
        if (nic < 0) {
            nic = topo_model_add_nic(m);
            m->nics[nic].pci = pci;
        }
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device/driver", dev);
        fsutil_link_base(c->root, rel, m->nics[nic].driver, sizeof(m->nics[nic].driver));
    } else {
        if (!has_parent) {
            topo_model_note(m,
                            "%s: neither a PCI device nor a parent network device (not an RDMA "
                            "NIC fabtop can place); skipped",
                            dev);
            return;
        }
        nic = topo_model_add_nic(m);
        struct topo_nic *n = &m->nics[nic];
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device/driver", dev);
        if (fsutil_link_base(c->root, rel, n->driver, sizeof(n->driver)) <= 0)
            snprintf(n->driver, sizeof(n->driver), "%s",
                     soft || strncmp(dev, "siw", 3) ? "rxe" : "siw");
        c->soft = xalloc_resize(c->soft, (size_t)(c->nsoft + 1) * sizeof(*c->soft));
        c->soft[c->nsoft].nic = nic;
        snprintf(c->soft[c->nsoft].parent, sizeof(c->soft[c->nsoft].parent), "%s", parent);
        c->nsoft++;
    }
    fill_nic_attrs(c, &m->nics[nic], dev);

    char **ports = NULL;
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports", dev);
    if (fsutil_list(c->root, rel, &ports) < 0) {
        topo_model_note(m, "%s: no ports directory; port facts unknown", dev);
        return;
    }
    for (char **p = ports; *p; p++) {
        long num;
        if (parse_int(*p, &num) && num >= 1 && num <= 255)
            read_port(c, dev, nic, (int)num);
    }
    fsutil_free_list(ports);
}

static void enrich_rdma(struct sys_ctx *c)
{
    char **devs = NULL;
    int n = fsutil_list(c->root, "sys/class/infiniband", &devs);
    if (n < 0) {
        topo_model_note(c->m, "no /sys/class/infiniband: no RDMA driver loaded (modprobe "
                              "mlx5_ib, or rdma_rxe for Soft-RoCE)");
        return;
    }
    if (n == 0)
        topo_model_note(c->m, "/sys/class/infiniband is empty: no RDMA device registered");
    for (char **d = devs; *d; d++)
        add_rdma_device(c, *d);
    fsutil_free_list(devs);
}

/* Group each NIC's ports together in port-number order (nics[].first_port/nports is a
 * range), whatever order hwloc, sysfs and additions produced them in. */
static void order_ports(struct topo_model *m)
{
    if (m->nports == 0)
        return;
    struct topo_port *tmp = xalloc((size_t)m->nports * sizeof(*tmp));
    char *used = xalloc_zero((size_t)m->nports, 1);
    int k = 0;
    for (int n = 0; n < m->nnics; n++) {
        m->nics[n].first_port = -1;
        m->nics[n].nports = 0;
        for (;;) {
            int best = -1;
            for (int i = 0; i < m->nports; i++)
                if (!used[i] && m->ports[i].nic == n &&
                    (best < 0 || m->ports[i].num < m->ports[best].num))
                    best = i;
            if (best < 0)
                break;
            used[best] = 1;
            if (m->nics[n].first_port < 0)
                m->nics[n].first_port = k;
            m->nics[n].nports++;
            tmp[k++] = m->ports[best];
        }
    }
    for (int i = 0; i < m->nports; i++)
        if (!used[i])
            tmp[k++] = m->ports[i]; /* no NIC: keep rather than lose */
    memcpy(m->ports, tmp, (size_t)m->nports * sizeof(*tmp));
    free(tmp);
    free(used);
}

/* ---- netdevs ---- */

static void read_netdev(struct sys_ctx *c, const char *name)
{
    struct topo_model *m = c->m;
    int d = topo_model_find_netdev(m, name);
    if (d < 0) {
        d = topo_model_add_netdev(m);
        snprintf(m->netdevs[d].name, sizeof(m->netdevs[d].name), "%s", name);
    }
    struct topo_bdf bdf;
    enum dev_link kind = class_device(c, "net", name, &bdf);
    if (kind == LINK_DANGLING) {
        topo_model_note(m,
                        "%s: its device link dangles (not captured?); shown without a PCI "
                        "function",
                        name);
    } else if (kind == LINK_PCI && m->netdevs[d].pci < 0) {
        int pci = topo_model_find_pci(m, &bdf);
        if (pci < 0) {
            char a[32];
            topo_bdf_str(&bdf, a, sizeof(a));
            topo_model_note(m, "%s: its PCI function %s is not in the topology", name, a);
        } else {
            m->netdevs[d].pci = pci;
        }
    }
    struct topo_netdev *nd = &m->netdevs[d];
    if (nd->pci >= 0 && nd->nic < 0)
        nd->nic = topo_model_nic_of_pci(m, nd->pci);
    if (nd->nic >= 0 && !m->nics[nd->nic].driver[0] && m->nics[nd->nic].pci == nd->pci) {
        char rel[512];
        snprintf(rel, sizeof(rel), "sys/class/net/%s/device/driver", name);
        fsutil_link_base(c->root, rel, m->nics[nd->nic].driver, sizeof(m->nics[nd->nic].driver));
    }

    char rel[512], buf[128];
    uint64_t v;
    long s;
    snprintf(rel, sizeof(rel), "sys/class/net/%s/mtu", name);
    if (fsutil_read_u64(c->root, rel, &v) == 0 && v > 0 && v <= INT_MAX) {
        nd->mtu = (int)v;
        nd->valid |= TOPO_NET_V_MTU;
    }
    snprintf(rel, sizeof(rel), "sys/class/net/%s/operstate", name);
    if (read_str(c, rel, buf, sizeof(buf))) {
        snprintf(nd->operstate, sizeof(nd->operstate), "%s", buf);
        nd->valid |= TOPO_NET_V_OPER;
    }
    /* speed: Mb/s; -1 (SPEED_UNKNOWN) on virtual devices, EINVAL while the link is down. */
    snprintf(rel, sizeof(rel), "sys/class/net/%s/speed", name);
    nd->valid &= ~TOPO_NET_V_SPEED;
    if (read_str(c, rel, buf, sizeof(buf)) && parse_int(buf, &s) && s > 0 && s <= INT_MAX) {
        nd->speed_mbps = (int)s;
        nd->valid |= TOPO_NET_V_SPEED;
    }
    snprintf(rel, sizeof(rel), "sys/class/net/%s/address", name);
    copy_if_read(c, rel, nd->mac, sizeof(nd->mac));
    snprintf(rel, sizeof(rel), "sys/class/net/%s/dev_port", name);
    if (fsutil_read_u64(c->root, rel, &v) == 0 && v <= 255)
        nd->dev_port = (int)v;
    /* Bonding (Documentation/networking/bonding.rst): a slave's master link, a bond's mode
     * ("802.3ad 4") and transmit hash ("layer3+4 1"), the first word of each. */
    snprintf(rel, sizeof(rel), "sys/class/net/%s/master", name);
    fsutil_link_base(c->root, rel, nd->master, sizeof(nd->master));
    snprintf(rel, sizeof(rel), "sys/class/net/%s/bonding/mode", name);
    if (read_str(c, rel, buf, sizeof(buf))) {
        sscanf(buf, "%23s", nd->bond_mode);
        nd->valid |= TOPO_NET_V_BOND;
        snprintf(rel, sizeof(rel), "sys/class/net/%s/bonding/xmit_hash_policy", name);
        if (read_str(c, rel, buf, sizeof(buf)))
            sscanf(buf, "%23s", nd->bond_hash);
    }
}

/* Append the running system's IP addresses (IPv4, and IPv6 other than link-local). */
static void live_addrs(struct topo_model *m)
{
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) < 0)
        return;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || !i->ifa_name)
            continue;
        char ip[INET6_ADDRSTRLEN] = "";
        if (i->ifa_addr->sa_family == AF_INET) {
            const struct sockaddr_in *sin = (const struct sockaddr_in *)(void *)i->ifa_addr;
            inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(void *)i->ifa_addr;
            if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
                continue;
            inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
        }
        if (!ip[0])
            continue;
        char name[64];
        snprintf(name, sizeof(name), "%s", i->ifa_name);
        name[strcspn(name, ":")] = '\0'; /* "eth0:1" aliases belong to eth0 */
        int d = topo_model_find_netdev(m, name);
        if (d < 0)
            continue;
        char *a = m->netdevs[d].addrs;
        size_t n = strlen(a), need = strlen(ip) + (n ? 1 : 0);
        if (n + need < sizeof(m->netdevs[d].addrs))
            snprintf(a + n, sizeof(m->netdevs[d].addrs) - n, "%s%s", n ? " " : "", ip);
    }
    freeifaddrs(ifa);
}

static void enrich_netdevs(struct sys_ctx *c)
{
    char **names = NULL;
    if (fsutil_list(c->root, "sys/class/net", &names) < 0) {
        topo_model_note(c->m, "no /sys/class/net: network devices unknown");
        return;
    }
    for (char **n = names; *n; n++)
        if (strcmp(*n, "lo"))
            read_netdev(c, *n);
    fsutil_free_list(names);
    /* A software RDMA device belongs to the netdev it runs on. */
    for (int i = 0; i < c->nsoft; i++) {
        int d = topo_model_find_netdev(c->m, c->soft[i].parent);
        if (d >= 0 && c->m->netdevs[d].nic < 0)
            c->m->netdevs[d].nic = c->soft[i].nic;
    }
    if (c->live)
        live_addrs(c->m);
}

/* ---- PCI link and ACS ---- */

/* current_link_speed: "16.0 GT/s PCIe" (pci_speed_string, Linux 5.x+), "8 GT/s" (older),
 * "Unknown" / "Unknown speed" when the link is down or not PCIe. */
static bool parse_gts(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0) || v > 1000 || strncmp(end, " GT/s", 5))
        return false;
    *out = v;
    return true;
}

static bool parse_width(const char *s, int *out)
{
    long w;
    if (!parse_int(s, &w) || w < 1 || w > 32)
        return false; /* 0: link down */
    *out = (int)w;
    return true;
}

static uint32_t rd32(const uint8_t *b, unsigned off)
{
    return (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 | (uint32_t)b[off + 2] << 16 |
           (uint32_t)b[off + 3] << 24;
}

/* PCI Express Base Specification, "PCI Express Extended Capability Header": extended
 * capabilities start at offset 100h; each header dword holds the capability ID in bits
 * 15:0, the version in 19:16 and the next capability's offset in 31:20 (0 ends the list).
 * "ACS Extended Capability" (ID 000Dh): ACS Capability Register at +04h, ACS Control
 * Register at +06h, both 16 bits (linux/pci_regs.h PCI_EXT_CAP_ID_ACS, PCI_ACS_CTRL).
 * Returns true when the list was walked; *ctrl is 0 when there is no ACS capability
 * (then nothing is redirected or blocked). */
static bool acs_from_config(const uint8_t *cfg, size_t len, uint16_t *ctrl)
{
    if (len < 4096)
        return false; /* a non-root reader sees only the first 64 or 256 bytes */
    unsigned off = 0x100;
    *ctrl = 0;
    for (int guard = 0; guard < (4096 - 0x100) / 4 && off >= 0x100 && off + 8 <= 4096; guard++) {
        uint32_t h = rd32(cfg, off);
        if (h == 0 || h == 0xffffffffu)
            break;
        if ((h & 0xffff) == 0x000d) {
            *ctrl = (uint16_t)(cfg[off + 6] | cfg[off + 7] << 8);
            break;
        }
        unsigned next = (h >> 20) & 0xffc;
        if (next == 0 || next <= off)
            break;
        off = next;
    }
    return true;
}

static void read_pci(struct sys_ctx *c, struct topo_pci *p)
{
    char a[32], rel[256], buf[64];
    topo_bdf_str(&p->addr, a, sizeof(a));
    snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", a);
    if (!fsutil_exists(c->root, rel))
        return;
#define PCI_FILE(name)                                                                             \
    (snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/%s", a, name),                             \
     read_str(c, rel, buf, sizeof(buf)))
    if (PCI_FILE("current_link_speed") && parse_gts(buf, &p->cur_speed_gts))
        p->valid |= TOPO_PCI_V_CUR_SPEED;
    if (PCI_FILE("max_link_speed") && parse_gts(buf, &p->max_speed_gts))
        p->valid |= TOPO_PCI_V_MAX_SPEED;
    if (PCI_FILE("current_link_width") && parse_width(buf, &p->cur_width))
        p->valid |= TOPO_PCI_V_CUR_WIDTH;
    if (PCI_FILE("max_link_width") && parse_width(buf, &p->max_width))
        p->valid |= TOPO_PCI_V_MAX_WIDTH;
#undef PCI_FILE
    if (p->kind != TOPO_PCI_BRIDGE)
        return;
    char path[4096];
    snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/config", a);
    if (fsutil_path(path, sizeof(path), c->root, rel) < 0)
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uint8_t *cfg = xalloc(4096);
    size_t got = 0;
    while (got < 4096) {
        ssize_t n = pread(fd, cfg + got, 4096 - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    uint16_t ctrl;
    if (acs_from_config(cfg, got, &ctrl)) {
        p->acs_ctrl = ctrl;
        p->valid |= TOPO_PCI_V_ACS;
    }
    free(cfg);
}

static void enrich_pci(struct sys_ctx *c)
{
    for (int i = 0; i < c->m->npci; i++)
        if (c->m->pci[i].kind != TOPO_PCI_HOSTBRIDGE)
            read_pci(c, &c->m->pci[i]);
}

static void enrich(struct topo_model *m, const struct topo_load_opts *o)
{
    struct sys_ctx c = {
        .m = m,
        .root = o->sysfs_root ? o->sysfs_root : "/",
        .live = !o->sysfs_root,
    };
    enrich_rdma(&c);
    enrich_netdevs(&c);
    enrich_pci(&c);
    order_ports(m);
    free(c.soft);
}

const struct topo_enricher topo_enrich_sysfs = {"sysfs", applies, enrich};
