/* test_path: engine/path/: the path classifier (host, leaf, site, wan) from a quiet phase's
 * minimum RTT, a received TTL and site labels; the hop count from a TTL and its initial value;
 * the queue verdict from both ends' qdisc peaks and the transport's RTT, quiet against loaded,
 * on made-up sample series. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/path/path.h"

static void test_hops(void **state)
{
    (void)state;
    int init;
    assert_int_equal(path_hops_from_ttl(64, &init), 0);
    assert_int_equal(init, 64);
    assert_int_equal(path_hops_from_ttl(63, &init), 1);
    assert_int_equal(path_hops_from_ttl(120, &init), 8);
    assert_int_equal(init, 128);
    assert_int_equal(path_hops_from_ttl(250, &init), 5);
    assert_int_equal(init, 255);
    assert_int_equal(path_hops_from_ttl(0, &init), -1);
    assert_int_equal(path_hops_from_ttl(256, &init), -1);
}

static enum path_class classify(bool lo, double rtt, int ttl, const char *sl, const char *sp)
{
    struct path_evidence e = {.loopback = lo,
                              .have_min_rtt = rtt >= 0,
                              .min_rtt_us = rtt,
                              .ttl = ttl,
                              .same_leaf = -1,
                              .site_local = sl,
                              .site_peer = sp};
    struct path_class_out o;
    assert_int_equal(path_classify(&e, &o), 0);
    assert_true(o.why[0] != '\0');
    return o.cls;
}

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(classify(true, 20, 64, NULL, NULL), PATH_CLASS_HOST);
    /* One bridge, no router: a leaf. */
    assert_int_equal(classify(false, 45, 64, NULL, NULL), PATH_CLASS_LEAF);
    /* One router, near: the same site. */
    assert_int_equal(classify(false, 90, 63, NULL, NULL), PATH_CLASS_SITE);
    /* 6 ms round trip: wide area, whatever the hops. */
    assert_int_equal(classify(false, 6000, 63, NULL, NULL), PATH_CLASS_WAN);
    /* Many routers. */
    assert_int_equal(classify(false, 900, 50, NULL, NULL), PATH_CLASS_WAN);
    /* Labels that differ win over a short RTT; equal labels stay in the site. */
    assert_int_equal(classify(false, 60, 63, "ams", "fra"), PATH_CLASS_WAN);
    assert_int_equal(classify(false, 60, 63, "ams", "ams"), PATH_CLASS_SITE);
    /* Nothing known. */
    assert_int_equal(classify(false, -1, -1, NULL, NULL), PATH_CLASS_UNKNOWN);
    /* A rack path under incast: the loaded phase shows 8 ms of queueing, but the quiet
     * minimum is what classifies it. */
    assert_int_equal(classify(false, 38, 64, NULL, NULL), PATH_CLASS_LEAF);
    /* A fabric that says one leaf. */
    struct path_evidence e = {.have_min_rtt = true, .min_rtt_us = 700, .ttl = -1, .same_leaf = 1};
    struct path_class_out o;
    path_classify(&e, &o);
    assert_int_equal(o.cls, PATH_CLASS_LEAF);
    assert_int_equal(o.hops, -1);
    for (int c = PATH_CLASS_HOST; c <= PATH_CLASS_WAN; c++)
        assert_int_equal(path_class_parse(path_class_str((enum path_class)c)), c);
    assert_int_equal(path_class_parse("rack"), PATH_CLASS_UNKNOWN);
    assert_true(path_class_tight("tp"));
    assert_true(path_class_tight("moe"));
    assert_false(path_class_tight("kv"));
    char w[300];
    path_tight_warning("allreduce", "tp", w, sizeof(w));
    assert_non_null(strstr(w, "keep tightly coupled ranks inside one validated site"));
}

/* A made-up series of qdisc qlen samples (packets) -> its peak, as the counter set keeps. */
static double peak(const double *s, int n)
{
    double p = 0;
    for (int i = 0; i < n; i++)
        p = s[i] > p ? s[i] : p;
    return p;
}

