/* test_ctr_rdmanl: RDMA netlink for per-QP counters (engine/counters/rdmanl.c). Requests byte for
 * byte; replies captured from a real kernel (Debian 6.1.0-57-amd64, rdma_rxe in the
 * Soft-RoCE VM, with tests/counters/rdmanl_capture.c: the device dump, the port's counter
 * mode, the port's hw stats after 300 ping-pongs, acknowledgements, and the bind refusals:
 * ENOMEM from rdma_rxe, ENOENT, EINVAL, EPERM unprivileged, capped and echoed); the
 * reply of a bound counter, which no software driver can give, built as nldev.c
 * fill_res_counter_entry() does with rdmanl_kernel.h after that helper has matched the
 * captured replies byte for byte; extended acks, pad attributes, nests without
 * NLA_F_NESTED, and malformed messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/counters/rdmanl.h"
#include "tests/counters/rdmanl_kernel.h"

/* ---- captured (REQ: what fabtop sent; REP: the kernel's answer) ---- */

/* REP dev_dump: one device, then NLMSG_DONE */
static const char cap_dev[] =
    "6c00000001140200010000009f00000008000100000000000900020072786530000000000800030001000000"
    "0c000400763c2201000000000c000600d3bde5feff86f9640c000700d3bde5feff86f96405000e0001000000"
    "050054000000000009004300726f636500000000";
static const char cap_done[] = "1400000003000200010000009f00000000000000";
/* REP mode: mode none, then the acknowledgement */
static const char cap_mode[] =
    "3400000011140000020000009f00000008000100000000000900020072786530000000000800030001000000"
    "08004a0000000000";
static const char cap_mode_ack[] =
    "2400000002000001020000009f0000000000000030000000111405000200000000000000";
/* REQ port_stats: STAT_GET with DEV_INDEX 0, PORT_INDEX 1 and no STAT_RES: the port's hw
 * counters (stat_get_doit_default_counter), in the same STAT_HWCOUNTERS nest as a counter's */
static const char cap_port_stats_req[] =
    "2000000011140500030000000000000008000100000000000800030001000000";
static const char cap_port_stats[] =
    "4c02000011140000030000009f00000008000100000000000900020072786530000000000800030001000000"
    "20025080200051800e00520073656e745f706b74730000000c005300bc0b000000000000200051800e005200"
    "726376645f706b74730000000c005300bc0b00000000000028005180160052006475706c69636174655f7265"
    "71756573740000000c005300020000000000000028005180170052006f75745f6f665f7365715f7265717565"
    "737400000c00530000000000000000002400518011005200726376645f726e725f657272000000000c005300"
    "0000000000000000240051801100520073656e645f726e725f657272000000000c0053000000000000000000"
    "2400518011005200726376645f7365715f657272000000000c00530000000000000000002400518011005200"
    "61636b5f6465666572726564000000000c0053000000000000000000280051801700520072657472795f6578"
    "6365656465645f65727200000c00530000000000000000002c0051801b00520072657472795f726e725f6578"
    "6365656465645f65727200000c00530000000000000000002800518018005200636f6d706c657465725f7265"
    "7472795f657272000c0053000100000000000000200051800d00520073656e645f657272000000000c005300"
    "000000000000000020005180100052006c696e6b5f646f776e6564000c005300000000000000000020005180"
    "0f00520072646d615f73656e647300000c0053005802000000000000200051800f00520072646d615f726563"
    "767300000c0053005802000000000000";
/* `rdma -j statistic show link rxe0/1` right after, in the same guest */
static const struct {
    const char *name;
    uint64_t value;
} cap_port_values[] = {
    {"sent_pkts", 3004},        {"rcvd_pkts", 3004},
    {"duplicate_request", 2},   {"out_of_seq_request", 0},
    {"rcvd_rnr_err", 0},        {"send_rnr_err", 0},
    {"rcvd_seq_err", 0},        {"ack_deferred", 0},
    {"retry_exceeded_err", 0},  {"retry_rnr_exceeded_err", 0},
    {"completer_retry_err", 1}, {"send_err", 0},
    {"link_downed", 0},         {"rdma_sends", 600},
    {"rdma_recvs", 600},
};
/* QP 19 (RC, in INIT on port 1) bound to a new counter: rdma_rxe has no counter ops */
static const char cap_bind_req[] =
    "380000001014050004000000000000000800010000000000080003000100000008004b001300000008004a00"
    "020000000800150013000000";
static const char cap_bind_enomem[] =
    "2400000002000001040000009f000000f4ffffff38000000101405000400000000000000";
