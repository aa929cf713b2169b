/* counters_discover: opening a counter set: the RDMA ports, netdevs (ethtool statistics,
 * qdiscs) and SNMP files under a sys/proc root, or live over netlink and ethtool, selected
 * by the options; closing it. */
#include "engine/counters/counters_int.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/counters/counters_kernel.h"
#include "engine/counters/counters_sem.h"
#include "engine/flow/mix.h"
#include "topology/topo_ibcounters.h"
#include "topology/topo_model.h"

/* ---- discovery ---- */

/* Is this object (an RDMA device and port, or a netdev) selected? Marks what matched. */
static bool selected(const struct counters_opts *o, bool *matched, const char *dev,
                     const char *port)
{
    if (!o->only)
        return true;
    bool any = false;
    for (int i = 0; i < o->nonly; i++) {
        const char *w = o->only[i];
        size_t dl = strlen(dev);
        bool hit;
        if (!port)
            hit = !strcmp(w, dev);
        else
            hit = !strcmp(w, dev) || (!strncmp(w, dev, dl) && (w[dl] == ':' || w[dl] == '/') &&
                                      !strcmp(w + dl + 1, port));
        if (hit) {
            matched[i] = true;
            any = true;
        }
    }
    return any;
}

static void rdma_provider(const struct counters_set *s, const char *dev, char *out, size_t len)
{
    char rel[512], drv[64] = "";
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device/driver", dev);
    fsutil_link_base(s->sys_root, rel, drv, sizeof(drv));
    if (!strncmp(dev, "mlx5", 4) || !strcmp(drv, "mlx5_core")) {
        snprintf(out, len, "mlx5");
        return;
    }
    if (!strncmp(dev, "mlx4", 4) || !strcmp(drv, "mlx4_core")) {
        snprintf(out, len, "mlx4");
        return;
    }
    snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/1/hw_counters/ack_deferred", dev);
    if (!strncmp(dev, "rxe", 3) || fsutil_exists(s->sys_root, rel) > 0) {
        snprintf(out, len, "rxe");
        return;
    }
    snprintf(out, len, "%s", drv);
}

static void open_rdma(struct counters_set *s, bool *matched)
{
    char **devs;
    int nd = fsutil_list(s->sys_root, "sys/class/infiniband", &devs);
    for (int d = 0; d < nd; d++) {
        const char *dev = devs[d];
        char prov[32], rel[512];
        rdma_provider(s, dev, prov, sizeof(prov));
        /* Software providers count in memory; the rest ask the firmware (a MAD or a
         * command per read), so they are read at the slow period. */
        bool hw_slow = strcmp(prov, "rxe") && strcmp(prov, "siw");
        char **ports;
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports", dev);
        int np = fsutil_list(s->sys_root, rel, &ports);
        bool any = false;
        for (int p = 0; p < np; p++) {
            if (!selected(&s->o, matched, dev, ports[p]))
                continue;
            char obj[48];
            snprintf(obj, sizeof(obj), "%s/%s", dev, ports[p]);
            int before = s->n;
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/counters", dev, ports[p]);
            counters_add_dir(s, COUNTERS_SRC_IB, prov, obj, rel, true);
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/counters_ext", dev,
                     ports[p]);
            counters_add_dir(s, COUNTERS_SRC_IB, prov, obj, rel, true);
            snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/ports/%s/hw_counters", dev,
                     ports[p]);
            counters_add_dir(s, COUNTERS_SRC_HW, prov, obj, rel, hw_slow);
            char desc[128];
            snprintf(desc, sizeof(desc), "%s (RDMA port%s%s)", obj, prov[0] ? ", " : "", prov);
            counters_add_str(&s->objects, &s->nobjects, desc);
            if (s->n == before)
                counters_note(s, "%s: no counters (no counters/ or hw_counters/ directory)", obj);
            any = true;
        }
        if (np > 0)
            fsutil_free_list(ports);
        /* Device-wide hw_counters (mlx5 in switchdev mode keeps its counters here). */
        snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/hw_counters", dev);
        if ((any || selected(&s->o, matched, dev, NULL)) && fsutil_exists(s->sys_root, rel) > 0) {
            if (counters_add_dir(s, COUNTERS_SRC_HW, prov, dev, rel, hw_slow) > 0) {
                char desc[128];
                snprintf(desc, sizeof(desc), "%s (RDMA device)", dev);
                counters_add_str(&s->objects, &s->nobjects, desc);
            }
        }
    }
    if (nd > 0)
        fsutil_free_list(devs);
}

