/* rdmanl_kernel: RDMA netlink replies built the way the kernel builds them (nlmsg_put,
 * nla_put_u32/u8/string, nla_put_u64_64bit with its RDMA_NLDEV_ATTR_PAD, nla_nest_start
 * with NLA_F_NESTED, netlink_ack with NETLINK_CAP_ACK and extended acks, the dump's
 * NLMSG_DONE), for the tests of engine/counters/rdmanl.c and engine/counters/counters_qp.c.
 * test_ctr_rdmanl.c checks what it builds against replies captured from a real kernel, byte for
 * byte. Test-only. */
#ifndef RDMANL_KERNEL_H
#define RDMANL_KERNEL_H

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KPID 0x95 /* the portid the kernel addresses our socket by (as captured) */

struct kmsg {
    unsigned char b[16384];
    size_t len;   /* bytes in b (one datagram: one or more messages) */
    size_t hdr;   /* offset of the message being built */
    uint32_t pid; /* the nlmsg_pid the kernel writes: our socket's portid */
};

static inline void k_reset(struct kmsg *m)
{
    memset(m->b, 0, sizeof(m->b));
    m->len = m->hdr = 0;
    m->pid = KPID;
}

/* nlmsg_put: a header, payload to follow. */
static inline void k_msg(struct kmsg *m, uint16_t type, uint16_t flags, uint32_t seq)
{
    struct nlmsghdr h = {.nlmsg_len = NLMSG_HDRLEN,
                         .nlmsg_type = type,
                         .nlmsg_flags = flags,
                         .nlmsg_seq = seq,
                         .nlmsg_pid = m->pid};
    m->hdr = m->len;
    memcpy(m->b + m->len, &h, sizeof(h));
    m->len += NLMSG_HDRLEN;
}

/* nlmsg_end */
static inline void k_end(struct kmsg *m)
{
    uint32_t l = (uint32_t)(m->len - m->hdr);
    memcpy(m->b + m->hdr, &l, sizeof(l));
}

/* nla_put: header, data, zero padding to 4 bytes. */
static inline void k_put(struct kmsg *m, uint16_t type, const void *data, size_t n)
{
    struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type};
    memcpy(m->b + m->len, &a, sizeof(a));
    if (n)
        memcpy(m->b + m->len + NLA_HDRLEN, data, n);
    m->len += NLA_ALIGN(NLA_HDRLEN + n);
}

static inline void k_u32(struct kmsg *m, uint16_t type, uint32_t v)
{
    k_put(m, type, &v, sizeof(v));
}

static inline void k_u8(struct kmsg *m, uint16_t type, uint8_t v)
{
    k_put(m, type, &v, sizeof(v));
}

static inline void k_str(struct kmsg *m, uint16_t type, const char *s)
{
    k_put(m, type, s, strlen(s) + 1);
}

/* nla_put_u64_64bit: on architectures without efficient unaligned access a pad attribute
 * comes first when the tail is 8-byte aligned (nla_need_padding_for_64bit); x86 has none. */
static inline void k_u64(struct kmsg *m, uint16_t type, uint64_t v, bool pad_arch)
{
    if (pad_arch && m->len % 8 == 0)
        k_put(m, RDMA_NLDEV_ATTR_PAD, NULL, 0);
    k_put(m, type, &v, sizeof(v));
}

/* nla_nest_start (NLA_F_NESTED) or nla_nest_start_noflag; returns where to end it. */
static inline size_t k_nest(struct kmsg *m, uint16_t type, bool flag)
{
    size_t at = m->len;
    k_put(m, (uint16_t)(type | (flag ? NLA_F_NESTED : 0)), NULL, 0);
    return at;
}

static inline void k_nest_end(struct kmsg *m, size_t at)
{
    uint16_t l = (uint16_t)(m->len - at);
    memcpy(m->b + at, &l, sizeof(l));
}

/* fill_nldev_handle */
static inline void k_handle(struct kmsg *m, uint32_t index, const char *name)
{
    k_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX, index);
    k_str(m, RDMA_NLDEV_ATTR_DEV_NAME, name);
}

/* rdma_nl_stat_hwcounter_entry */
static inline void k_hwc(struct kmsg *m, const char *name, uint64_t v, bool pad_arch)
{
    size_t e = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, true);
    k_str(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
    k_u64(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, v, pad_arch);
    k_nest_end(m, e);
}

/* netlink_ack: error (0 for an acknowledgement), the request echoed unless capped (an
 * acknowledgement is always capped), then the extended-ack message if any. */
static inline void k_ack(struct kmsg *m, int err, const void *req, bool cap_ack, const char *ext)
{
    struct nlmsghdr rq;
    memcpy(&rq, req, sizeof(rq));
    bool capped = !err || cap_ack;
    uint16_t flags = (uint16_t)((capped ? NLM_F_CAPPED : 0) | (ext ? NLM_F_ACK_TLVS : 0));
    k_msg(m, NLMSG_ERROR, flags, rq.nlmsg_seq);
    memcpy(m->b + m->len, &err, sizeof(err));
    memcpy(m->b + m->len + sizeof(err), req, capped ? sizeof(rq) : rq.nlmsg_len);
    m->len += NLMSG_ALIGN(sizeof(err) + (capped ? sizeof(rq) : rq.nlmsg_len));
    if (ext)
        k_str(m, NLMSGERR_ATTR_MSG, ext);
    k_end(m);
}

/* The end of a dump. */
static inline void k_done(struct kmsg *m, uint32_t seq, int err)
{
    k_msg(m, NLMSG_DONE, NLM_F_MULTI, seq);
    memcpy(m->b + m->len, &err, sizeof(err));
    m->len += sizeof(err);
    k_end(m);
}

/* Hex text -> bytes; returns the count. */
static inline size_t k_unhex(const char *hex, unsigned char *out, size_t cap)
{
    size_t n = 0;
    for (; hex[0] && hex[1] && n < cap; hex += 2) {
        unsigned v = 0;
        for (int i = 0; i < 2; i++) {
            char c = hex[i];
            v = v * 16 + (unsigned)(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
        }
        out[n++] = (unsigned char)v;
    }
    return n;
}

#endif
