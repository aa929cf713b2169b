/* ctr_kernel: rtnetlink qdisc dumps, ethtool statistics ioctls, and address -> netdev
 * lookups for the counters (see ctr_kernel.h).
 *
 * Qdisc messages: net/sched/sch_api.c tc_fill_qdisc() sends struct tcmsg, TCA_KIND and
 * TCA_STATS2 (nested TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_PKT64 on kernels that
 * have it) plus the legacy TCA_STATS (struct tc_stats), built by net/core/gen_stats.c.
 * ethtool: net/ethtool/ioctl.c ethtool_get_stats() writes as many u64 values as the
 * driver has *now* (it does not honour the caller's n_stats), so the buffer keeps room
 * beyond the count seen at open and a changed count is reported, never trusted. */
#include "engine/counters/counters_kernel.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int counters_kernel_nl_open(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -errno;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

/* Walk the attributes nested in [p, p + len). */
static void parse_stats2(const struct rtattr *a, int len, struct counters_kernel_qdisc_stats *q)
{
    for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        const unsigned char *d = RTA_DATA(a);
        size_t n = RTA_PAYLOAD(a);
        if (a->rta_type == TCA_STATS_BASIC && n >= 12) {
            uint32_t pk;
            memcpy(&q->bytes, d, 8);
            memcpy(&pk, d + 8, 4);
            if (!q->pkt64)
                q->packets = pk;
            q->have_basic = true;
        } else if (a->rta_type == TCA_STATS_PKT64 && n >= 8) {
            memcpy(&q->packets, d, 8);
            q->pkt64 = true;
        } else if (a->rta_type == TCA_STATS_QUEUE && n >= sizeof(struct gnet_stats_queue)) {
            struct gnet_stats_queue s;
            memcpy(&s, d, sizeof(s));
            q->qlen = s.qlen;
            q->backlog = s.backlog;
            q->drops = s.drops;
            q->requeues = s.requeues;
            q->overlimits = s.overlimits;
            q->have_queue = true;
        }
    }
}

static void parse_qdisc(const struct nlmsghdr *h, struct counters_kernel_qdisc_stats *q)
{
    memset(q, 0, sizeof(*q));
    const struct tcmsg *t = NLMSG_DATA(h);
    q->ifindex = t->tcm_ifindex;
    q->handle = t->tcm_handle;
    q->parent = t->tcm_parent;
    int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*t));
    const struct rtattr *a = (const struct rtattr *)((const char *)t + NLMSG_ALIGN(sizeof(*t)));
    const struct rtattr *legacy = NULL;
    for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        if (a->rta_type == TCA_KIND) {
            size_t n = RTA_PAYLOAD(a);
            if (n >= sizeof(q->kind))
                n = sizeof(q->kind) - 1;
            memcpy(q->kind, RTA_DATA(a), n);
            q->kind[n] = '\0';
        } else if (a->rta_type == TCA_STATS2) {
            parse_stats2(RTA_DATA(a), (int)RTA_PAYLOAD(a), q);
        } else if (a->rta_type == TCA_STATS) {
            legacy = a;
        }
    }
    if (legacy && !q->have_basic && RTA_PAYLOAD(legacy) >= sizeof(struct tc_stats)) {
        struct tc_stats s;
        memcpy(&s, RTA_DATA(legacy), sizeof(s));
        q->bytes = s.bytes;
        q->packets = s.packets;
        q->qlen = s.qlen;
        q->backlog = s.backlog;
        q->drops = s.drops;
        q->overlimits = s.overlimits;
        q->have_basic = q->have_queue = true;
    }
}