static void open_ethtool(struct counters_set *s, const char *ifname)
{
    if (s->eth_sock < 0) {
        s->eth_sock = counters_kernel_eth_socket();
        if (s->eth_sock < 0) {
            counters_note(s, "ethtool: no socket: %s", strerror(-s->eth_sock));
            return;
        }
    }
    struct counters_kernel_eth e;
    int rc = counters_kernel_eth_open(s->eth_sock, ifname, &e);
    if (rc < 0) {
        counters_note(s, "%s: no ethtool statistics (%s)", ifname,
                      rc == -EOPNOTSUPP ? "the driver has none" : strerror(-rc));
        return;
    }
    s->eths = xalloc_resize(s->eths, (size_t)(s->neth + 1) * sizeof(*s->eths));
    struct counters_eth *x = &s->eths[s->neth];
    x->e = e;
    x->vals = xalloc_zero((size_t)e.n, sizeof(uint64_t));
    x->rc = -EAGAIN;
    bool slow = !strcmp(e.driver, "mlx5_core");
    for (int i = 0; i < e.n; i++) {
        int k =
            counters_add_entry(s, COUNTERS_SRC_ETHTOOL, e.driver, ifname, e.names[i], RD_ETH, slow);
        s->ents[k].aux = s->neth;
        s->ents[k].aux2 = i;
    }
    s->neth++;
}

struct qd_open_ctx {
    struct counters_set *s;
    int ifindex;
    const char *ifname;
};

static void qd_open_cb(const struct counters_kernel_qdisc_stats *q, void *arg)
{
    struct qd_open_ctx *c = arg;
    struct counters_set *s = c->s;
    if (q->ifindex != c->ifindex || !strcmp(q->kind, "noqueue"))
        return;
    s->qds = xalloc_resize(s->qds, (size_t)(s->nqd + 1) * sizeof(*s->qds));
    struct counters_qd *x = &s->qds[s->nqd];
    memset(x, 0, sizeof(*x));
    x->ifindex = q->ifindex;
    x->handle = q->handle;
    char obj[48];
    snprintf(obj, sizeof(obj), "%s qdisc %x: %s", c->ifname, q->handle >> 16, q->kind);
    for (int f = 0; f < QF_N; f++) {
        int k = counters_add_entry(s, COUNTERS_SRC_QDISC, NULL, obj, counters_qf_names[f], RD_QDISC,
                                   false);
        s->ents[k].aux = s->nqd;
        s->ents[k].aux2 = f;
        if (f == QF_PACKETS && q->pkt64) {
            s->vals[k].width = 64;
            s->ents[k].width0 = 64;
        }
    }
    char desc[96], parent[24] = "root";
    if (q->parent != 0xffffffffu) /* TC_H_ROOT */
        snprintf(parent, sizeof(parent), "parent %x:%x", q->parent >> 16, q->parent & 0xffff);
    snprintf(desc, sizeof(desc), "%s (qdisc, %s)", obj, parent);
    counters_add_str(&s->objects, &s->nobjects, desc);
    s->nqd++;
}

static void open_qdiscs(struct counters_set *s, const char *ifname)
{
    if (s->nl_fd < 0) {
        s->nl_fd = counters_kernel_nl_open();
        if (s->nl_fd < 0) {
            counters_note(s, "qdisc: no rtnetlink socket: %s", strerror(-s->nl_fd));
            return;
        }
    }
    struct qd_open_ctx c = {s, (int)if_nametoindex(ifname), ifname};
    if (!c.ifindex) {
        counters_note(s, "%s: no interface index for qdisc statistics", ifname);
        return;
    }
    int before = s->nqd;
    int rc = counters_kernel_nl_qdisc_dump(s->nl_fd, &s->nl_seq, qd_open_cb, &c);
    if (rc < 0)
        counters_note(s, "%s: qdisc dump failed: %s", ifname, strerror(-rc));
    else if (s->nqd == before)
        counters_note(s, "%s: no queueing qdisc (noqueue): nothing can wait there", ifname);
}

static void open_netdevs(struct counters_set *s, bool *matched, bool live)
{
    char **devs;
    int nd = fsutil_list(s->sys_root, "sys/class/net", &devs);
    for (int d = 0; d < nd; d++) {
        const char *dev = devs[d];
        if (!selected(&s->o, matched, dev, NULL))
            continue;
        char rel[512];
        snprintf(rel, sizeof(rel), "sys/class/net/%s/statistics", dev);
        int k = counters_add_dir(s, COUNTERS_SRC_NETDEV, NULL, dev, rel, false);
        char desc[96];
        snprintf(desc, sizeof(desc), "%s (netdev)", dev);
        counters_add_str(&s->objects, &s->nobjects, desc);
        if (k <= 0)
            counters_note(s, "%s: no statistics directory", dev);
        if (live && s->o.with_ethtool)
            open_ethtool(s, dev);
        if (live && s->o.with_qdisc)
            open_qdiscs(s, dev);
    }
    if (nd > 0)
        fsutil_free_list(devs);
}

