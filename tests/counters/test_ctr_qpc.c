/* test_ctr_qpc: binding a flow's queue pairs to an RDMA counter of their own
 * (engine/counters/counters_qp.c) against a stand-in for the kernel's side of the RDMA netlink
 * socket (a thread on the other end of a socketpair answering with replies built as nldev.c builds
 * them, rdmanl_kernel.h). Checked: the requests in order (device dump, mode, one bind with a
 * new counter then binds to it, reads, unbinds of every QP); mlx5's 32-bit per-QP counters
 * wrapping and an unknown counter reset, through the counters' semantics; and one precise
 * reason for every refusal: rdma_rxe's ENOMEM, EPERM, auto mode, a kernel without QP
 * counters, a device missing, a later QP failing (the earlier ones unbound again), no
 * answer; stale replies skipped; a failed read read as n/a. The real kernel's refusal is
 * checked in the Soft-RoCE VM (tests/vm, vm_verbs); no machine here can accept a bind. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/counters/counters_qp.h"
#include "engine/counters/rdmanl.h"
#include "tests/counters/rdmanl_kernel.h"

#define NSTATS 3
#define NREADS 4

struct fk {
    int fd;
    pthread_t th;
    /* what this kernel does */
    const char *dev;
    int mode_err;
    uint32_t mode, mask;
    int bind_err, bind_err_at; /* the bind_err_at-th bind (0-based) fails with bind_err */
    const char *bind_ext;
    int read_err_at, read_err; /* the read_err_at-th read fails (read_err 0: none) */
    bool silent, stale, hide_second_qp;
    uint32_t counter; /* the id it allocates */
    const char *names[NSTATS];
    uint64_t vals[NREADS][NSTATS];
    /* what it saw */
    int nbinds, nunbinds, nreads, nmode, ndumps;
    uint32_t bound[8], bound_counter[8], unbound[8], unbound_counter[8];
    bool bound_new[8];
    int nbound;
};

static bool attr_u32(const unsigned char *msg, uint16_t type, uint32_t *v)
{
    uint32_t len;
    memcpy(&len, msg, 4);
    for (size_t off = NLMSG_HDRLEN; off + 8 <= len;) {
        struct nlattr a;
        memcpy(&a, msg + off, sizeof(a));
        if (a.nla_len < 4)
            return false;
        if (a.nla_type == type && a.nla_len == 8) {
            memcpy(v, msg + off + 4, 4);
            return true;
        }
        off += NLA_ALIGN(a.nla_len);
    }
    return false;
}

static void fk_send(struct fk *k, struct kmsg *m)
{
    if (send(k->fd, m->b, m->len, 0) < 0)
        fprintf(stderr, "fake kernel: send: %s\n", strerror(errno));
}

static void fk_ack(struct fk *k, struct kmsg *m, const unsigned char *req, int err, const char *ext)
{
    k_reset(m);
    k_ack(m, err, req, true, ext);
    fk_send(k, m);
}

static void fk_counter(struct fk *k, struct kmsg *m, uint32_t seq, int read)
{
    k_reset(m);
    k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, seq);
    k_handle(m, 3, k->dev);
    k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, k->counter);
    k_u32(m, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL);
    size_t t = k_nest(m, RDMA_NLDEV_ATTR_RES_QP, true);
    for (int i = 0; i < k->nbound; i++) {
        if (k->hide_second_qp && i == 1)
            continue;
        size_t e = k_nest(m, RDMA_NLDEV_ATTR_RES_QP_ENTRY, true);
        k_u32(m, RDMA_NLDEV_ATTR_RES_LQPN, k->bound[i]);
        k_nest_end(m, e);
    }
    k_nest_end(m, t);
    t = k_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
    int r = read < NREADS ? read : NREADS - 1;
    for (int i = 0; i < NSTATS && k->names[i]; i++)
        k_hwc(m, k->names[i], k->vals[r][i], false);
    k_nest_end(m, t);
    k_end(m);
    fk_send(k, m);
}