/* the same without NETLINK_CAP_ACK: the request comes back whole (seq 8) */
static const char cap_bind_enomem_echo[] =
    "4c00000002000000080000009f000000f4ffffff380000001014050008000000000000000800010000000000"
    "080003000100000008004b001300000008004a00020000000800150013000000";
static const char cap_bind_noqp[] =
    "2400000002000001050000009f000000feffffff38000000101405000500000000000000";
static const char cap_unbind_einval[] =
    "2400000002000001070000009f000000eaffffff38000000121405000700000000000000";
/* unprivileged (setpriv --reuid=65534 --inh-caps=-all): STAT_SET is an admin command */
static const char cap_bind_eperm[] =
    "24000000020000010100000096000000ffffffff38000000101405000100000000000000";

static size_t unhex(const char *h, unsigned char *out, size_t cap)
{
    return k_unhex(h, out, cap);
}

static void assert_bytes(const void *got, size_t glen, const char *want_hex)
{
    unsigned char want[4096];
    size_t wl = unhex(want_hex, want, sizeof(want));
    if (glen != wl || memcmp(got, want, wl)) {
        char g[8200] = "";
        for (size_t i = 0; i < glen && 2 * i + 2 < sizeof(g); i++)
            snprintf(g + 2 * i, 3, "%02x", ((const unsigned char *)got)[i]);
        fail_msg("bytes differ:\n got  %s\n want %s", g, want_hex);
    }
}

static const struct nlmsghdr *msg_of(const char *hex, unsigned char *buf, size_t cap)
{
    unhex(hex, buf, cap);
    return (const struct nlmsghdr *)buf;
}

/* ---- requests ---- */

static void test_requests(void **state)
{
    (void)state;
    unsigned char b[256];
    /* The captured requests, which the kernel answered as meant. */
    assert_bytes(b, rdmanl_build_dev_dump(b, sizeof(b), 1), "10000000011401030100000000000000");
    assert_bytes(b, rdmanl_build_mode_get(b, sizeof(b), 2, 0, 1),
                 "300000001114050002000000000000000800010000000000080003000100000008004b0013000000"
                 "08004a0002000000");
    assert_bytes(b, rdmanl_build_bind(b, sizeof(b), 4, 0, 1, 19, true, 0), cap_bind_req);
    assert_bytes(b, rdmanl_build_counter_get(b, sizeof(b), 6, 0, 1, 0),
                 "300000001114050006000000000000000800010000000000080003000100000008004b0013000000"
                 "08004f0000000000");
    assert_bytes(b, rdmanl_build_unbind(b, sizeof(b), 7, 0, 1, 19, 0),
                 "380000001214050007000000000000000800010000000000080003000100000008004b0013000000"
                 "08004f00000000000800150013000000");
    /* Joining counter 4 (iproute2's `bind ... lqpn 178 cntn 4`): COUNTER_ID 0x4f added;
     * device index 2, port 2. */
    assert_bytes(b, rdmanl_build_bind(b, sizeof(b), 9, 2, 2, 178, false, 4),
                 "400000001014050009000000000000000800010002000000080003000200000008004b0013000000"
                 "08004a000200000008001500b200000008004f0004000000");
    /* Counter id 0 is a real id (restrack ids start at 0): only new_counter leaves it out. */
    size_t l0 = rdmanl_build_bind(b, sizeof(b), 9, 2, 2, 178, false, 0);
    assert_int_equal(l0, 64);
    /* Too small a buffer: 0, never a partial message. */
    assert_int_equal(rdmanl_build_bind(b, 40, 1, 0, 1, 19, true, 0), 0);
    assert_int_equal(rdmanl_build_dev_dump(b, 8, 1), 0);
}

/* ---- the helper against the kernel ---- */

