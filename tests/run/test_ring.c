/* test_ring: a ring all-reduce's arithmetic (engine/flow/ring.h) against NCCL's ring and
 * nccl-tests' all_reduce bus bandwidth: 2 (N - 1) steps of ceil(S / N) bytes, the remainder
 * padded, busbw = algbw x 2 (N - 1) / N; the per-point figures from measured steps; a flow's
 * params refused with the field named; the TCP transport takes op collective with these
 * params and nothing else (a ring across hosts, params.gate, over tcp only); the gate a ring
 * across hosts meets at (engine/flow/ring_gate.h): held by name, one feeder, chunks timed
 * first byte to last, waiters woken, closed, bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "engine/flow/ring.h"
#include "engine/flow/ring_gate.h"
#include "engine/xport/xport.h"

static void test_steps_and_chunks(void **state)
{
    (void)state;
    assert_int_equal(ring_steps(2), 2);
    assert_int_equal(ring_steps(8), 14);
    assert_int_equal(ring_steps(1), 0);
    /* Llama-3.1-70B's decode all-reduce at TP 8: 8192 x 32 x 2 B = 512 KiB, 64 KiB a step. */
    assert_int_equal(ring_chunk(8192 * 32 * 2, 8), 65536);
    assert_int_equal(ring_op_bytes(8192 * 32 * 2, 8), 14 * 65536);
    /* A remainder rounds the chunk up: 1,000,001 B over 4 ranks moves 250,001 B a step. */
    assert_int_equal(ring_chunk(1000001, 4), 250001);
    assert_int_equal(ring_chunk(1000000, 4), 250000);
    assert_int_equal(ring_op_bytes(1000001, 4), 6 * 250001);
    /* Fewer bytes than ranks: every step still moves one byte. */
    assert_int_equal(ring_chunk(3, 8), 1);
    assert_true(ring_busbw_factor(2) == 1.0);
    assert_true(ring_busbw_factor(8) == 14.0 / 8);
    assert_true(ring_busbw_factor(4) == 1.5);
}

static void test_figures(void **state)
{
    (void)state;
    struct ring_acc a = {0}, b = {0}, m = {0};
    /* Two all-reduces of 6 steps (N = 4): 60 us (steps 5..15 us), 120 us (steps 10..30). */
    ring_acc_add(&a, 60000, 6, 60000, 5000, 15000);
    ring_acc_add(&b, 120000, 6, 120000, 10000, 30000);
    ring_acc_merge(&m, &a);
    ring_acc_merge(&m, &b);
    assert_int_equal(m.ops, 2);
    assert_int_equal(m.steps, 12);
    assert_int_equal(m.step_min, 5000);
    assert_int_equal(m.step_max, 30000);
    cJSON *o = ring_figures("tcp", 4, 1000000, &m, NULL);
    const cJSON *r = cJSON_GetObjectItem(o, "ring");
    double v = 0;
    assert_true(jsonutil_num(r, "allreduce_mean_us", &v) && v == 90);
    assert_true(jsonutil_num(r, "step_mean_us", &v) && v == 15);
    assert_true(jsonutil_num(r, "steps_per_allreduce", &v) && v == 6);
    assert_true(jsonutil_num(r, "chunk_bytes", &v) && v == 250000);
    assert_true(jsonutil_num(r, "bytes_per_allreduce_each_way", &v) && v == 1500000);
    /* algbw = 1e6 B / 90 us = 11.11 GB/s; busbw x 1.5. */
    assert_true(jsonutil_num(r, "algbw_GBps", &v) && v > 11.1111 && v < 11.1112);
    double bus = 0;
    assert_true(jsonutil_num(r, "busbw_GBps", &bus) && bus > 16.6666 && bus < 16.6667);
    assert_non_null(strstr(jsonutil_str(r, "pattern"),
                           "ring all-reduce pattern over tcp, 4 ranks emulated between this host "
                           "and its peer"));
    assert_non_null(strstr(jsonutil_str(r, "bandwidth"), "10^9 bytes"));
    cJSON_Delete(o);
    /* Nothing measured: no timed members, the counts 0. */
    o = ring_figures("tcp", 2, 64, NULL, NULL);
    r = cJSON_GetObjectItem(o, "ring");
    assert_null(cJSON_GetObjectItem(r, "step_mean_us"));
    assert_null(cJSON_GetObjectItem(r, "busbw_GBps"));
    assert_true(jsonutil_num(r, "allreduces", &v) && v == 0);
    cJSON_Delete(o);
}

/* A one-flow mix over transport (tcp unless set), op collective, with params text; 0 or the
 * reader's/transport's error, its message in err. */