static void open_snmp(struct counters_set *s)
{
    static const char *const rels[2] = {"proc/net/snmp", "proc/net/netstat"};
    s->snmp_cap = 16384;
    s->snmp_buf = xalloc(s->snmp_cap);
    for (int f = 0; f < 2; f++) {
        char path[2048];
        s->snmp[f].first = s->n;
        fsutil_path(path, sizeof(path), s->proc_root, rels[f]);
        s->snmp[f].fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->snmp[f].fd < 0) {
            counters_note(s, "%s: %s", path, strerror(errno));
            continue;
        }
        if (counters_read_snmp_file(s, f) < 0)
            continue;
        struct counters_snmp_ctx c = {s, f};
        counters_snmp_walk(s->snmp_buf, counters_snmp_open_cb, &c);
        s->snmp[f].count = s->n - s->snmp[f].first;
    }
    counters_add_str(
        &s->objects, &s->nobjects,
        "Ip Tcp Udp TcpExt IpExt ... (snmp: /proc/net/snmp and netstat of this network "
        "namespace, host-wide)");
}

static bool is_live(const char *root)
{
    return !strcmp(root, "/");
}

int counters_set_open(const struct counters_opts *o, struct counters_set **out, struct ft_err *err)
{
    *out = NULL;
    struct counters_set *s = xalloc_zero(1, sizeof(*s));
    s->o = *o; /* only/nonly are used while opening, then dropped */
    snprintf(s->sys_root, sizeof(s->sys_root), "%s", o->sys_root ? o->sys_root : "/");
    snprintf(s->proc_root, sizeof(s->proc_root), "%s", o->proc_root ? o->proc_root : "/");
    s->period_slow_ns = (uint64_t)((o->slow_period_s > 0 ? o->slow_period_s : 1.0) * 1e9);
    s->eth_sock = s->nl_fd = -1;
    s->snmp[0].fd = s->snmp[1].fd = -1;
    /* Files deleted from a captured tree keep reading through an open descriptor; sysfs
     * returns an error instead. Only the former needs the extra fstat per read. */
    char path[2048];
    struct statfs sf;
    fsutil_path(path, sizeof(path), s->sys_root, "sys");
    s->check_nlink = !(statfs(path, &sf) == 0 && (unsigned long)sf.f_type == SYSFS_MAGIC_NR);
    bool *matched = xalloc_zero((size_t)(o->nonly > 0 ? o->nonly : 1), sizeof(bool));
    open_rdma(s, matched);
    bool live = is_live(s->sys_root);
    if (!live && (o->with_qdisc || o->with_ethtool))
        counters_note(s, "qdisc and ethtool statistics are read live only (not from %s)",
                      s->sys_root);
    open_netdevs(s, matched, live);
    if (o->with_snmp)
        open_snmp(s);
    s->o.only = NULL;
    s->o.nonly = 0;
    int rc = 0;
    for (int i = 0; i < o->nonly && rc == 0; i++)
        if (!matched[i])
            rc = ft_err_set(err, -ENOENT,
                            "no RDMA port, RDMA device or netdev named '%s' under %s (see "
                            "sys/class/infiniband and sys/class/net)",
                            o->only[i], s->sys_root);
    free(matched);
    if (rc == 0 && s->n == 0)
        rc = ft_err_set(err, -ENOENT, "no counters found under %s%s", s->sys_root,
                        o->with_snmp ? " or proc/net" : "");
    if (rc < 0) {
        counters_set_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void counters_set_close(struct counters_set *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        if (s->ents[i].fd >= 0)
            close(s->ents[i].fd);
        free(s->ents[i].path);
    }
    free(s->ents);
    free(s->vals);
    for (int d = 0; d < s->ndirs; d++)
        free(s->dirs[d].path);
    free(s->dirs);
    for (int i = 0; i < s->neth; i++) {
        counters_kernel_eth_close(&s->eths[i].e);
        free(s->eths[i].vals);
    }
    free(s->eths);
    free(s->qds);
    if (s->eth_sock >= 0)
        close(s->eth_sock);
    if (s->nl_fd >= 0)
        close(s->nl_fd);
    for (int f = 0; f < 2; f++)
        if (s->snmp[f].fd >= 0)
            close(s->snmp[f].fd);
    free(s->snmp_buf);
    for (int i = 0; i < s->nobjects; i++)
        free(s->objects[i]);
    for (int i = 0; i < s->nnotes; i++)
        free(s->notes[i]);
    free(s->objects);
    free(s->notes);
    free(s->scope);
    free(s);
}
