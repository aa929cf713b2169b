/* test_agent_fault: fault.inject on an in-process agent with two client keys (two clients):
 * refusals (another client's session, longer than max_fault, max_fault 0, unknown kinds),
 * a peer-kill and a peer-stall that touch only the asking client's own sessions, and a
 * whole drill (engine/run/drill.h) that leaves no descriptor or thread behind. */
#include "tests/ctl/ctltest.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/run/drill.h"
#include "engine/xport/tcp/tcp_drill.h"
#include "engine/xport/xport.h"

struct two {
    struct fx *f;
    struct channel_key ka, kb;
};

static struct two *two_new(double max_fault)
{
    struct two *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    channel_key_random(&t->ka);
    channel_key_random(&t->kb);
    struct agent_cfg cfg;
    agent_cfg_defaults(&cfg);
    cfg.nkeys = 2;
    cfg.keys[0].key = t->ka;
    cfg.keys[1].key = t->kb;
    cfg.max_fault_s = max_fault;
    t->f = fx_new(&cfg, "127.0.0.1", xport_agent_handlers(NULL)); /* tcp.open for a lane */
    return t;
}

static void two_free(struct two *t)
{
    fx_free(t->f);
    free(t);
}

static uint64_t session_of(struct channel_conn *c)
{
    double id = 0;
    assert_true(jsonutil_num(channel_peer_info(c), "session", &id));
    return (uint64_t)id;
}

/* fault.inject; returns the -errno of the reply (0: done), its message in err. */
static int inject(struct channel_conn *c, const char *kind, double for_s, uint64_t session,
                  struct ft_err *err)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "fault.inject");
    cJSON_AddStringToObject(req, "kind", kind);
    cJSON_AddNumberToObject(req, "for_s", for_s);
    if (session)
        cJSON_AddNumberToObject(req, "session", (double)session);
    ft_err_clear(err);
    int rc = channel_request(c, req, &resp, 3000, err);
    cJSON_Delete(resp);
    return rc;
}