static void test_kernel_helper_matches_captures(void **state)
{
    (void)state;
    struct kmsg *m = calloc(1, sizeof(*m));
    unsigned char req[256];
    /* the device dump entry: fill_dev_info() */
    k_reset(m);
    m->pid = 0x9f;
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI, 1);
    k_handle(m, 0, "rxe0");
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    k_u64(m, RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1223c76ull, false);
    k_u64(m, RDMA_NLDEV_ATTR_NODE_GUID, 0x64f986fffee5bdd3ull, false);
    k_u64(m, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, 0x64f986fffee5bdd3ull, false);
    k_u8(m, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);
    k_u8(m, RDMA_NLDEV_ATTR_DEV_DIM, 0);
    k_str(m, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
    k_end(m);
    assert_bytes(m->b, m->len, cap_dev);
    k_reset(m);
    m->pid = 0x9f;
    k_done(m, 1, 0);
    assert_bytes(m->b, m->len, cap_done);
    /* the mode reply and its acknowledgement */
    k_reset(m);
    m->pid = 0x9f;
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, 2);
    k_handle(m, 0, "rxe0");
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_NONE);
    k_end(m);
    assert_bytes(m->b, m->len, cap_mode);
    rdmanl_build_mode_get(req, sizeof(req), 2, 0, 1);
    k_reset(m);
    m->pid = 0x9f;
    k_ack(m, 0, req, true, NULL);
    assert_bytes(m->b, m->len, cap_mode_ack);
    /* the port's hw stats: the STAT_HWCOUNTERS nest a counter's reply carries too */
    k_reset(m);
    m->pid = 0x9f;
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, 3);
    k_handle(m, 0, "rxe0");
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    size_t t = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
    for (size_t i = 0; i < sizeof(cap_port_values) / sizeof(cap_port_values[0]); i++)
        k_hwc(m, cap_port_values[i].name, cap_port_values[i].value, false);
    k_nest_end(m, t);
    k_end(m);
    assert_bytes(m->b, m->len, cap_port_stats);
    /* errors: capped, and the whole request echoed */
    unhex(cap_bind_req, req, sizeof(req));
    k_reset(m);
    m->pid = 0x9f;
    k_ack(m, -ENOMEM, req, true, NULL);
    assert_bytes(m->b, m->len, cap_bind_enomem);
    rdmanl_build_bind(req, sizeof(req), 8, 0, 1, 19, true, 0);
    k_reset(m);
    m->pid = 0x9f;
    k_ack(m, -ENOMEM, req, false, NULL);
    assert_bytes(m->b, m->len, cap_bind_enomem_echo);
    free(m);
}

/* ---- parsing captured replies ---- */

static void test_parse_captured(void **state)
{
    (void)state;
    unsigned char b[1024];
    uint32_t idx = 99, mode = 99, mask = 99;
    char name[64];
    assert_int_equal(rdmanl_parse_dev(msg_of(cap_dev, b, sizeof(b)), &idx, name, sizeof(name)), 0);
    assert_int_equal(idx, 0); /* the first device's index is 0 */
    assert_string_equal(name, "rxe0");
    int err = 1;
    char ext[64] = "x";
    assert_int_equal(rdmanl_parse_error(msg_of(cap_done, b, sizeof(b)), &err, ext, sizeof(ext)), 0);
    assert_int_equal(err, 0);
    assert_string_equal(ext, "");
    assert_int_equal(rdmanl_parse_mode(msg_of(cap_mode, b, sizeof(b)), &mode, &mask), 0);
    assert_int_equal(mode, RDMA_COUNTER_MODE_NONE);
    assert_int_equal(mask, 0);
    assert_int_equal(rdmanl_parse_error(msg_of(cap_mode_ack, b, sizeof(b)), &err, ext, sizeof(ext)),
                     0);
    assert_int_equal(err, 0);
    static const struct {
        const char *hex;
        int err;
    } errs[] = {{cap_bind_enomem, -ENOMEM},
                {cap_bind_enomem_echo, -ENOMEM},
                {cap_bind_noqp, -ENOENT},
                {cap_unbind_einval, -EINVAL},
                {cap_bind_eperm, -EPERM}};
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
        err = 0;
        assert_int_equal(
            rdmanl_parse_error(msg_of(errs[i].hex, b, sizeof(b)), &err, ext, sizeof(ext)), 0);
        assert_int_equal(err, errs[i].err);
        assert_string_equal(ext, "");
    }
    assert_string_equal(rdmanl_errno_name(-ENOMEM), "ENOMEM");
    assert_string_equal(rdmanl_errno_name(EPERM), "EPERM");
    /* A data message is no error message. */
    assert_int_equal(rdmanl_parse_error(msg_of(cap_mode, b, sizeof(b)), &err, NULL, 0), -EBADMSG);
    /* The port stats request the kernel answered: DEV_INDEX and PORT_INDEX only. */
    unsigned char r[64];
    size_t rl = rdmanl_build_counter_get(r, sizeof(r), 3, 0, 1, 0);
    assert_int_equal(rl - 16, unhex(cap_port_stats_req, b, sizeof(b)));
    assert_memory_equal(r + 4, b + 4, rl - 16 - 4);
}