static void *fk_main(void *arg)
{
    struct fk *k = arg;
    unsigned char req[512];
    struct kmsg *m = calloc(1, sizeof(*m));
    for (;;) {
        ssize_t n = recv(k->fd, req, sizeof(req), 0);
        if (n <= 0)
            break;
        if (k->silent)
            continue;
        struct nlmsghdr h;
        memcpy(&h, req, sizeof(h));
        if (k->stale) { /* a late answer to an earlier request, then the real one */
            k_reset(m);
            k_ack(m, -EINVAL, req, true, "stale");
            uint32_t old = h.nlmsg_seq - 1;
            memcpy(m->b + offsetof(struct nlmsghdr, nlmsg_seq), &old, 4);
            fk_send(k, m);
        }
        int op = h.nlmsg_type & ((1 << 10) - 1);
        uint32_t v;
        if (op == RDMA_NLDEV_CMD_GET && (h.nlmsg_flags & NLM_F_DUMP)) {
            k->ndumps++;
            k_reset(m);
            k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI, h.nlmsg_seq);
            k_handle(m, 0, "rxe9");
            k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
            k_end(m);
            k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI, h.nlmsg_seq);
            k_handle(m, 3, k->dev);
            k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
            k_end(m);
            fk_send(k, m);
            k_reset(m);
            k_done(m, h.nlmsg_seq, 0);
            fk_send(k, m);
        } else if (op == RDMA_NLDEV_CMD_STAT_GET && attr_u32(req, RDMA_NLDEV_ATTR_STAT_MODE, &v)) {
            k->nmode++;
            if (k->mode_err) {
                fk_ack(k, m, req, k->mode_err, NULL);
                continue;
            }
            k_reset(m);
            k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0, h.nlmsg_seq);
            k_handle(m, 3, k->dev);
            k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
            k_u32(m, RDMA_NLDEV_ATTR_STAT_MODE, k->mode);
            if (k->mode == RDMA_COUNTER_MODE_AUTO)
                k_u32(m, RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, k->mask);
            k_end(m);
            fk_send(k, m);
            fk_ack(k, m, req, 0, NULL);
        } else if (op == RDMA_NLDEV_CMD_STAT_GET) {
            int r = k->nreads++;
            uint32_t c = 0;
            attr_u32(req, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &c);
            if (c != k->counter || !k->nbound) {
                fk_ack(k, m, req, -ENOENT, NULL);
            } else if (k->read_err && r == k->read_err_at) {
                fk_ack(k, m, req, k->read_err, NULL);
            } else {
                fk_counter(k, m, h.nlmsg_seq, r);
                fk_ack(k, m, req, 0, NULL);
            }
        } else if (op == RDMA_NLDEV_CMD_STAT_SET) {
            int i = k->nbinds++;
            uint32_t qpn = 0, c = 0;
            attr_u32(req, RDMA_NLDEV_ATTR_RES_LQPN, &qpn);
            bool fresh = !attr_u32(req, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &c);
            if (i < 8) {
                k->bound_new[i] = fresh;
                k->bound_counter[i] = fresh ? k->counter : c;
            }
            if (k->bind_err && i == k->bind_err_at) {
                fk_ack(k, m, req, k->bind_err, k->bind_ext);
                continue;
            }
            k->bound[k->nbound++] = qpn;
            k_reset(m);
            k_msg(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET), 0, h.nlmsg_seq);
            k_handle(m, 3, k->dev);
            k_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
            k_u32(m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, fresh ? k->counter : c);
            k_u32(m, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
            k_end(m);
            fk_send(k, m);
            fk_ack(k, m, req, 0, NULL);
        } else if (op == RDMA_NLDEV_CMD_STAT_DEL) {
            int i = k->nunbinds++;
            uint32_t qpn = 0, c = 0;
            attr_u32(req, RDMA_NLDEV_ATTR_RES_LQPN, &qpn);
            attr_u32(req, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &c);
            if (i < 8) {
                k->unbound[i] = qpn;
                k->unbound_counter[i] = c;
            }
            fk_ack(k, m, req, 0, NULL);
        } else {
            fk_ack(k, m, req, -EOPNOTSUPP, NULL);
        }
    }
    free(m);
    return NULL;
}

static struct fk *fk_new(void)
{
    struct fk *k = calloc(1, sizeof(*k));
    k->dev = "mlx5_0";
    k->counter = 5;
    return k;
}

static const uint32_t QPNS[] = {0x1a2, 0x1a3};

