/* test_ring: a ring all-reduce's arithmetic (engine/flow/ring.h) against NCCL's ring and
 * nccl-tests' all_reduce bus bandwidth: 2 (N - 1) steps of ceil(S / N) bytes, the remainder
 * padded, busbw = algbw x 2 (N - 1) / N; the per-point figures from measured steps; a flow's
 * params refused with the field named; the TCP transport takes op collective with these
 * params and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "engine/flow/ring.h"
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
    cJSON *o = ring_figures("tcp", 4, 1000000, &m);
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
    o = ring_figures("tcp", 2, 64, NULL);
    r = cJSON_GetObjectItem(o, "ring");
    assert_null(cJSON_GetObjectItem(r, "step_mean_us"));
    assert_null(cJSON_GetObjectItem(r, "busbw_GBps"));
    assert_true(jsonutil_num(r, "allreduces", &v) && v == 0);
    cJSON_Delete(o);
}

/* A one-flow mix over tcp, op collective, with params text; 0 or the reader's/transport's
 * error, its message in err. */
static int check(const char *size, const char *params, struct ft_err *err)
{
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "{\"format\": \"fabtop-mix\", \"version\": 1, \"flows\": [{\"name\": \"ar\", "
             "\"transport\": \"tcp\", \"op\": \"collective\", \"size\": %s, \"params\": %s}]}",
             size, params);
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_and_chunks),
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
