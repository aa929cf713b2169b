/* ctr_rdmanl: RDMA netlink requests and replies for per-QP counters (see ctr_rdmanl.h).
 *
 * What the kernel does with them (drivers/infiniband/core/nldev.c and counters.c):
 *  - Every request is RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd) = (5 << 10) + cmd. STAT_SET and
 *    STAT_DEL carry RDMA_NL_ADMIN_PERM: without CAP_NET_ADMIN rdma_nl_rcv_msg() answers
 *    -EPERM before anything else. Kernels before 5.3 have no STAT commands (-EINVAL: the
 *    op is beyond RDMA_NLDEV_NUM_OPS).
 *  - STAT_SET with STAT_MODE = manual, STAT_RES = RES_QP and RES_LQPN binds that QP:
 *    without STAT_COUNTER_ID rdma_counter_bind_qpn_alloc() allocates a counter (-EOPNOTSUPP
 *    when the port has no hw stats at all, -EINVAL when the port is in auto mode or the QP
 *    is on another port or already bound, -ENOENT when no QP has that number, -ENOMEM when
 *    alloc_and_bind() fails: also when the driver has no counter_alloc_stats/counter_dealloc
 *    ops, as rdma_rxe and siw); with it rdma_counter_bind_qpn() joins that counter. The
 *    reply (type STAT_SET) holds DEV_INDEX, DEV_NAME, PORT_INDEX, STAT_COUNTER_ID and
 *    RES_LQPN.
 *  - STAT_DEL with STAT_COUNTER_ID and RES_LQPN unbinds; the counter is freed with its last
 *    QP (counter_release() adds its values to the port's history first, so the port-wide
 *    hw_counters never go back). Destroying a QP unbinds it too (ib_destroy_qp_user()), so
 *    a process that dies leaves no counter behind. The reply's type is STAT_SET.
 *  - STAT_GET with STAT_RES = RES_QP and STAT_MODE returns the port's mode (and the auto
 *    mask); with STAT_COUNTER_ID (and PORT_INDEX, which res_get_common_doit() requires)
 *    one counter: PORT_INDEX, STAT_COUNTER_ID, STAT_MODE, RES_QP { RES_QP_ENTRY { RES_LQPN
 *    } ... } and STAT_HWCOUNTERS { STAT_HWCOUNTER_ENTRY { ENTRY_NAME, ENTRY_VALUE u64 } ... },
 *    the values read from the device first (rdma_counter_query_stats()).
 *  - Nests may carry NLA_F_NESTED (nla_nest_start) or not (older kernels'
 *    nla_nest_start_noflag); u64 values are 4-byte aligned and may follow an
 *    RDMA_NLDEV_ATTR_PAD attribute on architectures without efficient unaligned access.
 *  - Errors come as NLMSG_ERROR; with NETLINK_EXT_ACK the kernel's message follows as
 *    NLMSGERR_ATTR_MSG (NLM_F_ACK_TLVS), after the echoed request, or right after the
 *    header when NETLINK_CAP_ACK caps the echo (NLM_F_CAPPED). */
#include "engine/counters/rdmanl.h"

#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define NLDEV(cmd) ((uint16_t)RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd))

/* ---- building ---- */

struct nlb {
    unsigned char *buf;
    size_t cap, len;
    bool bad;
};

static void nlb_start(struct nlb *b, void *buf, size_t cap, uint16_t type, uint16_t flags,
                      uint32_t seq)
{
    b->buf = buf;
    b->cap = cap;
    b->len = NLMSG_HDRLEN;
    b->bad = cap < NLMSG_HDRLEN;
    if (b->bad)
        return;
    memset(b->buf, 0, NLMSG_HDRLEN);
    struct nlmsghdr h = {.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq};
    memcpy(b->buf, &h, sizeof(h));
}

static void nlb_u32(struct nlb *b, uint16_t type, uint32_t v)
{
    size_t need = NLA_ALIGN(NLA_HDRLEN + sizeof(v));
    if (b->bad || b->cap - b->len < need) {
        b->bad = true;
        return;
    }
    struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + sizeof(v)), .nla_type = type};
    memcpy(b->buf + b->len, &a, sizeof(a));
    memcpy(b->buf + b->len + NLA_HDRLEN, &v, sizeof(v));
    b->len += need;
}