static void test_refusals(void **state)
{
    (void)state;
    struct two *t = two_new(5);
    struct channel_conn *a = must_connect(t->f->hp, &t->ka);
    struct channel_conn *actl = must_connect(t->f->hp, &t->ka);
    struct channel_conn *b = must_connect(t->f->hp, &t->kb);
    struct ft_err err = {0};
    /* Another client's session (same address, another key). */
    assert_int_equal(inject(b, "peer-stall", 1, session_of(a), &err), -EPERM);
    assert_non_null(strstr(err.msg, "is not one of this client's test sessions"));
    assert_true(log_wait(&t->f->log, "not one of this client's test sessions", 2000));
    assert_int_equal(inject(b, "peer-kill", 1, session_of(a), &err), -EPERM);
    /* Its own session works as a target. */
    assert_int_equal(inject(actl, "peer-stall", 0.1, session_of(a), &err), 0);
    /* Longer than the cap; an unknown kind; no such session. */
    assert_int_equal(inject(actl, "peer-stall", 6, 0, &err), -EPERM);
    assert_non_null(strstr(err.msg, "6 s is longer than this agent's limit"));
    assert_int_equal(inject(actl, "peer-explode", 1, 0, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown fault kind 'peer-explode'"));
    assert_int_equal(inject(actl, "peer-stall", 1, 999999, &err), -ENOENT);
    sleep_ms(150);
    assert_int_equal(echo_n(a, 1, &err), 0);
    channel_close(a);
    channel_close(actl);
    channel_close(b);
    two_free(t);

    t = two_new(0);
    a = must_connect(t->f->hp, &t->ka);
    assert_int_equal(inject(a, "peer-stall", 1, 0, &err), -EPERM);
    assert_non_null(strstr(err.msg, "takes no faults"));
    channel_close(a);
    two_free(t);
}

static void test_kill_and_stall(void **state)
{
    (void)state;
    struct two *t = two_new(5);
    struct channel_conn *a = must_connect(t->f->hp, &t->ka);
    struct channel_conn *actl = must_connect(t->f->hp, &t->ka);
    struct channel_conn *b = must_connect(t->f->hp, &t->kb);
    struct ft_err err = {0};
    assert_int_equal(inject(actl, "peer-kill", 0.6, 0, &err), 0);
    assert_int_not_equal(echo_n(a, 1, &err), 0); /* ended abruptly */
    channel_close(a);
    assert_int_equal(echo_n(b, 1, &err), 0); /* the other client's session goes on */
    assert_int_equal(echo_n(actl, 1, &err), 0);
    /* New sessions of the faulted client are refused meanwhile, then taken again. */
    struct channel_conn *c = NULL;
    if (channel_connect(t->f->hp, 0, &t->ka, 2000, &c, &err) == 0) {
        assert_int_not_equal(echo_n(c, 1, &err), 0);
        channel_close(c);
    }
    sleep_ms(700);
    a = must_connect(t->f->hp, &t->ka);
    assert_int_equal(echo_n(a, 1, &err), 0);
    assert_true(log_has(&t->f->log, "fault: peer-kill for 0.6 s on 1 session of 127.0.0.1"));

    /* A stall: nothing answers a's session until it ends; b's answers at once. */
    assert_int_equal(inject(actl, "peer-stall", 0.8, 0, &err), 0);
    int64_t t0 = now_ms();
    assert_int_equal(echo_n(b, 1, &err), 0);
    assert_true(now_ms() - t0 < 300);
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "echo");
    assert_int_equal(channel_request(a, req, &resp, 5000, &err), 0);
    cJSON_Delete(resp);
    assert_true(now_ms() - t0 >= 700);
    channel_close(a);
    channel_close(actl);
    channel_close(b);
    two_free(t);
}

/* fault.stats: the requests this client's sessions answered. */
static double answered(struct channel_conn *c)
{
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    cJSON_AddStringToObject(req, "type", "fault.stats");
    struct ft_err err = {0};
    assert_int_equal(channel_request(c, req, &resp, 3000, &err), 0);
    double n = -1;
    assert_true(jsonutil_num(resp, "answered", &n));
    cJSON_Delete(resp);
    return n;
}

/* A request stalled past its lane's deadline is not answered when the stall ends, even while
 * the client, slow to close, still holds the connection: the agent's count stays the
 * client's (the lane abandoned it), and the agent says so in its log. */
static void test_expired_not_answered(void **state)
{
    (void)state;
    struct two *t = two_new(5);
    struct channel_conn *ctl = must_connect(t->f->hp, &t->ka);
    struct channel_conn *fc = must_connect(t->f->hp, &t->ka);
    struct tcp_drill_lane *l = NULL;
    struct ft_err err = {0};
    uint64_t rtt = 0;
    assert_int_equal(tcp_drill_open(ctl, NULL, MIX_OP_PINGPONG, 64, 0, 2, 300, &l, &err), 0);
    assert_int_equal(tcp_drill_request(l, 0, 300, &rtt, &err), 0);
    sleep_ms(50); /* the answer is counted once its last byte is written */
    double a0 = answered(fc);
    assert_true(a0 >= 1);
    assert_int_equal(inject(fc, "peer-stall", 0.6, 0, &err), 0);
    assert_int_equal(tcp_drill_request(l, 0, 300, &rtt, &err), -ETIMEDOUT);
    sleep_ms(700); /* the stall ends while the lane still holds its connection */
    assert_float_equal(answered(fc), a0, 0);
    assert_true(log_wait(&t->f->log, "stalled past the client's 300 ms deadline", 2000));
    tcp_drill_close(l);
    channel_close(ctl);
    channel_close(fc);
    two_free(t);
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A whole drill in this process (its own agent): every descriptor and thread it made is
 * gone afterwards, the accounting is exact and both sides agree. */
static void test_drill_leaves_nothing(void **state)
{
    (void)state;
    const char *src = getenv("FABTOP_SRC");
    if (!src)
        skip();
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/ctl/data/drill-rr.json", src);
    struct mix m;
    struct ft_err err = {0};
    assert_int_equal(mix_load(path, &m, &err), 0);
    /* A blackhole without a namespace is the agent's qp-error, which a TCP flow never sees:
     * refused by the library too, not only by the command line. */
    struct drill_opts bh = {
        .mix = &m, .fault = DRILL_BLACKHOLE, .at_s = 0.3, .for_s = 0.6, .repeat = 1};
    cJSON *bdoc = NULL;
    struct drill_summary bsum;
    assert_int_equal(drill_run(&bh, &bdoc, &bsum, &err), -EINVAL);
    assert_null(bdoc);
    assert_non_null(strstr(err.msg, "a blackhole of a tcp flow needs a network namespace"));
    int fds0 = count_dir("/proc/self/fd"), thr0 = count_dir("/proc/self/task");
    for (int k = 0; k < 2; k++) {
        struct drill_opts o = {.mix = &m,
                               .fault = k ? DRILL_PEER_KILL : DRILL_PEER_STALL,
                               .at_s = 0.3,
                               .for_s = 0.6,
                               .repeat = 2};
        cJSON *doc = NULL;
        struct drill_summary sum;
        int rc = drill_run(&o, &doc, &sum, &err);
        if (rc < 0)
            fprintf(stderr, "drill: %s\n", err.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(sum.drills, 2);
        assert_int_equal(sum.never_recovered, 0);
        assert_int_equal(sum.broke_bound, 0);
        assert_int_equal(sum.disagree, 0);
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "repetitions"))
        {
            const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "flows"), 0);
            const cJSON *rq = cJSON_GetObjectItemCaseSensitive(f, "requests");
            double issued = 0, done = 0, failed = 0, abandoned = 0, hanging = 1;
            jsonutil_num(rq, "issued", &issued);
            jsonutil_num(rq, "completed", &done);
            jsonutil_num(rq, "failed", &failed);
            jsonutil_num(rq, "abandoned", &abandoned);
            jsonutil_num(rq, "hanging", &hanging);
            assert_true(issued == done + failed + abandoned);
            assert_true(hanging == 0);
            assert_true(failed + abandoned == 3); /* one in flight on each connection */
        }
        cJSON_Delete(doc);
    }
    mix_free(&m);
    int fds1 = 0, thr1 = 0;
    for (int i = 0; i < 300; i++) {
        fds1 = count_dir("/proc/self/fd");
        thr1 = count_dir("/proc/self/task");
        if (fds1 == fds0 && thr1 == thr0)
            break;
        sleep_ms(10);
    }
    assert_int_equal(fds1, fds0);
    assert_int_equal(thr1, thr0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_kill_and_stall),
        cmocka_unit_test(test_expired_not_answered),
        cmocka_unit_test(test_drill_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