/* Bind QPNS (nq of them) on dev port 1 with the kernel k; returns the session. */
static struct counters_qp *run_bind(struct fk *k, const char *driver, int nq)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    k->fd = sv[1];
    assert_int_equal(pthread_create(&k->th, NULL, fk_main, k), 0);
    struct counters_qp_opts o = {.dev = k->dev,
                                 .port = 1,
                                 .driver = driver,
                                 .qpns = QPNS,
                                 .nqps = nq,
                                 .label = "fg",
                                 .nl_fd = sv[0],
                                 .timeout_ms = 300};
    return counters_qp_bind(&o);
}

/* Free the session (which closes its end) and wait for the kernel's thread. */
static void finish(struct fk *k, struct counters_qp *q)
{
    counters_qp_free(q);
    pthread_join(k->th, NULL);
    close(k->fd);
}

static const struct counters_value *val(const struct counters_qp *q, const char *name)
{
    int n;
    const struct counters_value *v = counters_qp_values(q, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    fail_msg("no counter %s", name);
    return NULL;
}

static void test_bound_mlx5(void **state)
{
    (void)state;
    struct fk *k = fk_new();
    k->names[0] = "rx_write_requests"; /* Q counter, be32: wraps at 2^32 */
    k->names[1] = "out_of_sequence";
    k->names[2] = "vendor_new_thing"; /* unknown: width unknown, a decrease is a reset */
    uint64_t v[NREADS][NSTATS] = {
        {4294967000ull, 0, 10}, {4294967200ull, 2, 20}, {100, 5, 15}, {100, 5, 15}};
    memcpy(k->vals, v, sizeof(v));
    struct counters_qp *q = run_bind(k, "mlx5_core", 2);
    assert_true(counters_qp_bound(q));
    assert_string_equal(counters_qp_why(q), "");
    assert_int_equal(counters_qp_counter_id(q), 5);
    /* One new counter for the first QP, the second joins it. */
    assert_int_equal(k->ndumps, 1);
    assert_int_equal(k->nmode, 1);
    assert_int_equal(k->nbinds, 2);
    assert_true(k->bound_new[0]);
    assert_false(k->bound_new[1]);
    assert_int_equal(k->bound_counter[1], 5);
    assert_int_equal(k->bound[0], 0x1a2);
    assert_int_equal(k->bound[1], 0x1a3);
    assert_int_equal(k->nreads, 1); /* the reading the deltas start from */
    const struct counters_value *c = val(q, "rx_write_requests");
    assert_int_equal(c->source, COUNTERS_SRC_QP);
    assert_string_equal(c->object, "fg: mlx5_0/1 counter 5");
    assert_true(c->known);
    assert_int_equal(c->width, 32);
    assert_true(c->valid & COUNTERS_V_DELTA);
    assert_true(c->delta == 0);
    assert_int_equal(counters_qp_sample(q), 0);
    assert_int_equal(counters_qp_sample(q), 0);
    c = val(q, "rx_write_requests");
    assert_true(c->valid & COUNTERS_V_DELTA);
    assert_true(c->delta == 200 + 196); /* 4294967200 -> 100 is a wrap past 2^32 */
    assert_false(c->reset_since_mark);
    c = val(q, "out_of_sequence");
    assert_true(c->delta == 5);
    assert_true(c->error_like);
    c = val(q, "vendor_new_thing");
    assert_false(c->known);
    assert_true(c->reset_since_mark);
    assert_true(c->delta == 10 + 15);
    /* The last reading, then every QP unbound from counter 5. */
    assert_int_equal(counters_qp_sample(q), 0);
    assert_int_equal(counters_qp_unbind(q), 0);
    assert_int_equal(k->nunbinds, 2);
    assert_int_equal(k->unbound[0], 0x1a2);
    assert_int_equal(k->unbound[1], 0x1a3);
    assert_int_equal(k->unbound_counter[0], 5);
    assert_int_equal(k->unbound_counter[1], 5);
    cJSON *r = counters_qp_report(q);
    assert_string_equal(jsonutil_str(r, "status"), "bound");
    assert_true(
        !strncmp(jsonutil_str(r, "scope"), "this test's queue pairs: QPs 418, 419 of flow fg", 48));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "reason")));
    double d;
    assert_true(jsonutil_num(r, "counter_id", &d) && d == 5);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "qpns")), 2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "unbound")));
    const cJSON *e;
    bool seen = false;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(r, "counters"))
    {
        if (strcmp(jsonutil_str(e, "name"), "rx_write_requests"))
            continue;
        seen = true;
        assert_string_equal(jsonutil_str(e, "source"), "qp_counter");
        assert_true(jsonutil_num(e, "delta", &d) && d == 396);
        assert_true(jsonutil_num(e, "width", &d) && d == 32);
    }
    assert_true(seen);
    cJSON_Delete(r);
    finish(k, q);
    assert_int_equal(k->nunbinds, 2); /* not again at free */
    free(k);
}

