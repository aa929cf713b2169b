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

/* The kernel's source address for dst: a connected UDP socket sends nothing. */
static int source_for(const struct in_addr *dst, struct in_addr *src, struct ft_err *err)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ft_err_set(err, -errno, "doctor: socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr = *dst};
    socklen_t len = sizeof(sa);
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        char t[64];
        inet_ntop(AF_INET, dst, t, sizeof(t));
        rc = ft_err_set(err, -errno, "doctor: no route to %s: %s", t, strerror(errno));
    } else {
        *src = sa.sin_addr;
    }
    close(fd);
    return rc;
}

/* RTM_GETROUTE for dst from src: the output interface and the gateway. */
static int route_get(const struct in_addr *dst, const struct in_addr *src, char *dev, size_t dlen,
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
    req.rt.rtm_family = AF_INET;
    req.rt.rtm_dst_len = 32;
    const struct in_addr *vals[2] = {dst, src};
    const unsigned short types[2] = {RTA_DST, RTA_SRC};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && !src->s_addr)
            break;
        struct rtattr *ra = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
        ra->rta_type = types[i];
        ra->rta_len = RTA_LENGTH(4);
        memcpy(RTA_DATA(ra), vals[i], 4);
        req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(ra->rta_len);
        if (i == 1)
            req.rt.rtm_src_len = 32;
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
                inet_ntop(AF_INET, RTA_DATA(ra), via, (socklen_t)vlen);
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

/* The interface holding src, its prefix, and the other interfaces in that prefix. */
static void addr_facts(struct doctor_facts *f, const struct in_addr *src)
{
    struct ifaddrs *ifa0;
    if (getifaddrs(&ifa0) < 0)
        return;
    uint32_t mask = 0;
    for (struct ifaddrs *i = ifa0; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
            continue;
        const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
        if (a->sin_addr.s_addr == src->s_addr) {
            snprintf(f->addr_dev, sizeof(f->addr_dev), "%s", i->ifa_name);
            mask = ((const struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
        }
    }
    if (f->addr_dev[0] && mask) {
        struct in_addr net = {.s_addr = src->s_addr & mask};
        char t[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &net, t, sizeof(t));
        snprintf(f->subnet, sizeof(f->subnet), "%s/%d", t, __builtin_popcount(mask));
        for (struct ifaddrs *i = ifa0; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask ||
                !strcmp(i->ifa_name, f->addr_dev))
                continue;
            const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
            if ((a->sin_addr.s_addr & mask) != net.s_addr)
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

static void sysctl_facts(struct doctor_facts *f, const char *root)
{
    const char *d = f->addr_dev[0] ? f->addr_dev : "lo";
    f->rp_filter_all = read_int(root, "/proc/sys/net/ipv4/conf/all/rp_filter", NULL);
    f->rp_filter_dev = read_int(root, "/proc/sys/net/ipv4/conf/%s/rp_filter", d);
    f->arp_ignore_all = read_int(root, "/proc/sys/net/ipv4/conf/all/arp_ignore", NULL);
    f->arp_ignore_dev = read_int(root, "/proc/sys/net/ipv4/conf/%s/arp_ignore", d);
    f->arp_announce_all = read_int(root, "/proc/sys/net/ipv4/conf/all/arp_announce", NULL);
    f->arp_announce_dev = read_int(root, "/proc/sys/net/ipv4/conf/%s/arp_announce", d);
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
    struct in_addr dst, src = {0};
    if (!peer_addr || inet_pton(AF_INET, peer_addr, &dst) != 1)
        return ft_err_set(err, -EINVAL,
                          "doctor: '%s' is not an IPv4 address (the doctor checks IPv4 paths)",
                          peer_addr ? peer_addr : "");
    snprintf(f->peer_addr, sizeof(f->peer_addr), "%s", peer_addr);
    if (local_addr && *local_addr) {
        if (inet_pton(AF_INET, local_addr, &src) != 1)
            return ft_err_set(err, -EINVAL, "doctor: '%s' is not an IPv4 address", local_addr);
    } else if (!root) {
        int rc = source_for(&dst, &src, err);
        if (rc < 0)
            return rc;
    }
    inet_ntop(AF_INET, &src, f->local_addr, sizeof(f->local_addr));
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
    sysctl_facts(f, root);
    return 0;
}