/* A bound counter's reply as fill_res_counter_entry() builds it: handle, PORT_INDEX,
 * STAT_COUNTER_ID, STAT_MODE, RES_QP { RES_QP_ENTRY { RES_LQPN } }, STAT_HWCOUNTERS. */
static void counter_reply(struct kmsg *m, uint32_t seq, uint32_t id, const uint32_t *qpns, int nq,
                          bool nested_flag, bool pad_arch)
{
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, seq);
    k_handle(m, 3, "mlx5_0");
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL);
    size_t t = k_nest(m, RDMA_NLDEV_ATTR_RES_QP, nested_flag);
    for (int i = 0; i < nq; i++) {
        size_t e = k_nest(m, RDMA_NLDEV_ATTR_RES_QP_ENTRY, nested_flag);
        k_u32(m, RDMA_NLDEV_ATTR_RES_LQPN, qpns[i]);
        k_nest_end(m, e);
    }
    k_nest_end(m, t);
    t = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, nested_flag);
    k_hwc(m, "rx_write_requests", 4294967295ull, pad_arch);
    k_hwc(m, "out_of_sequence", 3, pad_arch);
    k_hwc(m, "local_ack_timeout_err", 0x123456789abcull, pad_arch);
    k_nest_end(m, t);
    k_end(m);
}

static void test_parse_counter(void **state)
{
    (void)state;
    struct kmsg *m = calloc(1, sizeof(*m));
    struct rdmanl_counter *c = calloc(1, sizeof(*c));
    static const uint32_t qpns[] = {0x1a2, 0x1a3};
    for (int v = 0; v < 4; v++) {
        bool flag = v & 1, pad = v & 2;
        k_reset(m);
        counter_reply(m, 5, 4, qpns, 2, flag, pad);
        assert_int_equal(rdmanl_parse_counter((const struct nlmsghdr *)m->b, c), 0);
        assert_int_equal(c->id, 4);
        assert_int_equal(c->dev_index, 3);
        assert_int_equal(c->port, 1);
        assert_string_equal(c->dev_name, "mlx5_0");
        assert_true(c->have_mode);
        assert_int_equal(c->mode, RDMA_COUNTER_MODE_MANUAL);
        assert_int_equal(c->nqps, 2);
        assert_int_equal(c->qpns[0], 0x1a2);
        assert_int_equal(c->qpns[1], 0x1a3);
        assert_int_equal(c->nstats, 3);
        assert_string_equal(c->stats[0].name, "rx_write_requests");
        assert_true(c->stats[0].value == 4294967295ull);
        assert_true(c->stats[2].value == 0x123456789abcull);
        assert_false(c->stats_truncated);
    }
    /* The captured port stats carry no counter id: not a counter's reply. */
    unsigned char b[1024];
    assert_int_equal(rdmanl_parse_counter(msg_of(cap_port_stats, b, sizeof(b)), c), -EBADMSG);
    /* ... but with one spliced in (the attributes are the same otherwise), every captured
     * value reads as iproute2 read it. */
    k_reset(m);
    size_t l = unhex(cap_port_stats, m->b, sizeof(m->b));
    /* header 16, DEV_INDEX 8, DEV_NAME 12, PORT_INDEX 8: the counter id goes at 44 */
    memmove(m->b + 52, m->b + 44, l - 44);
    struct nlattr a = {.nla_len = 8, .nla_type = RDMA_NLDEV_ATTR_STAT_COUNTER_ID};
    uint32_t id = 9;
    memcpy(m->b + 44, &a, 4);
    memcpy(m->b + 48, &id, 4);
    uint32_t nl = (uint32_t)l + 8;
    memcpy(m->b, &nl, 4);
    assert_int_equal(rdmanl_parse_counter((const struct nlmsghdr *)m->b, c), 0);
    assert_int_equal(c->id, 9);
    assert_int_equal(c->nqps, 0);
    assert_false(c->have_mode);
    assert_int_equal(c->nstats, (int)(sizeof(cap_port_values) / sizeof(cap_port_values[0])));
    for (int i = 0; i < c->nstats; i++) {
        assert_string_equal(c->stats[i].name, cap_port_values[i].name);
        assert_true(c->stats[i].value == cap_port_values[i].value);
    }
    free(m);
    free(c);
}