static const char *transport = "tcp";
static int check(const char *size, const char *params, struct ft_err *err)
{
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "{\"format\": \"fabtop-mix\", \"version\": 1, \"flows\": [{\"name\": \"ar\", "
             "\"transport\": \"%s\", \"op\": \"collective\", \"size\": %s, \"params\": "
             "%s}]}",
             transport, size, params);
    cJSON *j = cJSON_Parse(doc);
    assert_non_null(j);
    struct mix m;
    memset(err, 0, sizeof(*err));
    int rc = mix_from_json(j, "t.json", &m, err);
    cJSON_Delete(j);
    if (rc)
        return rc;
    rc = xport_check_params(&m, err);
    if (!rc)
        rc = xport_tcp.validate(&m.flows[0], err);
    assert_true((xport_tcp.ops >> MIX_OP_COLLECTIVE) & 1);
    if (!rc) {
        struct ring_params p;
        assert_int_equal(ring_params_from(&m.flows[0], &p, err), 0);
        assert_int_equal(p.ranks, 4);
    }
    mix_free(&m);
    return rc;
}

static void test_params(void **state)
{
    (void)state;
    struct ft_err err;
    assert_int_equal(check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 4}", &err), 0);
    assert_int_equal(check("1000000", "{\"collective\": \"all_gather\", \"ranks\": 4}", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "params.collective"));
    assert_int_equal(check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 1}", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "params.ranks"));
    assert_int_equal(check("1000000", "{\"collective\": \"all_reduce\"}", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "params.ranks"));
    assert_int_equal(check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 2.5}", &err),
                     -EINVAL);
    assert_int_equal(check("{\"sweep\": {\"from\": 1024, \"to\": 4096}}",
                           "{\"collective\": \"all_reduce\", \"ranks\": 4}", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "one number"));
    /* A key the ring does not read is refused by name. */
    assert_int_equal(
        check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 4, \"dtype\": \"f\"}", &err),
        -EINVAL);
    assert_non_null(strstr(err.msg, "dtype"));
    /* S may be more than a message; a step may not: 4 GiB over 2 ranks is 2 GiB a step. */
    assert_int_equal(check("4294967296", "{\"collective\": \"all_reduce\", \"ranks\": 2}", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "ring step"));
    /* Across hosts: a gate's name of 1 to 63 characters, one connection; tcp only. */
    assert_int_equal(
        check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 4, \"gate\": \"r1\"}", &err),
        0);
    char params[256];
    snprintf(params, sizeof(params),
             "{\"collective\": \"all_reduce\", \"ranks\": 4, \"gate\": \"%064d\"}", 0);
    assert_int_equal(check("1000000", params, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "params.gate"));
    assert_int_equal(
        check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 4, \"gate\": 7}", &err),
        -EINVAL);
    assert_int_equal(check("1000000",
                           "{\"collective\": \"all_reduce\", \"ranks\": 4, \"gate\": \"r1\"}, "
                           "\"concurrency\": 2",
                           &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "concurrency 1"));
    transport = "verbs";
    assert_int_equal(
        check("1000000", "{\"collective\": \"all_reduce\", \"ranks\": 4, \"gate\": \"r1\"}", &err),
        -EINVAL);
    assert_non_null(strstr(err.msg, "gate"));
    transport = "tcp";
    /* An alltoall: across hosts only, with both ranks' labels. */
    assert_int_equal(check("1000000",
                           "{\"collective\": \"alltoall\", \"ranks\": 4, \"gate\": \"g\", "
                           "\"rank\": 0, \"peer_rank\": 2}",
                           &err),
                     0);
    assert_int_equal(check("1000000", "{\"collective\": \"alltoall\", \"ranks\": 4}", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "across hosts only"));
    assert_int_equal(
        check("1000000", "{\"collective\": \"alltoall\", \"ranks\": 4, \"gate\": \"g\"}", &err),
        -EINVAL);
    assert_non_null(strstr(err.msg, "params.rank and params.peer_rank"));
    assert_int_equal(check("1000000",
                           "{\"collective\": \"alltoall\", \"ranks\": 4, \"gate\": \"g\", "
                           "\"rank\": -1, \"peer_rank\": 2}",
                           &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "params.rank is a rank"));
}

static void *arrive_later(void *arg)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ring_gate_arrived(arg, 0, 300, 1);
    return NULL;
}

