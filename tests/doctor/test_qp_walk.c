/* test_qp_walk: the doctor's queue-pair walk without a device: which try follows a failed one
 * (a GID given and refused before RTS: the port's own choice; messages lost at RTS: the smaller
 * active MTU, then halves; never a value twice, never below 256), and the finding it makes
 * (quiet when the wanted try worked; the failure and the proven fix, or that nothing worked).
 * The walk on the wire is tested in the two Soft-RoCE VMs (tests/vm/doctor_pair.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "engine/run/qp_walk.h"

static struct qp_walk_want want(int path_mtu, int gid, int smaller)
{
    struct qp_walk_want w = {.port = 1,
                             .gid_index = gid,
                             .path_mtu = path_mtu,
                             .smaller_active_mtu = smaller,
                             .dscp = 26,
                             .messages = 5,
                             .timeout = 14,
                             .retry_cnt = 3};
    snprintf(w.dev, sizeof(w.dev), "rxe0");
    return w;
}

/* A try that reached RTS at mtu and lost its first message. */
static struct qp_walk_try lost(int asked, int mtu, int gid)
{
    struct qp_walk_try t = {.path_mtu = asked,
                            .gid_index = gid,
                            .path_mtu_used = mtu,
                            .gid_used = gid < 0 ? 1 : gid,
                            .setup_ok = true,
                            .sent = 1,
                            .bound_s = 1.14,
                            .failed_after_s = 1.07};
    snprintf(t.reached, sizeof(t.reached), "RTS");
    snprintf(t.error, sizeof(t.error),
             "message 1 of 5 (%d bytes) failed after 1.07 s: transport retry counter exceeded",
             mtu);
    snprintf(t.cause, sizeof(t.cause), "transport retry counter exceeded");
    return t;
}

static struct qp_walk_try worked(int asked, int mtu, int gid_used)
{
    struct qp_walk_try t = {.path_mtu = asked,
                            .gid_index = -1,
                            .path_mtu_used = mtu,
                            .gid_used = gid_used,
                            .setup_ok = true,
                            .sent = 5,
                            .delivered = 5,
                            .rtt_p50_us = 1830};
    snprintf(t.reached, sizeof(t.reached), "RTS");
    return t;
}

static void test_next_mtu(void **state)
{
    (void)state;
    struct qp_walk_want w = want(4096, 1, 1024);
    struct qp_walk walk = {.ntries = 1, .works = -1};
    walk.tries[0] = lost(4096, 4096, 1);
    struct qp_walk_try next;
    /* Messages lost at RTS: the smaller active MTU first, the GID kept. */
    assert_int_equal(qp_walk_next(&w, &walk, &walk.tries[0], &next), 1);
    assert_int_equal(next.path_mtu, 1024);
    assert_int_equal(next.gid_index, 1);
    /* That lost too: halves below it, then nothing under 256. */
    walk.tries[walk.ntries++] = lost(1024, 1024, 1);
    assert_int_equal(qp_walk_next(&w, &walk, &walk.tries[1], &next), 1);
    assert_int_equal(next.path_mtu, 512);
    walk.tries[walk.ntries++] = lost(512, 512, 1);
    assert_int_equal(qp_walk_next(&w, &walk, &walk.tries[2], &next), 1);
    assert_int_equal(next.path_mtu, 256);
    walk.tries[walk.ntries++] = lost(256, 256, 1);
    assert_int_equal(qp_walk_next(&w, &walk, &walk.tries[3], &next), 0);
    /* Without the active MTUs known: halves of the one that failed. */
    w = want(4096, 1, 0);
    walk.ntries = 1;
    assert_int_equal(qp_walk_next(&w, &walk, &walk.tries[0], &next), 1);
    assert_int_equal(next.path_mtu, 2048);
}

static void test_next_gid(void **state)
{
    (void)state;
    struct qp_walk_want w = want(1024, 9, 1024);
    struct qp_walk walk = {.ntries = 1, .works = -1};
    struct qp_walk_try *t = &walk.tries[0];
    memset(t, 0, sizeof(*t));
    t->path_mtu = 1024;
    t->gid_index = 9;
    t->gid_used = -1;
    snprintf(t->error, sizeof(t->error), "rxe0 port 1: GID index 9 does not exist");
    struct qp_walk_try next;
    /* Refused before RTS with a GID given: the port's own choice, the MTU kept. */
    assert_int_equal(qp_walk_next(&w, &walk, t, &next), 1);
    assert_int_equal(next.gid_index, -1);
    assert_int_equal(next.path_mtu, 1024);
    /* Refused before RTS with the GID already chosen: nothing a smaller MTU could fix. */
    t->gid_index = -1;
    assert_int_equal(qp_walk_next(&w, &walk, t, &next), 0);
}