static size_t nlb_end(struct nlb *b)
{
    if (b->bad)
        return 0;
    uint32_t len = (uint32_t)b->len;
    memcpy(b->buf + offsetof(struct nlmsghdr, nlmsg_len), &len, sizeof(len));
    return b->len;
}

size_t rdmanl_build_dev_dump(void *buf, size_t cap, uint32_t seq)
{
    struct nlb b;
    nlb_start(&b, buf, cap, NLDEV(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, seq);
    return nlb_end(&b);
}

/* Every QP-statistics request starts alike: acknowledged, the device and port, and the
 * resource (QPs). */
static void qp_stat_start(struct nlb *b, void *buf, size_t cap, uint16_t cmd, uint32_t seq,
                          uint32_t dev, uint32_t port)
{
    nlb_start(b, buf, cap, NLDEV(cmd), NLM_F_REQUEST | NLM_F_ACK, seq);
    nlb_u32(b, RDMA_NLDEV_ATTR_DEV_INDEX, dev);
    nlb_u32(b, RDMA_NLDEV_ATTR_PORT_INDEX, port);
    nlb_u32(b, RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP);
}

size_t rdmanl_build_mode_get(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port)
{
    struct nlb b;
    qp_stat_start(&b, buf, cap, RDMA_NLDEV_CMD_STAT_GET, seq, dev, port);
    /* Present (any value) so stat_get_doit_qp() answers with the mode, not counters. */
    nlb_u32(&b, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL);
    return nlb_end(&b);
}

size_t rdmanl_build_bind(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port,
                         uint32_t qpn, bool new_counter, uint32_t counter)
{
    struct nlb b;
    qp_stat_start(&b, buf, cap, RDMA_NLDEV_CMD_STAT_SET, seq, dev, port);
    nlb_u32(&b, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL);
    nlb_u32(&b, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
    if (!new_counter)
        nlb_u32(&b, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter);
    return nlb_end(&b);
}

size_t rdmanl_build_unbind(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port,
                           uint32_t qpn, uint32_t counter)
{
    struct nlb b;
    qp_stat_start(&b, buf, cap, RDMA_NLDEV_CMD_STAT_DEL, seq, dev, port);
    nlb_u32(&b, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter);
    nlb_u32(&b, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
    return nlb_end(&b);
}

size_t rdmanl_build_counter_get(void *buf, size_t cap, uint32_t seq, uint32_t dev, uint32_t port,
                                uint32_t counter)
{
    struct nlb b;
    qp_stat_start(&b, buf, cap, RDMA_NLDEV_CMD_STAT_GET, seq, dev, port);
    nlb_u32(&b, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter);
    return nlb_end(&b);
}

/* ---- parsing ---- */

/* The attributes of [p, p + len), indexed by type (the last of a type wins, as nla_parse
 * keeps it); unknown and out-of-range types are skipped. -EBADMSG when one overruns. */
#define TB_MAX RDMA_NLDEV_ATTR_MAX

static int attrs(const unsigned char *p, size_t len, const struct nlattr **tb)
{
    memset(tb, 0, sizeof(*tb) * TB_MAX);
    while (len >= NLA_HDRLEN) {
        struct nlattr a;
        memcpy(&a, p, sizeof(a));
        if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
            return -EBADMSG;
        unsigned type = a.nla_type & NLA_TYPE_MASK;
        if (type < TB_MAX)
            tb[type] = (const struct nlattr *)p;
        size_t step = NLA_ALIGN(a.nla_len);
        if (step >= len)
            break;
        p += step;
        len -= step;
    }
    return 0;
}

static const unsigned char *payload(const struct nlattr *a)
{
    return (const unsigned char *)a + NLA_HDRLEN;
}

static size_t payload_len(const struct nlattr *a)
{
    uint16_t l;
    memcpy(&l, &a->nla_len, sizeof(l));
    return l - NLA_HDRLEN;
}

static bool get_u32(const struct nlattr *a, uint32_t *v)
{
    if (!a || payload_len(a) < sizeof(*v))
        return false;
    memcpy(v, payload(a), sizeof(*v));
    return true;
}

static bool get_u64(const struct nlattr *a, uint64_t *v)
{
    if (!a || payload_len(a) < sizeof(*v))
        return false;
    memcpy(v, payload(a), sizeof(*v)); /* 4-byte aligned in the message */
    return true;
}

static bool get_str(const struct nlattr *a, char *out, size_t len)
{
    if (!a || !len)
        return false;
    size_t n = payload_len(a);
    const unsigned char *s = payload(a);
    const unsigned char *nul = memchr(s, '\0', n);
    if (nul)
        n = (size_t)(nul - s);
    if (n >= len)
        n = len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

/* The message's attributes (after the nlmsghdr: nldev messages have no family header). */
static int msg_attrs(const struct nlmsghdr *h, const struct nlattr **tb)
{
    uint32_t len;
    memcpy(&len, &h->nlmsg_len, sizeof(len));
    if (len < NLMSG_HDRLEN)
        return -EBADMSG;
    return attrs((const unsigned char *)h + NLMSG_HDRLEN, len - NLMSG_HDRLEN, tb);
}

int rdmanl_parse_error(const struct nlmsghdr *h, int *error, char *msg, size_t msglen)
{
    if (msg && msglen)
        msg[0] = '\0';
    *error = 0;
    struct nlmsghdr hd;
    memcpy(&hd, h, sizeof(hd));
    if (hd.nlmsg_len < NLMSG_HDRLEN)
        return -EBADMSG;
    const unsigned char *p = (const unsigned char *)h + NLMSG_HDRLEN;
    size_t len = hd.nlmsg_len - NLMSG_HDRLEN, off;
    if (hd.nlmsg_type == NLMSG_DONE) {
        /* A dump's end: an int (0 or -errno) on kernels since 2.6; nothing before. */
        if (len < sizeof(int))
            return 0;
        memcpy(error, p, sizeof(int));
        off = sizeof(int);
    } else if (hd.nlmsg_type == NLMSG_ERROR) {
        if (len < sizeof(struct nlmsgerr))
            return -EBADMSG;
        struct nlmsgerr e;
        memcpy(&e, p, sizeof(e));
        *error = e.error;
        if (hd.nlmsg_flags & NLM_F_CAPPED) /* NETLINK_CAP_ACK, or an acknowledgement */
            off = NLMSG_ALIGN(sizeof(struct nlmsgerr));
        else
            /* the whole request echoed */
            off = NLMSG_ALIGN(sizeof(int) +
                              (e.msg.nlmsg_len < NLMSG_HDRLEN ? NLMSG_HDRLEN : e.msg.nlmsg_len));
    } else {
        return -EBADMSG;
    }
    if (*error > 0)
        *error = -*error;
    if (!(hd.nlmsg_flags & NLM_F_ACK_TLVS) || off >= len || !msg)
        return 0;
    /* Extended-ack attributes (NLMSGERR_ATTR_*) follow. */
    p += off;
    len -= off;
    while (len >= NLA_HDRLEN) {
        struct nlattr a;
        memcpy(&a, p, sizeof(a));
        if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
            return -EBADMSG;
        if ((a.nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
            get_str((const struct nlattr *)p, msg, msglen);
        size_t step = NLA_ALIGN(a.nla_len);
        if (step >= len)
            break;
        p += step;
        len -= step;
    }
    return 0;
}

int rdmanl_parse_dev(const struct nlmsghdr *h, uint32_t *index, char *name, size_t len)
{
    const struct nlattr *tb[TB_MAX];
    if (msg_attrs(h, tb) < 0 || !get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX], index) ||
        !get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME], name, len))
        return -EBADMSG;
    return 0;
}

int rdmanl_parse_mode(const struct nlmsghdr *h, uint32_t *mode, uint32_t *mask)
{
    const struct nlattr *tb[TB_MAX];
    *mask = 0;
    if (msg_attrs(h, tb) < 0 || !get_u32(tb[RDMA_NLDEV_ATTR_STAT_MODE], mode))
        return -EBADMSG;
    get_u32(tb[RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK], mask);
    return 0;
}

int rdmanl_parse_bind(const struct nlmsghdr *h, uint32_t *counter, uint32_t *qpn)
{
    const struct nlattr *tb[TB_MAX];
    if (msg_attrs(h, tb) < 0 || !get_u32(tb[RDMA_NLDEV_ATTR_STAT_COUNTER_ID], counter))
        return -EBADMSG;
    if (!get_u32(tb[RDMA_NLDEV_ATTR_RES_LQPN], qpn))
        *qpn = 0;
    return 0;
}

/* Walk the entries nested in a table attribute: each nested attribute of type entry. */
struct nest_it {
    const unsigned char *p;
    size_t len;
};

static void nest_begin(struct nest_it *it, const struct nlattr *table)
{
    it->p = payload(table);
    it->len = payload_len(table);
}

/* The next attribute; NULL at the end, or when the rest is malformed (*bad set). */
static const struct nlattr *nest_next(struct nest_it *it, bool *bad)
{
    if (it->len < NLA_HDRLEN)
        return NULL;
    struct nlattr a;
    memcpy(&a, it->p, sizeof(a));
    if (a.nla_len < NLA_HDRLEN || a.nla_len > it->len) {
        *bad = true;
        return NULL;
    }
    const struct nlattr *cur = (const struct nlattr *)it->p;
    size_t step = NLA_ALIGN(a.nla_len);
    it->p += step < it->len ? step : it->len;
    it->len -= step < it->len ? step : it->len;
    return cur;
}

static unsigned attr_type(const struct nlattr *a)
{
    uint16_t t;
    memcpy(&t, &a->nla_type, sizeof(t));
    return t & NLA_TYPE_MASK;
}

int rdmanl_parse_counter(const struct nlmsghdr *h, struct rdmanl_counter *c)
{
    const struct nlattr *tb[TB_MAX];
    memset(c, 0, sizeof(*c));
    if (msg_attrs(h, tb) < 0 || !get_u32(tb[RDMA_NLDEV_ATTR_STAT_COUNTER_ID], &c->id) ||
        !tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS])
        return -EBADMSG;
    get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX], &c->dev_index);
    get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX], &c->port);
    get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME], c->dev_name, sizeof(c->dev_name));
    c->have_mode = get_u32(tb[RDMA_NLDEV_ATTR_STAT_MODE], &c->mode);
    bool bad = false;
    struct nest_it it;
    const struct nlattr *e;
    if (tb[RDMA_NLDEV_ATTR_RES_QP]) {
        nest_begin(&it, tb[RDMA_NLDEV_ATTR_RES_QP]);
        while ((e = nest_next(&it, &bad))) {
            if (attr_type(e) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
                continue;
            const struct nlattr *qtb[TB_MAX];
            uint32_t qpn;
            if (attrs(payload(e), payload_len(e), qtb) < 0 ||
                !get_u32(qtb[RDMA_NLDEV_ATTR_RES_LQPN], &qpn))
                return -EBADMSG;
            if (c->nqps < RDMANL_MAX_QPS)
                c->qpns[c->nqps] = qpn;
            c->nqps++;
        }
    }
    nest_begin(&it, tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]);
    while (!bad && (e = nest_next(&it, &bad))) {
        if (attr_type(e) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
            continue;
        const struct nlattr *stb[TB_MAX];
        struct rdmanl_stat st;
        if (attrs(payload(e), payload_len(e), stb) < 0 ||
            !get_str(stb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME], st.name, sizeof(st.name)) ||
            !get_u64(stb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE], &st.value))
            return -EBADMSG;
        if (c->nstats == RDMANL_MAX_STATS) {
            c->stats_truncated = true;
            continue;
        }
        c->stats[c->nstats++] = st;
    }
    return bad ? -EBADMSG : 0;
}