int counters_kernel_nl_qdisc_dump(int fd, uint32_t *seq,
                                  void (*cb)(const struct counters_kernel_qdisc_stats *q,
                                             void *arg),
                                  void *arg)
{
    struct {
        struct nlmsghdr h;
        struct tcmsg t;
    } req;
    memset(&req, 0, sizeof(req));
    req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.t));
    req.h.nlmsg_type = RTM_GETQDISC;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.h.nlmsg_seq = ++*seq;
    req.t.tcm_family = AF_UNSPEC;
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
        return -errno;
    /* 32 KiB: larger than any dump skb the kernel builds (NLMSG_GOODSIZE, or the
     * socket's minimum dump allocation). */
    enum { BUFSZ = 32768 };
    long *buf = malloc(BUFSZ);
    if (!buf)
        return -ENOMEM;
    int count = 0, rc = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, BUFSZ, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : -EIO;
            break;
        }
        int len = (int)n;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
             h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_seq != *seq)
                continue; /* a late answer to an earlier request */
            if (h->nlmsg_type == NLMSG_DONE) {
                free(buf);
                return count;
            }
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                free(buf);
                return e->error ? e->error : -EIO;
            }
            if (h->nlmsg_type != RTM_NEWQDISC || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct tcmsg)))
                continue;
            struct counters_kernel_qdisc_stats q;
            parse_qdisc(h, &q);
            cb(&q, arg);
            count++;
        }
    }
    free(buf);
    return rc;
}

/* ---- ethtool ---- */

int counters_kernel_eth_socket(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    return fd < 0 ? -errno : fd;
}

static int eth_ioctl(int sock, const char *ifname, void *data)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
    ifr.ifr_data = data;
    return ioctl(sock, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

int counters_kernel_eth_open(int sock, const char *ifname, struct counters_kernel_eth *e)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->ifname, sizeof(e->ifname), "%s", ifname);
    struct ethtool_drvinfo di;
    memset(&di, 0, sizeof(di));
    di.cmd = ETHTOOL_GDRVINFO;
    int rc = eth_ioctl(sock, ifname, &di);
    if (rc < 0)
        return rc;
    snprintf(e->driver, sizeof(e->driver), "%s", di.driver);
    if (di.n_stats == 0 || di.n_stats > 1u << 16)
        return -EOPNOTSUPP;
    int n = (int)di.n_stats;
    struct ethtool_gstrings *gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
    if (!gs)
        return -ENOMEM;
    gs->cmd = ETHTOOL_GSTRINGS;
    gs->string_set = ETH_SS_STATS;
    gs->len = (uint32_t)n;
    rc = eth_ioctl(sock, ifname, gs);
    if (rc == 0 && (int)gs->len != n)
        rc = -ESTALE;
    if (rc < 0) {
        free(gs);
        return rc;
    }
    e->names = calloc((size_t)n, sizeof(*e->names));
    /* Room for the count to grow before the next check (see the top of this file). */
    e->cap = sizeof(struct ethtool_stats) + (size_t)(2 * n + 256) * sizeof(uint64_t);
    e->buf = calloc(1, e->cap);
    if (!e->names || !e->buf) {
        free(gs);
        counters_kernel_eth_close(e);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        /* ETH_GSTRING_LEN (32) bytes, NUL-padded; a full-length name is cut by one. */
        memcpy(e->names[i], gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
        e->names[i][31] = '\0';
    }
    free(gs);
    e->n = n;
    return 0;
}

int counters_kernel_eth_read(int sock, struct counters_kernel_eth *e, uint64_t *vals)
{
    struct ethtool_stats *st = e->buf;
    st->cmd = ETHTOOL_GSTATS;
    st->n_stats = (uint32_t)e->n;
    int rc = eth_ioctl(sock, e->ifname, st);
    if (rc < 0)
        return rc;
    if ((int)st->n_stats != e->n)
        return -ESTALE;
    memcpy(vals, st->data, (size_t)e->n * sizeof(uint64_t));
    return 0;
}

void counters_kernel_eth_close(struct counters_kernel_eth *e)
{
    free(e->names);
    free(e->buf);
    e->names = NULL;
    e->buf = NULL;
    e->n = 0;
}

/* ---- addresses ---- */

int counters_kernel_netdev_of_addr(const char *ip, char *ifname, size_t len)
{
    unsigned char want[16];
    int fam = strchr(ip, ':') ? AF_INET6 : AF_INET;
    if (inet_pton(fam, ip, want) != 1)
        return -EINVAL;
    struct ifaddrs *ifa;
    if (getifaddrs(&ifa) < 0)
        return -errno;
    int rc = -ENOENT;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != fam)
            continue;
        const void *a = fam == AF_INET
                            ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        if (!memcmp(a, want, fam == AF_INET ? 4 : 16)) {
            snprintf(ifname, len, "%s", i->ifa_name);
            rc = 0;
            break;
        }
    }
    freeifaddrs(ifa);
    return rc;
}