static void test_finding(void **state)
{
    (void)state;
    struct qp_walk_want w = want(4096, 1, 1024);
    struct qp_walk walk = {.ntries = 2, .works = 1};
    walk.tries[0] = lost(4096, 4096, 1);
    walk.tries[1] = worked(1024, 1024, 1);
    struct doctor_finding f;
    assert_int_equal(qp_walk_finding(&w, &walk, &f), 1);
    assert_int_equal(f.sev, DOCTOR_ERROR);
    assert_string_equal(f.rule, "qp-walk");
    assert_string_equal(f.local, "path MTU 4096, GID index 1");
    assert_string_equal(f.peer, "path MTU 1024, GID index 1");
    assert_non_null(strstr(f.msg, "reached RTS (rxe0 accepted it), but 0 of 1 messages of 4096 "
                                  "bytes went through: transport retry counter exceeded; "));
    assert_non_null(strstr(f.msg, "proven with path MTU 1024, GID index 1: 5 of 5 messages, "
                                  "round trip p50 1830 us: use path MTU 1024 (the smaller "
                                  "active MTU of both ports)"));
    /* The wanted try worked: no finding. */
    walk.ntries = 1;
    walk.tries[0] = worked(0, 1024, 1);
    walk.works = 0;
    assert_int_equal(qp_walk_finding(&w, &walk, &f), 0);
    /* Nothing worked. */
    walk.ntries = 1;
    walk.tries[0] = lost(4096, 4096, 1);
    walk.works = -1;
    assert_int_equal(qp_walk_finding(&w, &walk, &f), 1);
    assert_string_equal(f.peer, "none worked");
    assert_non_null(strstr(f.msg, "no smaller path MTU or other GID worked either"));
    /* A GID refused at set-up, fixed by the port's own choice. */
    w = want(1024, 9, 1024);
    walk.ntries = 2;
    memset(&walk.tries[0], 0, sizeof(walk.tries[0]));
    walk.tries[0].path_mtu = 1024;
    walk.tries[0].gid_index = 9;
    walk.tries[0].gid_used = -1;
    snprintf(walk.tries[0].error, sizeof(walk.tries[0].error), "GID index 9 does not exist");
    snprintf(walk.tries[0].cause, sizeof(walk.tries[0].cause), "GID index 9 does not exist");
    walk.tries[1] = worked(1024, 1024, 1);
    walk.works = 1;
    assert_int_equal(qp_walk_finding(&w, &walk, &f), 1);
    assert_non_null(strstr(f.msg, "did not get past its device: GID index 9 does not exist"));
    assert_non_null(strstr(f.msg, "use GID index 1"));
}

static void test_json(void **state)
{
    (void)state;
    struct qp_walk walk = {.ntries = 2, .works = 1};
    walk.tries[0] = lost(4096, 4096, 1);
    walk.tries[1] = worked(1024, 1024, 1);
    cJSON *j = qp_walk_json(&walk);
    char *s = cJSON_PrintUnformatted(j);
    assert_non_null(strstr(s, "\"works\":1"));
    assert_non_null(strstr(s, "\"path_mtu_bytes\":4096"));
    assert_non_null(strstr(s, "\"messages_delivered\":5"));
    assert_non_null(strstr(s, "\"rtt_p50_us\":null"));
    cJSON_free(s);
    cJSON_Delete(j);
    char text[1024];
    qp_walk_text(&walk, text, sizeof(text));
    assert_non_null(strstr(text, "queue-pair walk 1: path MTU 4096, GID index 1: INIT -> RTR -> "
                                 "RTS, 0 of 1 messages: message 1 of 5"));
    assert_non_null(strstr(text, "queue-pair walk 2: path MTU 1024, GID index 1: INIT -> RTR -> "
                                 "RTS, 5 of 5 messages of 1024 bytes, round trip p50 1830 us"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_mtu),
        cmocka_unit_test(test_next_gid),
        cmocka_unit_test(test_finding),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