/* ---- the socket ---- */

int rdmanl_open(struct rdmanl *nl)
{
    memset(nl, 0, sizeof(*nl));
    nl->fd = -1;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (fd < 0)
        return -errno;
    int one = 1;
    /* Best effort: the kernel's own words for an error, and no echo of our request. */
    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) { /* nl_pid 0: the kernel */
        int e = -errno;
        close(fd);
        return e;
    }
    rdmanl_attach(nl, fd);
    return 0;
}

void rdmanl_attach(struct rdmanl *nl, int fd)
{
    memset(nl, 0, sizeof(*nl));
    nl->fd = fd;
    nl->timeout_ms = 5000;
}

void rdmanl_close(struct rdmanl *nl)
{
    if (nl->fd >= 0)
        close(nl->fd);
    nl->fd = -1;
}

typedef int (*reply_cb)(const struct nlmsghdr *h, void *arg);

/* Send one request and read its replies: every data message goes to cb; a doit ends with
 * its acknowledgement or error, a dump with NLMSG_DONE. Replies to other sequence numbers
 * (a request given up on earlier) and messages from anyone but the kernel are skipped. The
 * first error wins, but the replies are read to their end so the next request starts
 * clean. */
static int transact(struct rdmanl *nl, const void *req, size_t len, reply_cb cb, void *arg)
{
    nl->ext[0] = '\0';
    if (!len)
        return -EMSGSIZE;
    if (nl->fd < 0)
        return -EBADF;
    struct nlmsghdr rh;
    memcpy(&rh, req, sizeof(rh));
    uint32_t seq = rh.nlmsg_seq;
    ssize_t w;
    do
        w = send(nl->fd, req, len, 0);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        return -errno;
    enum { CAP = 65536 };
    unsigned char *buf = malloc(CAP);
    if (!buf)
        return -ENOMEM;
    int rc = 0;
    bool done = false;
    while (!done) {
        struct pollfd p = {nl->fd, POLLIN, 0};
        int pr = poll(&p, 1, nl->timeout_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            rc = rc ? rc : pr == 0 ? -ETIMEDOUT : -errno;
            break;
        }
        struct sockaddr_nl from;
        socklen_t fl = sizeof(from);
        memset(&from, 0, sizeof(from));
        ssize_t n = recvfrom(nl->fd, buf, CAP, MSG_TRUNC, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = rc ? rc : -errno;
            break;
        }
        if (n == 0) {
            rc = rc ? rc : -EPIPE;
            break;
        }
        if (n > CAP) {
            rc = rc ? rc : -EMSGSIZE;
            continue;
        }
        if (fl >= sizeof(sa_family_t) && from.nl_family == AF_NETLINK && from.nl_pid != 0)
            continue; /* not from the kernel */
        int left = (int)n;
        for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; NLMSG_OK(h, left);
             h = NLMSG_NEXT(h, left)) {
            if (h->nlmsg_seq != seq)
                continue;
            if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE) {
                int err;
                char msg[sizeof(nl->ext)];
                int pe = rdmanl_parse_error(h, &err, msg, sizeof(msg));
                if (pe < 0)
                    err = pe;
                if (err && !rc) {
                    rc = err;
                    snprintf(nl->ext, sizeof(nl->ext), "%s", msg);
                }
                done = true;
                break;
            }
            if (h->nlmsg_type < NLMSG_MIN_TYPE)
                continue; /* NOOP, OVERRUN */
            int r = cb ? cb(h, arg) : 0;
            if (r < 0 && !rc)
                rc = r;
        }
    }
    free(buf);
    return rc;
}