static void test_parse_bind_and_unknown(void **state)
{
    (void)state;
    struct kmsg *m = calloc(1, sizeof(*m));
    /* nldev_stat_set_doit(): handle, PORT_INDEX, then STAT_COUNTER_ID and RES_LQPN; an
     * attribute newer than this build (type 0x7fff) is skipped. */
    k_reset(m);
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET), 0, 4);
    k_handle(m, 3, "mlx5_0");
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    k_u32(m, 0x7fff, 1);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, 0);
    k_u32(m, RDMA_NLDEV_ATTR_RES_LQPN, 178);
    k_end(m);
    uint32_t c = 99, q = 0;
    assert_int_equal(rdmanl_parse_bind((const struct nlmsghdr *)m->b, &c, &q), 0);
    assert_int_equal(c, 0);
    assert_int_equal(q, 178);
    /* auto mode with its mask */
    k_reset(m);
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, 2);
    k_handle(m, 3, "mlx5_0");
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_AUTO);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, RDMA_COUNTER_MASK_QP_TYPE);
    k_end(m);
    uint32_t mode, mask;
    assert_int_equal(rdmanl_parse_mode((const struct nlmsghdr *)m->b, &mode, &mask), 0);
    assert_int_equal(mode, RDMA_COUNTER_MODE_AUTO);
    assert_int_equal(mask, RDMA_COUNTER_MASK_QP_TYPE);
    free(m);
}

static void test_extended_ack(void **state)
{
    (void)state;
    struct kmsg *m = calloc(1, sizeof(*m));
    unsigned char req[128];
    rdmanl_build_bind(req, sizeof(req), 12, 3, 1, 178, true, 0);
    static const char text[] = "Modifying auto mode is not allowed when there is a bound QP";
    for (int cap = 0; cap < 2; cap++) {
        k_reset(m);
        k_ack(m, -EBUSY, req, cap, text);
        int err = 0;
        char msg[160];
        assert_int_equal(rdmanl_parse_error((const struct nlmsghdr *)m->b, &err, msg, sizeof(msg)),
                         0);
        assert_int_equal(err, -EBUSY);
        assert_string_equal(msg, text);
        /* truncated to the caller's buffer */
        char small[10];
        rdmanl_parse_error((const struct nlmsghdr *)m->b, &err, small, sizeof(small));
        assert_string_equal(small, "Modifying");
    }
    free(m);
}

static void test_malformed(void **state)
{
    (void)state;
    struct kmsg *m = calloc(1, sizeof(*m));
    struct rdmanl_counter *c = calloc(1, sizeof(*c));
    static const uint32_t qpns[] = {7};
    /* an attribute longer than the message */
    k_reset(m);
    counter_reply(m, 5, 4, qpns, 1, true, false);
    uint16_t big = 0x7000;
    memcpy(m->b + NLMSG_HDRLEN, &big, 2);
    assert_int_equal(rdmanl_parse_counter((const struct nlmsghdr *)m->b, c), -EBADMSG);
    /* a u32 too short */
    k_reset(m);
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET), 0, 4);
    k_put(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, "\1\2", 2);
    k_end(m);
    uint32_t id, q;
    assert_int_equal(rdmanl_parse_bind((const struct nlmsghdr *)m->b, &id, &q), -EBADMSG);
    /* a hw stat entry without its value */
    k_reset(m);
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, 5);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, 4);
    size_t t = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
    size_t e = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, true);
    k_str(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "out_of_sequence");
    k_nest_end(m, e);
    k_nest_end(m, t);
    k_end(m);
    assert_int_equal(rdmanl_parse_counter((const struct nlmsghdr *)m->b, c), -EBADMSG);
    /* an error message cut short */
    k_reset(m);
    k_msg(m, NLMSG_ERROR, 0, 1);
    k_end(m);
    int err;
    assert_int_equal(rdmanl_parse_error((const struct nlmsghdr *)m->b, &err, NULL, 0), -EBADMSG);
    /* more stats than kept: the rest counted as truncated, not an error */
    k_reset(m);
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, 5);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, 4);
    t = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
    for (int i = 0; i < RDMANL_MAX_STATS + 3; i++) {
        char nm[16];
        snprintf(nm, sizeof(nm), "c%d", i);
        k_hwc(m, nm, (uint64_t)i, false);
    }
    k_nest_end(m, t);
    k_end(m);
    assert_int_equal(rdmanl_parse_counter((const struct nlmsghdr *)m->b, c), 0);
    assert_int_equal(c->nstats, RDMANL_MAX_STATS);
    assert_true(c->stats_truncated);
    free(m);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests),
        cmocka_unit_test(test_kernel_helper_matches_captures),
        cmocka_unit_test(test_parse_captured),
        cmocka_unit_test(test_parse_counter),
        cmocka_unit_test(test_parse_bind_and_unknown),
        cmocka_unit_test(test_extended_ack),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
