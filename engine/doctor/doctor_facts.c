/* doctor_facts: one end's facts toward the other: the source address and the interface
 * holding it, the route (rtnetlink RTM_GETROUTE), MTUs, sysctls, offloads and driver
 * (SIOCETHTOOL), memlock, IOMMU groups, and the RDMA ports from the topology discovery. */
#include "engine/doctor/doctor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static int read_int(const char *root, const char *fmt, const char *a)
{
    char rel[256], path[512];
    snprintf(rel, sizeof(rel), fmt, a ? a : "");
    snprintf(path, sizeof(path), "%s%s", root ? root : "", rel);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return DOCTOR_UNKNOWN;
    int v = DOCTOR_UNKNOWN;
    if (fscanf(fp, "%d", &v) != 1)
        v = DOCTOR_UNKNOWN;
    fclose(fp);
    return v;
}

/* An address of either family: IPv4, or IPv6 (RoCE v2 and TCP run over both). */
struct ipaddr {
    int family; /* AF_INET or AF_INET6 */
    union {
        struct in_addr v4;
        struct in6_addr v6;
    } a;
};

static size_t ip_len(const struct ipaddr *x)
{
    return x->family == AF_INET ? 4 : 16;
}

static int ip_parse(const char *s, struct ipaddr *x)
{
    memset(x, 0, sizeof(*x));
    if (s && inet_pton(AF_INET, s, &x->a.v4) == 1)
        x->family = AF_INET;
    else if (s && inet_pton(AF_INET6, s, &x->a.v6) == 1)
        x->family = AF_INET6;
    else
        return -EINVAL;
    return 0;
}

static bool ip_set(const struct ipaddr *x)
{
    static const struct in6_addr any6;
    return x->family == AF_INET ? x->a.v4.s_addr != 0 : memcmp(&x->a.v6, &any6, sizeof(any6)) != 0;
}

/* The kernel's source address for dst: a connected UDP socket sends nothing. */
static int source_for(const struct ipaddr *dst, struct ipaddr *src, struct ft_err *err)
{
    int fd = socket(dst->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ft_err_set(err, -errno, "doctor: socket: %s", strerror(errno));
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len;
    if (dst->family == AF_INET) {
        struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
        *sa = (struct sockaddr_in){
            .sin_family = AF_INET, .sin_port = htons(9), .sin_addr = dst->a.v4};
        len = sizeof(*sa);
    } else {
        struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&ss;
        *sa = (struct sockaddr_in6){
            .sin6_family = AF_INET6, .sin6_port = htons(9), .sin6_addr = dst->a.v6};
        len = sizeof(*sa);
    }
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&ss, len) < 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
        char t[INET6_ADDRSTRLEN];
        inet_ntop(dst->family, &dst->a, t, sizeof(t));
        rc = ft_err_set(err, -errno, "doctor: no route to %s: %s", t, strerror(errno));
    } else {
        src->family = dst->family;
        if (dst->family == AF_INET)
            src->a.v4 = ((struct sockaddr_in *)&ss)->sin_addr;
        else
            src->a.v6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
    }
    close(fd);
    return rc;
}

/* RTM_GETROUTE for dst from src: the output interface and the gateway. */
static int route_get(const struct ipaddr *dst, const struct ipaddr *src, char *dev, size_t dlen,
                     char *via, size_t vlen)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -errno;
    struct {
        struct nlmsghdr nh;
        struct rtmsg rt;
        char attrs[64];
    } req;
    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
    req.nh.nlmsg_type = RTM_GETROUTE;
    req.nh.nlmsg_flags = NLM_F_REQUEST;
    req.nh.nlmsg_seq = 1;
    req.rt.rtm_family = (unsigned char)dst->family;
    req.rt.rtm_dst_len = (unsigned char)(ip_len(dst) * 8);
    const struct ipaddr *vals[2] = {dst, src};
    const unsigned short types[2] = {RTA_DST, RTA_SRC};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && (!ip_set(src) || src->family != dst->family))
            break;
        struct rtattr *ra = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
        ra->rta_type = types[i];
        ra->rta_len = (unsigned short)RTA_LENGTH(ip_len(vals[i]));
        memcpy(RTA_DATA(ra), &vals[i]->a, ip_len(vals[i]));
        req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(ra->rta_len);
        if (i == 1)
            req.rt.rtm_src_len = (unsigned char)(ip_len(src) * 8);
    }
    int rc = -EIO;
    char buf[8192];
    if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
        rc = -errno;
        goto out;
    }
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
        rc = -errno;
        goto out;
    }
    for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
         nh = NLMSG_NEXT(nh, n)) {
        if (nh->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(nh);
            rc = e->error ? e->error : -EIO;
            break;
        }
        if (nh->nlmsg_type != RTM_NEWROUTE)
            continue;
        struct rtmsg *rt = NLMSG_DATA(nh);
        int len = (int)RTM_PAYLOAD(nh);
        for (struct rtattr *ra = RTM_RTA(rt); RTA_OK(ra, len); ra = RTA_NEXT(ra, len)) {
            if (ra->rta_type == RTA_OIF) {
                char name[IF_NAMESIZE] = "";
                if (if_indextoname(*(unsigned *)RTA_DATA(ra), name))
                    snprintf(dev, dlen, "%s", name);
                rc = 0;
            } else if (ra->rta_type == RTA_GATEWAY) {
                inet_ntop(dst->family, RTA_DATA(ra), via, (socklen_t)vlen);
            }
        }
        break;
    }