struct dev_find {
    const char *name;
    uint32_t index;
    bool found;
};

static int dev_cb(const struct nlmsghdr *h, void *arg)
{
    struct dev_find *d = arg;
    uint32_t idx;
    char name[64];
    if (rdmanl_parse_dev(h, &idx, name, sizeof(name)) < 0)
        return -EBADMSG;
    if (!d->found && !strcmp(name, d->name)) {
        d->index = idx;
        d->found = true;
    }
    return 0;
}

int rdmanl_dev_index(struct rdmanl *nl, const char *name, uint32_t *index)
{
    unsigned char req[64];
    struct dev_find d = {name, 0, false};
    int rc = transact(nl, req, rdmanl_build_dev_dump(req, sizeof(req), ++nl->seq), dev_cb, &d);
    if (rc < 0)
        return rc;
    if (!d.found)
        return -ENODEV;
    *index = d.index;
    return 0;
}

struct mode_out {
    uint32_t mode, mask;
    bool got;
};

static int mode_cb(const struct nlmsghdr *h, void *arg)
{
    struct mode_out *m = arg;
    int rc = rdmanl_parse_mode(h, &m->mode, &m->mask);
    m->got |= rc == 0;
    return rc;
}

int rdmanl_get_mode(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t *mode, uint32_t *mask)
{
    unsigned char req[128];
    struct mode_out m = {0};
    int rc = transact(nl, req, rdmanl_build_mode_get(req, sizeof(req), ++nl->seq, dev, port),
                      mode_cb, &m);
    if (rc == 0 && !m.got)
        rc = -EBADMSG;
    if (rc == 0) {
        *mode = m.mode;
        *mask = m.mask;
    }
    return rc;
}

