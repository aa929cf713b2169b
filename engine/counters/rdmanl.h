/* ctr_rdmanl: RDMA netlink (NETLINK_RDMA, the kernel's nldev client) for per-queue-pair
 * counters, what `rdma statistic qp mode | bind | unbind | show` do: find a device's index,
 * read a port's counter mode, bind a QP to a new or an existing counter (manual mode),
 * unbind it, and read one counter's hw stats and QPs. Raw netlink, no extra library.
 * Requests are built and replies parsed apart from the socket, so tests check them byte
 * for byte. Returns 0 / -errno; never prints. */
#ifndef RDMANL_H
#define RDMANL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

#define RDMANL_MAX_STATS 160 /* hw stats of one counter (mlx5 has about 40) */
#define RDMANL_MAX_QPS   64  /* QP numbers kept from one counter's list */

/* One counter as RDMA_NLDEV_CMD_STAT_GET describes it (nldev.c fill_res_counter_entry). */
struct rdmanl_counter {
    uint32_t dev_index, port, id;
    char dev_name[64];
    bool have_mode;
    uint32_t mode; /* RDMA_COUNTER_MODE_* */
    int nqps;      /* QPs bound to it (all of them, even beyond RDMANL_MAX_QPS) */
    uint32_t qpns[RDMANL_MAX_QPS];
    int nstats;
    bool stats_truncated; /* more than RDMANL_MAX_STATS */
    struct rdmanl_stat {
        char name[64];
        uint64_t value;
    } stats[RDMANL_MAX_STATS];
};

/* ---- requests: the whole message in buf; its length, or 0 when buf is too small ---- */

/* RDMA_NLDEV_CMD_GET as a dump: every device (index, name). */
size_t rdmanl_build_dev_dump(void *buf, size_t cap, uint32_t seq);
/* RDMA_NLDEV_CMD_STAT_GET for a port's QP counter mode (STAT_MODE present asks for the
 * mode only, as iproute2 does). */
size_t rdmanl_build_mode_get(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port);
/* RDMA_NLDEV_CMD_STAT_SET, manual mode: bind QP qpn to counter (new_counter: to a new one
 * the kernel allocates and names in its reply). */
size_t rdmanl_build_bind(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port,
                         uint32_t qpn, bool new_counter, uint32_t counter);
/* RDMA_NLDEV_CMD_STAT_DEL: unbind QP qpn from counter (the kernel frees the counter with
 * its last QP). */
size_t rdmanl_build_unbind(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port,
                           uint32_t qpn, uint32_t counter);
/* RDMA_NLDEV_CMD_STAT_GET of one counter: its hw stats and QPs. */
size_t rdmanl_build_counter_get(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port,
                                uint32_t counter);

/* ---- replies: one message each (h->nlmsg_len bytes); -EBADMSG when malformed or when an
 * attribute the command always carries is missing ---- */

/* An NLMSG_ERROR or NLMSG_DONE: *error is 0 (an acknowledgement) or -errno; the kernel's
 * extended-ack text (NLMSGERR_ATTR_MSG) goes to msg, "" when none. */
int rdmanl_parse_error(const struct nlmsghdr *h, int *error, char *msg, size_t msglen);
/* A device of the RDMA_NLDEV_CMD_GET dump. */
int rdmanl_parse_dev(const struct nlmsghdr *h, uint32_t *index, char *name, size_t len);
/* The mode reply: mode, and the auto mode's mask (0 unless auto). */
int rdmanl_parse_mode(const struct nlmsghdr *h, uint32_t *mode, uint32_t *mask);
/* The bind reply: the counter the QP is now bound to. */
int rdmanl_parse_bind(const struct nlmsghdr *h, uint32_t *counter, uint32_t *qpn);
/* A counter's reply. */
int rdmanl_parse_counter(const struct nlmsghdr *h, struct rdmanl_counter *c);

/* ---- the socket ---- */

struct rdmanl {
    int fd;
    uint32_t seq;
    int timeout_ms;
    char ext[160]; /* the kernel's extended-ack text for the last error, "" when none */
};

/* A NETLINK_RDMA socket with extended acks on. */
int rdmanl_open(struct rdmanl *nl);
/* Use an already connected socket (tests pass one end of a socketpair). */
void rdmanl_attach(struct rdmanl *nl, int fd);
void rdmanl_close(struct rdmanl *nl);
/* The kernel's index of RDMA device name (-ENODEV when it has none by that name). */
int rdmanl_dev_index(struct rdmanl *nl, const char *name, uint32_t *index);
int rdmanl_get_mode(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t *mode, uint32_t *mask);
/* Bind qpn; *counter in: the counter to join unless new_counter; out: the one it joined. */
int rdmanl_bind(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t qpn, bool new_counter,
                uint32_t *counter);
int rdmanl_unbind(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t qpn, uint32_t counter);
int rdmanl_counter_get(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t counter,
                       struct rdmanl_counter *out);

/* "ENOMEM", "EPERM", ... for the errno values netlink answers with; NULL otherwise. */
const char *rdmanl_errno_name(int err);

#endif