out:
    close(fd);
    return rc;
}

static int if_mtu(int fd, const char *dev)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
    return ioctl(fd, SIOCGIFMTU, &ifr) < 0 ? DOCTOR_UNKNOWN : ifr.ifr_mtu;
}

/* SIOCETHTOOL's legacy GET commands (linux/ethtool.h); a virtual device may refuse some. */
static int eth_value(int fd, const char *dev, uint32_t cmd)
{
    struct ethtool_value v = {.cmd = cmd};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
    ifr.ifr_data = (char *)&v;
    return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? DOCTOR_UNKNOWN : (v.data ? 1 : 0);
}

static void eth_facts(struct doctor_facts *f)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    f->mtu = if_mtu(fd, f->route_dev);
    f->addr_mtu = if_mtu(fd, f->addr_dev);
    struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", f->route_dev);
    ifr.ifr_data = (char *)&di;
    if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
        snprintf(f->driver, sizeof(f->driver), "%s", di.driver);
        snprintf(f->driver_version, sizeof(f->driver_version), "%s", di.version);
        snprintf(f->firmware, sizeof(f->firmware), "%s", di.fw_version);
    }
    f->tso = eth_value(fd, f->route_dev, ETHTOOL_GTSO);
    f->gso = eth_value(fd, f->route_dev, ETHTOOL_GGSO);
    f->gro = eth_value(fd, f->route_dev, ETHTOOL_GGRO);
    f->rx_csum = eth_value(fd, f->route_dev, ETHTOOL_GRXCSUM);
    f->tx_csum = eth_value(fd, f->route_dev, ETHTOOL_GTXCSUM);
    close(fd);
}

/* The prefix length of a netmask of either family. */
static int prefix_of(const struct sockaddr *mask)
{
    const unsigned char *b =
        mask->sa_family == AF_INET
            ? (const unsigned char *)&((const struct sockaddr_in *)mask)->sin_addr
            : (const unsigned char *)&((const struct sockaddr_in6 *)mask)->sin6_addr;
    int n = 0;
    for (size_t i = 0; i < (mask->sa_family == AF_INET ? 4u : 16u); i++)
        n += __builtin_popcount(b[i]);
    return n;
}

