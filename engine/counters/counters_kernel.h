/* ctr_kernel: the kernel interfaces behind the counters that are not files: qdisc
 * statistics over rtnetlink (RTM_GETQDISC dumps), ethtool statistics (ETHTOOL_GSTATS
 * ioctl), and which netdev carries a local address. Raw netlink, no extra library.
 * Returns 0 / -errno; never prints. Sockets belong to the caller's network namespace. */
#ifndef COUNTERS_KERNEL_H
#define COUNTERS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One qdisc's statistics from an RTM_NEWQDISC message (include/uapi/linux/gen_stats.h). */
struct counters_kernel_qdisc_stats {
    int ifindex;
    uint32_t handle, parent;
    char kind[16];       /* "htb", "bfifo", "noqueue" ... */
    bool have_basic;     /* bytes, packets */
    bool pkt64;          /* packets came from TCA_STATS_PKT64 (64-bit) */
    bool have_queue;     /* qlen ... overlimits */
    uint64_t bytes;      /* u64 */
    uint64_t packets;    /* u32 in gnet_stats_basic, u64 with TCA_STATS_PKT64 */
    uint32_t qlen;       /* gauge, packets */
    uint32_t backlog;    /* gauge, bytes */
    uint32_t drops;      /* u32 counter */
    uint32_t requeues;   /* u32 counter */
    uint32_t overlimits; /* u32 counter */
};

/* A NETLINK_ROUTE socket (close it with close()). Returns the fd or -errno. */
int counters_kernel_nl_open(void);
/* Dump every qdisc of the namespace and call cb for each. Returns the count or -errno. */
int counters_kernel_nl_qdisc_dump(int fd, uint32_t *seq,
                                  void (*cb)(const struct counters_kernel_qdisc_stats *q,
                                             void *arg),
                                  void *arg);

/* ethtool statistics of one netdev. */
struct counters_kernel_eth {
    char ifname[16];
    char driver[32]; /* ETHTOOL_GDRVINFO driver, "" if unknown */
    int n;           /* statistics count when opened */
    char (*names)[32];
    void *buf; /* struct ethtool_stats + room for the values */
    size_t cap;
};

/* An AF_INET datagram socket for ethtool ioctls. Returns the fd or -errno. */
int counters_kernel_eth_socket(void);
/* Names and driver of ifname's statistics. -EOPNOTSUPP when it has none (lo). */
int counters_kernel_eth_open(int sock, const char *ifname, struct counters_kernel_eth *e);
/* Read the values (e->n of them) into vals. -ESTALE when the driver's count changed. */
int counters_kernel_eth_read(int sock, struct counters_kernel_eth *e, uint64_t *vals);
void counters_kernel_eth_close(struct counters_kernel_eth *e);

/* Name of the netdev that holds the address ip (text). 0 or -ENOENT. */
int counters_kernel_netdev_of_addr(const char *ip, char *ifname, size_t len);

#endif