static void test_gate(void **state)
{
    (void)state;
    /* One name, one gate, as long as someone holds it. */
    struct ring_gate *a = ring_gate_get("ring-a"), *b = ring_gate_get("ring-a");
    assert_non_null(a);
    assert_ptr_equal(a, b);
    struct ring_gate *rb = ring_gate_get("ring-b");
    assert_ptr_not_equal(a, rb);
    ring_gate_put(ring_gate_get("ring-b")); /* still held once, by rb */
    assert_null(ring_gate_get(""));
    char longid[RING_GATE_ID_MAX + 1];
    memset(longid, 'x', RING_GATE_ID_MAX);
    longid[RING_GATE_ID_MAX] = '\0';
    assert_null(ring_gate_get(longid));
    /* A ring's gate: one feeder of chunks of 100 B, a second refused. */
    assert_int_equal(ring_gate_wait(a, 1, 0), 0); /* no feeder yet */
    assert_int_equal(ring_gate_feed(a, 1, "3", 100), 0);
    assert_int_equal(ring_gate_feed(b, 1, "4", 100), -EBUSY);
    /* A receive of 30 B at t=1000 starts a chunk, 70 B at 1500 ends it (500 ns); 150 B at
     * 2000 ends the second (0 ns: started and ended in it) and starts the third, whose last
     * 50 B come at 2600 (600 ns). */
    ring_gate_arrived(a, 0, 30, 1000);
    ring_gate_arrived(a, 0, 70, 1500);
    ring_gate_arrived(a, 0, 150, 2000);
    ring_gate_arrived(a, 0, 50, 2600);
    struct ring_gate_stats st;
    ring_gate_stats(b, &st);
    assert_int_equal(st.bytes, 300);
    assert_int_equal(st.chunks, 3);
    assert_int_equal(st.arrival_ns, 500 + 0 + 600);
    assert_int_equal(ring_gate_feeder_stats(a, "3", &st), 0);
    assert_int_equal(st.chunks, 3);
    assert_int_equal(ring_gate_feeder_stats(a, "4", &st), -ENOENT);
    /* Waiting: reached at once, not within the time, woken by an arrival, then closed. */
    assert_int_equal(ring_gate_wait(a, 300, 0), 1);
    assert_int_equal(ring_gate_wait(a, 301, 10), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, arrive_later, a), 0);
    assert_int_equal(ring_gate_wait(a, 600, 5000), 1);
    pthread_join(th, NULL);
    ring_gate_close(a, 0);
    assert_int_equal(ring_gate_wait(a, 601, 5000), -ENODATA);
    assert_int_equal(ring_gate_wait(a, 600, 0), 1);
    ring_gate_put(a);
    ring_gate_put(b);
    /* Gone with its last holder: the name gives a fresh gate. */
    struct ring_gate *c = ring_gate_get("ring-a");
    ring_gate_stats(c, &st);
    assert_int_equal(st.bytes, 0);
    /* An all-to-all's gate of 3 feeders: reached when every one brought enough. */
    assert_int_equal(ring_gate_feed(c, 3, "0", 10), 0);
    assert_int_equal(ring_gate_feed(c, 2, "1", 10), -EINVAL); /* another count */
    assert_int_equal(ring_gate_feed(c, 3, "1", 20), -EINVAL); /* another chunk */
    assert_int_equal(ring_gate_feed(c, 3, "0", 10), -EBUSY);  /* the same label */
    assert_int_equal(ring_gate_feed(c, 0, "9", 10), -EINVAL); /* out of range */
    assert_int_equal(ring_gate_feed(c, 3, "1", 10), 1);
    ring_gate_arrived(c, 0, 25, 1);
    ring_gate_arrived(c, 1, 25, 1);
    assert_int_equal(ring_gate_wait(c, 20, 0), 0); /* the third has not joined */
    assert_int_equal(ring_gate_feed(c, 3, "2", 10), 2);
    assert_int_equal(ring_gate_feed(c, 3, "3", 10), -EBUSY);
    ring_gate_arrived(c, 2, 15, 1);
    assert_int_equal(ring_gate_wait(c, 15, 0), 1);
    assert_int_equal(ring_gate_wait(c, 20, 0), 0); /* one brought 15 of 20 */
    ring_gate_close(c, 0);                         /* feeder 0 has its 20: no matter */
    assert_int_equal(ring_gate_wait(c, 20, 0), 0);
    ring_gate_close(c, 2);
    assert_int_equal(ring_gate_wait(c, 20, 0), -ENODATA);
    ring_gate_stats(c, &st);
    assert_int_equal(st.bytes, 65);
    assert_int_equal(st.chunks, 2 + 2 + 1);
    ring_gate_put(c);
    /* An all-to-all's flows as senders: the wait counts their sends too. */
    struct ring_gate *d = ring_gate_get("a2a");
    assert_int_equal(ring_gate_feed(d, 2, "1", 10), 0);
    assert_int_equal(ring_gate_feed(d, 2, "2", 10), 1);
    ring_gate_arrived(d, 0, 10, 1);
    ring_gate_arrived(d, 1, 10, 1);
    assert_int_equal(ring_gate_wait(d, 10, 0), 1); /* no senders joined: the feeders decide */
    assert_int_equal(ring_gate_sender(d, 2), 0);
    assert_int_equal(ring_gate_sender(d, 3), -EINVAL);
    assert_int_equal(ring_gate_sender(d, 2), 1);
    assert_int_equal(ring_gate_sender(d, 2), -EBUSY);
    assert_int_equal(ring_gate_wait(d, 10, 0), 0); /* neither sent its share */
    ring_gate_sent(d, 0, 10);
    assert_int_equal(ring_gate_wait(d, 10, 0), 0); /* one flow still sending */
    ring_gate_sent(d, 1, 10);
    assert_int_equal(ring_gate_wait(d, 10, 0), 1);
    ring_gate_put(d);
    /* At most RING_GATE_MAX at once ("ring-b" is one of them). */
    struct ring_gate *g[RING_GATE_MAX];
    char id[16];
    for (int i = 0; i < RING_GATE_MAX - 1; i++) {
        snprintf(id, sizeof(id), "g%d", i);
        assert_non_null(g[i] = ring_gate_get(id));
    }
    assert_null(ring_gate_get("one-too-many"));
    for (int i = 0; i < RING_GATE_MAX - 1; i++)
        ring_gate_put(g[i]);
    ring_gate_put(rb);
}