static void test_rxe_refuses(void **state)
{
    (void)state;
    struct fk *k = fk_new();
    k->dev = "rxe0";
    k->bind_err = -ENOMEM; /* what 6.1 answers for rdma_rxe (captured in the VM) */
    struct counters_qp *q = run_bind(k, "rdma_rxe", 2);
    assert_false(counters_qp_bound(q));
    assert_string_equal(counters_qp_errname(q), "ENOMEM");
    assert_non_null(strstr(counters_qp_why(q), "rdma_rxe has no per-QP counters"));
    assert_non_null(strstr(counters_qp_why(q), "not a memory shortage"));
    assert_non_null(strstr(counters_qp_why(q), "QP 418 on rxe0 port 1"));
    assert_null(strchr(counters_qp_why(q), '\n'));
    assert_int_equal(k->nbinds, 1); /* the first refusal ends it */
    int n;
    assert_null(counters_qp_values(q, &n));
    assert_int_equal(n, 0);
    assert_int_equal(counters_qp_sample(q), -ENOTCONN);
    cJSON *r = counters_qp_report(q);
    assert_string_equal(jsonutil_str(r, "status"), "not bound");
    assert_string_equal(jsonutil_str(r, "errno"), "ENOMEM");
    assert_string_equal(jsonutil_str(r, "reason"), counters_qp_why(q));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "counter_id")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "counters")), 0);
    assert_null(cJSON_GetObjectItem(r, "unbound"));
    cJSON_Delete(r);
    finish(k, q);
    assert_int_equal(k->nunbinds, 0);
    free(k);
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *dev, *driver;
        int bind_err, mode_err;
        uint32_t mode, mask;
        const char *errname, *needle;
        int binds;
    } cases[] = {
        {"mlx5_0", "mlx5_core", -EPERM, 0, 0, 0, "EPERM", "needs CAP_NET_ADMIN", 1},
        {"mlx5_0", "mlx5_core", -ENOMEM, 0, 0, 0, "ENOMEM", "no free Q counter set", 1},
        {"bnxt_re0", "bnxt_en", -ENOMEM, 0, 0, 0, "ENOMEM",
         "the driver (bnxt_en) has no per-QP counters", 1},
        {"mlx5_0", "mlx5_core", -EOPNOTSUPP, 0, 0, 0, "EOPNOTSUPP", "has no hw counters at all", 1},
        {"mlx5_0", "mlx5_core", -EINVAL, 0, 0, 0, "EINVAL", "bound to a counter already", 1},
        {"mlx5_0", "mlx5_core", 0, -EINVAL, 0, 0, "EINVAL", "this kernel has no per-QP counters",
         0},
        {"mlx5_0", "mlx5_core", 0, 0, RDMA_COUNTER_MODE_AUTO, RDMA_COUNTER_MASK_QP_TYPE, NULL,
         "auto type on", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fk *k = fk_new();
        k->dev = cases[i].dev;
        k->bind_err = cases[i].bind_err;
        k->mode_err = cases[i].mode_err;
        k->mode = cases[i].mode;
        k->mask = cases[i].mask;
        struct counters_qp *q = run_bind(k, cases[i].driver, 2);
        assert_false(counters_qp_bound(q));
        if (!strstr(counters_qp_why(q), cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, counters_qp_why(q), cases[i].needle);
        if (cases[i].errname)
            assert_string_equal(counters_qp_errname(q), cases[i].errname);
        else
            assert_null(counters_qp_errname(q));
        assert_int_equal(k->nbinds, cases[i].binds);
        finish(k, q);
        assert_int_equal(k->nunbinds, 0);
        free(k);
    }
}

static void test_later_qp_fails(void **state)
{
    (void)state;
    struct fk *k = fk_new();
    k->bind_err = -EINVAL;
    k->bind_err_at = 1;
    k->bind_ext = "QP is already bound";
    struct counters_qp *q = run_bind(k, "mlx5_core", 2);
    assert_false(counters_qp_bound(q));
    /* All or none: the first QP is unbound again, and the reason keeps the kernel's words
     * on the failed bind. */
    assert_int_equal(k->nunbinds, 1);
    assert_int_equal(k->unbound[0], 0x1a2);
    assert_int_equal(k->unbound_counter[0], 5);
    assert_non_null(strstr(counters_qp_why(q), "binding QP 419 to counter 5 (QP 2 of 2) failed"));
    assert_non_null(strstr(counters_qp_why(q), "all of the flow's QPs or none"));
    assert_non_null(strstr(counters_qp_why(q), "the kernel said: QP is already bound"));
    finish(k, q);
    assert_int_equal(k->nunbinds, 1);
    free(k);
}

static void test_device_missing_and_silence(void **state)
{
    (void)state;
    struct fk *k = fk_new();
    k->dev = "mlx5_7";
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    k->fd = sv[1];
    pthread_create(&k->th, NULL, fk_main, k);
    struct counters_qp_opts o = {.dev = "mlx5_0",
                                 .port = 1,
                                 .driver = "mlx5_core",
                                 .qpns = QPNS,
                                 .nqps = 1,
                                 .nl_fd = sv[0],
                                 .timeout_ms = 300};
    struct counters_qp *q = counters_qp_bind(&o); /* the kernel lists rxe9 and mlx5_7 only */
    assert_false(counters_qp_bound(q));
    assert_string_equal(counters_qp_errname(q), "ENODEV");
    assert_non_null(strstr(counters_qp_why(q), "RDMA netlink lists no device mlx5_0"));
    finish(k, q);
    free(k);
    /* No answer at all: a timeout, said as such. */
    k = fk_new();
    k->silent = true;
    q = run_bind(k, "mlx5_core", 1);
    assert_false(counters_qp_bound(q));
    assert_string_equal(counters_qp_errname(q), "ETIMEDOUT");
    assert_non_null(strstr(counters_qp_why(q), "listing the RDMA devices"));
    finish(k, q);
    free(k);
}

static void test_stale_replies_and_failed_read(void **state)
{
    (void)state;
    struct fk *k = fk_new();
    k->stale = true; /* every reply follows an error addressed to the request before */
    k->names[0] = "out_of_sequence";
    uint64_t v[NREADS][NSTATS] = {{0}, {4}, {9}, {9}};
    memcpy(k->vals, v, sizeof(v));
    k->read_err = -EIO;
    k->read_err_at = 1;
    k->hide_second_qp = true;
    struct counters_qp *q = run_bind(k, "mlx5_core", 2);
    assert_true(counters_qp_bound(q));
    /* The failed read: n/a, never 0 or a made-up delta. */
    assert_int_equal(counters_qp_sample(q), -EIO);
    const struct counters_value *c = val(q, "out_of_sequence");
    assert_false(c->valid & COUNTERS_V_VALUE);
    assert_false(c->valid & COUNTERS_V_DELTA);
    assert_int_equal(counters_qp_sample(q), 0);
    c = val(q, "out_of_sequence");
    assert_true(c->valid & COUNTERS_V_VALUE);
    assert_true(c->value == 9);
    assert_false(c->valid & COUNTERS_V_DELTA); /* the growth while unreadable is unknown */
    cJSON *r = counters_qp_report(q);
    char *txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "notes"));
    assert_non_null(strstr(txt, "reading counter 5 (RDMA_NLDEV_CMD_STAT_GET) failed"));
    assert_non_null(strstr(txt, "the kernel lists 1 QP on counter 5, 1 of this flow's 2 missing"));
    free(txt);
    cJSON_Delete(r);
    finish(k, q);
    assert_int_equal(k->nunbinds, 2);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_mlx5),
        cmocka_unit_test(test_rxe_refuses),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_later_qp_fails),
        cmocka_unit_test(test_device_missing_and_silence),
        cmocka_unit_test(test_stale_replies_and_failed_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