struct bind_out {
    uint32_t counter, qpn;
    bool got;
};

static int bind_cb(const struct nlmsghdr *h, void *arg)
{
    struct bind_out *b = arg;
    int rc = rdmanl_parse_bind(h, &b->counter, &b->qpn);
    b->got |= rc == 0;
    return rc;
}

int rdmanl_bind(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t qpn, bool new_counter,
                uint32_t *counter)
{
    unsigned char req[128];
    struct bind_out b = {0};
    int rc = transact(
        nl, req,
        rdmanl_build_bind(req, sizeof(req), ++nl->seq, dev, port, qpn, new_counter, *counter),
        bind_cb, &b);
    if (rc == 0 && !b.got)
        rc = -EBADMSG;
    if (rc == 0)
        *counter = b.counter;
    return rc;
}

int rdmanl_unbind(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t qpn, uint32_t counter)
{
    unsigned char req[128];
    return transact(nl, req,
                    rdmanl_build_unbind(req, sizeof(req), ++nl->seq, dev, port, qpn, counter), NULL,
                    NULL);
}

struct counter_out {
    struct rdmanl_counter *c;
    bool got;
};

static int counter_cb(const struct nlmsghdr *h, void *arg)
{
    struct counter_out *o = arg;
    if (o->got)
        return 0;
    int rc = rdmanl_parse_counter(h, o->c);
    o->got = rc == 0;
    return rc;
}