/* Across hosts the figures add where the time went and the predecessor's link. */
static void test_figures_hosts(void **state)
{
    (void)state;
    struct ring_acc a = {0};
    /* Two all-reduces of 100 us (N = 4, S = 1 MB, 250 kB chunks), 60 us waiting, 40 sending. */
    ring_acc_add(&a, 100000, 6, 90000, 10000, 20000);
    ring_acc_add(&a, 100000, 6, 90000, 10000, 20000);
    a.wait_ns = 120000;
    a.send_ns = 80000;
    /* 12 chunks of 250,000 B arrived in 240 us in all: 100 Gb/s. */
    struct ring_gate_stats st = {12 * 250000, 12, 240000};
    cJSON *o = ring_figures("tcp", 4, 1000000, &a, &st);
    const cJSON *r = cJSON_GetObjectItem(o, "ring");
    double v = 0;
    assert_non_null(strstr(jsonutil_str(r, "pattern"), "4 ranks on 4 hosts"));
    assert_true(jsonutil_num(r, "wait_share", &v) && v == 0.6);
    assert_true(jsonutil_num(r, "send_share", &v) && v == 0.4);
    const cJSON *p = cJSON_GetObjectItem(r, "from_predecessor");
    assert_true(jsonutil_num(p, "chunks", &v) && v == 12);
    assert_true(jsonutil_num(p, "arrival_Gbps", &v) && v > 99.999 && v < 100.001);
    cJSON_Delete(o);
    /* An all-to-all of S = 1 MB over 4 ranks, two of 100 us: algbw 10 GB/s, busbw x 3/4;
     * 250 kB to and from each peer; this peer's 4 shares arrived in 80 us: 100 Gb/s. */
    struct ring_acc b = {0};
    ring_acc_add(&b, 100000, 1, 100000, 100000, 100000);
    ring_acc_add(&b, 100000, 1, 100000, 100000, 100000);
    b.send_ns = 50000;
    b.wait_ns = 150000;
    struct ring_gate_stats peer = {4 * 250000, 4, 80000};
    o = ring_alltoall_figures("tcp", 4, 1000000, &b, &peer);
    r = cJSON_GetObjectItem(o, "alltoall");
    assert_non_null(
        strstr(jsonutil_str(r, "pattern"), "all-to-all pattern over tcp, 4 ranks on 4"));
    assert_true(jsonutil_num(r, "peer_bytes", &v) && v == 250000);
    assert_true(jsonutil_num(r, "alltoalls", &v) && v == 2);
    assert_true(jsonutil_num(r, "algbw_GBps", &v) && v > 9.9999 && v < 10.0001);
    assert_true(jsonutil_num(r, "busbw_GBps", &v) && v > 7.4999 && v < 7.5001);
    assert_true(jsonutil_num(r, "send_share", &v) && v == 0.25);
    p = cJSON_GetObjectItem(r, "from_peer");
    assert_true(jsonutil_num(p, "arrival_Gbps", &v) && v > 99.999 && v < 100.001);
    cJSON_Delete(o);
    assert_true(ring_alltoall_busbw_factor(8) == 7.0 / 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_and_chunks), cmocka_unit_test(test_figures),
        cmocka_unit_test(test_params),           cmocka_unit_test(test_gate),
        cmocka_unit_test(test_figures_hosts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