/* An interface address as an ipaddr (false for another family). */
static bool ifa_ip(const struct ifaddrs *i, int family, struct ipaddr *x)
{
    if (!i->ifa_addr || i->ifa_addr->sa_family != family || !i->ifa_netmask)
        return false;
    x->family = family;
    if (family == AF_INET)
        x->a.v4 = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr;
    else
        x->a.v6 = ((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
    return true;
}

/* a's first bits bits equal b's. */
static bool same_prefix(const struct ipaddr *a, const struct ipaddr *b, int bits)
{
    const unsigned char *x = (const unsigned char *)&a->a, *y = (const unsigned char *)&b->a;
    int whole = bits / 8, rest = bits % 8;
    if (memcmp(x, y, (size_t)whole))
        return false;
    return !rest || ((x[whole] ^ y[whole]) & (0xff << (8 - rest) & 0xff)) == 0;
}

/* The interface holding src, its prefix, and the other interfaces in that prefix. */
static void addr_facts(struct doctor_facts *f, const struct ipaddr *src)
{
    struct ifaddrs *ifa0;
    if (getifaddrs(&ifa0) < 0)
        return;
    int bits = -1;
    struct ipaddr x;
    for (struct ifaddrs *i = ifa0; i; i = i->ifa_next)
        if (ifa_ip(i, src->family, &x) && !memcmp(&x.a, &src->a, ip_len(src))) {
            snprintf(f->addr_dev, sizeof(f->addr_dev), "%s", i->ifa_name);
            bits = prefix_of(i->ifa_netmask);
        }
    if (f->addr_dev[0] && bits > 0) {
        struct ipaddr net = *src;
        unsigned char *b = (unsigned char *)&net.a;
        for (int k = bits; k < (int)ip_len(src) * 8; k++)
            b[k / 8] &= (unsigned char)~(0x80 >> (k % 8));
        char t[INET6_ADDRSTRLEN];
        inet_ntop(src->family, &net.a, t, sizeof(t));
        snprintf(f->subnet, sizeof(f->subnet), "%s/%d", t, bits);
        for (struct ifaddrs *i = ifa0; i; i = i->ifa_next) {
            if (!ifa_ip(i, src->family, &x) || !strcmp(i->ifa_name, f->addr_dev) ||
                !same_prefix(&x, src, bits))
                continue;
            bool seen = false;
            for (int k = 0; k < f->nsib; k++)
                seen |= !strcmp(f->sib[k], i->ifa_name);
            if (!seen && f->nsib < DOCTOR_MAX_SIB)
                snprintf(f->sib[f->nsib++], DOCTOR_NAME, "%s", i->ifa_name);
        }
    }
    freeifaddrs(ifa0);
}

/* rp_filter and the arp_ sysctls are IPv4's (ip-sysctl.rst: net.ipv4.conf); an IPv6 path has
 * neither (Neighbour Discovery answers only on the interface holding the target address, and
 * reverse-path filtering of IPv6 is netfilter's rpfilter match): left unknown for it. */
static void sysctl_facts(struct doctor_facts *f, const char *root, bool ipv4)
{
    const char *d = f->addr_dev[0] ? f->addr_dev : "lo";
    if (!ipv4)
        goto common;
    f->rp_filter_all = read_int(root, "/proc/sys/net/ipv4/conf/all/rp_filter", NULL);
    f->rp_filter_dev = read_int(root, "/proc/sys/net/ipv4/conf/%s/rp_filter", d);
    f->arp_ignore_all = read_int(root, "/proc/sys/net/ipv4/conf/all/arp_ignore", NULL);
    f->arp_ignore_dev = read_int(root, "/proc/sys/net/ipv4/conf/%s/arp_ignore", d);
    f->arp_announce_all = read_int(root, "/proc/sys/net/ipv4/conf/all/arp_announce", NULL);
    f->arp_announce_dev = read_int(root, "/proc/sys/net/ipv4/conf/%s/arp_announce", d);
common:
    /* net.ipv4.tcp_ecn governs TCP over IPv6 too (ip-sysctl.rst). */
    f->tcp_ecn = read_int(root, "/proc/sys/net/ipv4/tcp_ecn", NULL);
    char path[512];
    snprintf(path, sizeof(path), "%s/sys/kernel/iommu_groups", root ? root : "");
    DIR *dir = opendir(path);
    f->iommu_groups = dir ? 0 : DOCTOR_UNKNOWN;
    for (struct dirent *e; dir && (e = readdir(dir));)
        if (e->d_name[0] != '.')
            f->iommu_groups++;
    if (dir)
        closedir(dir);
}

static void blank(struct doctor_facts *f)
{
    memset(f, 0, sizeof(*f));
    f->mtu = f->addr_mtu = DOCTOR_UNKNOWN;
    f->rp_filter_all = f->rp_filter_dev = DOCTOR_UNKNOWN;
    f->arp_ignore_all = f->arp_ignore_dev = DOCTOR_UNKNOWN;
    f->arp_announce_all = f->arp_announce_dev = DOCTOR_UNKNOWN;
    f->tcp_ecn = f->tso = f->gso = f->gro = f->rx_csum = f->tx_csum = DOCTOR_UNKNOWN;
    f->memlock_soft = f->memlock_hard = DOCTOR_UNKNOWN;
    f->iommu_groups = DOCTOR_UNKNOWN;
}

int doctor_facts_collect(const char *peer_addr, const char *local_addr, const char *root,
                         struct doctor_facts *f, struct ft_err *err)
{
    blank(f);
    gethostname(f->host, sizeof(f->host) - 1);
    struct ipaddr dst, src = {0};
    if (ip_parse(peer_addr, &dst) < 0)
        return ft_err_set(err, -EINVAL,
                          "doctor: '%s' is not an IPv4 or IPv6 address (a link-local IPv6 "
                          "address needs its zone: give a global or unique-local one)",
                          peer_addr ? peer_addr : "");
    snprintf(f->peer_addr, sizeof(f->peer_addr), "%s", peer_addr);
    if (local_addr && *local_addr) {
        if (ip_parse(local_addr, &src) < 0)
            return ft_err_set(err, -EINVAL, "doctor: '%s' is not an IPv4 or IPv6 address",
                              local_addr);
        if (src.family != dst.family)
            return ft_err_set(err, -EINVAL,
                              "doctor: %s and %s are of different families: give both ends' "
                              "addresses in one (--to)",
                              local_addr, peer_addr);
    } else if (!root) {
        int rc = source_for(&dst, &src, err);
        if (rc < 0)
            return rc;
    } else {
        src.family = dst.family;
    }
    inet_ntop(src.family, &src.a, f->local_addr, sizeof(f->local_addr));
    if (!root) {
        addr_facts(f, &src);
        if (!f->addr_dev[0])
            return ft_err_set(err, -EADDRNOTAVAIL, "doctor: %s is not an address of this host",
                              f->local_addr);
        int rc = route_get(&dst, &src, f->route_dev, sizeof(f->route_dev), f->route_via,
                           sizeof(f->route_via));
        if (rc < 0)
            return ft_err_set(err, rc, "doctor: no route from %s to %s: %s", f->local_addr,
                              peer_addr, strerror(-rc));
        eth_facts(f);
        struct rlimit rl;
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
            f->memlock_soft =
                rl.rlim_cur == RLIM_INFINITY ? DOCTOR_UNLIMITED : (int64_t)rl.rlim_cur;
            f->memlock_hard =
                rl.rlim_max == RLIM_INFINITY ? DOCTOR_UNLIMITED : (int64_t)rl.rlim_max;
        }
    }
    sysctl_facts(f, root, dst.family == AF_INET);
    return 0;
}