int rdmanl_counter_get(struct rdmanl *nl, uint32_t dev, uint32_t port, uint32_t counter,
                       struct rdmanl_counter *out)
{
    unsigned char req[128];
    struct counter_out o = {out, false};
    int rc =
        transact(nl, req, rdmanl_build_counter_get(req, sizeof(req), ++nl->seq, dev, port, counter),
                 counter_cb, &o);
    if (rc == 0 && !o.got)
        rc = -EBADMSG;
    return rc;
}

const char *rdmanl_errno_name(int err)
{
    switch (err < 0 ? -err : err) {
    case EPERM:
        return "EPERM";
    case ENOENT:
        return "ENOENT";
    case ENOMEM:
        return "ENOMEM";
    case EACCES:
        return "EACCES";
    case EBUSY:
        return "EBUSY";
    case ENODEV:
        return "ENODEV";
    case EINVAL:
        return "EINVAL";
    case ENOSPC:
        return "ENOSPC";
    case EPIPE:
        return "EPIPE";
    case EBADMSG:
        return "EBADMSG";
    case EMSGSIZE:
        return "EMSGSIZE";
    case EPROTONOSUPPORT:
        return "EPROTONOSUPPORT";
    case EOPNOTSUPP:
        return "EOPNOTSUPP";
    case ETIMEDOUT:
        return "ETIMEDOUT";
    case EAFNOSUPPORT:
        return "EAFNOSUPPORT";
    default:
        return NULL;
    }
}