static void test_verdict(void **state)
{
    (void)state;
    static const double calm[] = {0, 1, 0, 2, 1, 0, 3, 0};
    static const double busy[] = {0, 40, 120, 95, 127, 110, 60, 0};
    /* The probe's srtt per interval, quiet then loaded (us). */
    double quiet[] = {31, 29, 30, 33, 30}, loaded[] = {7800, 8100, 7900, 8000, 7950};
    struct path_rtt rtt = {
        .have = true, .quiet_us = path_median(quiet, 5), .loaded_us = path_median(loaded, 5)};
    assert_true(fabs(rtt.quiet_us - 30) < 1e-9);
    struct path_end_queue lq = {.have = true,
                                .netdev = "eth0",
                                .peak_packets = peak(calm, 8),
                                .peak_bytes = 4000,
                                .drops = 0};
    struct path_end_queue pq = lq;
    pq.netdev = "veth1";
    struct path_verdict v;
    path_queue_verdict(&lq, &pq, &rtt, &v);
    assert_int_equal(v.where, PATH_QUEUE_BETWEEN);
    assert_true(v.ratio > 250 && v.ratio < 270);
    assert_non_null(strstr(v.line, "rose 265x"));
    assert_non_null(strstr(v.line, "in the path between them"));
    /* Without the peer's counters: beyond this host, not "between". */
    struct path_end_queue none = {0};
    path_queue_verdict(&lq, &none, &rtt, &v);
    assert_int_equal(v.where, PATH_QUEUE_BEYOND);
    /* This host's qdisc held it. */
    struct path_end_queue lb = lq;
    lb.peak_packets = peak(busy, 8);
    lb.peak_bytes = 190000;
    path_queue_verdict(&lb, &pq, &rtt, &v);
    assert_int_equal(v.where, PATH_QUEUE_LOCAL);
    assert_non_null(strstr(v.line, "this host's qdisc (eth0: 127 packets, 190000 bytes at peak)"));
    /* GSO: 8 super-packets of 64 KiB in the qdisc are 148694 bytes: this host's. */
    struct path_end_queue gso = lq;
    gso.peak_packets = 8;
    gso.peak_bytes = 148694;
    path_queue_verdict(&gso, &pq, &rtt, &v);
    assert_int_equal(v.where, PATH_QUEUE_LOCAL);
    /* The peer's. */
    struct path_end_queue pb = lb;
    pb.netdev = "eth0";
    path_queue_verdict(&lq, &pb, &rtt, &v);
    assert_int_equal(v.where, PATH_QUEUE_PEER);
    assert_non_null(strstr(v.line, "at the peer"));
    /* Both: the larger. */
    pb.peak_packets = 300;
    pb.peak_bytes = 450000;
    path_queue_verdict(&lb, &pb, &rtt, &v);
    assert_int_equal(v.where, PATH_QUEUE_PEER);
    /* The RTT did not rise: no queue. */
    struct path_rtt flat = {.have = true, .quiet_us = 30, .loaded_us = 60};
    path_queue_verdict(&lq, &pq, &flat, &v);
    assert_int_equal(v.where, PATH_QUEUE_NONE);
    /* x3 but only 60 us: not a queue worth naming. */
    struct path_rtt small = {.have = true, .quiet_us = 20, .loaded_us = 80};
    path_queue_verdict(&lq, &pq, &small, &v);
    assert_int_equal(v.where, PATH_QUEUE_NONE);
    struct path_rtt nortt = {0};
    path_queue_verdict(&lq, &pq, &nortt, &v);
    assert_int_equal(v.where, PATH_QUEUE_UNKNOWN);
    assert_true(isnan(v.ratio));
    assert_true(isnan(path_median(NULL, 0)));
    double two[] = {4, 2};
    assert_true(path_median(two, 2) == 3);
}

int main(void)
{
    const struct CMUnitTest t[] = {cmocka_unit_test(test_hops), cmocka_unit_test(test_classify),
                                   cmocka_unit_test(test_verdict)};
    return cmocka_run_group_tests(t, NULL, NULL);
}
