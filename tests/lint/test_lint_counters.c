/* test_lint_counters: the error-counter rules (rising, saturated at each width, reset,
 * never alarming on totals since boot) and topo_lint_sample against synthetic sysfs
 * counter trees: "N/A (no PMA)", unreadable files, counters vanishing between samples,
 * plus the captured trees in ../shared/data when present. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fsutil.h"
#include "lint_fixture.h"
#include "topology/topo_ibcounters.h"

#define HAS(s, sub) assert_non_null(strstr((s), (sub)))

static void add_sample(struct topo_err_samples *s, int port, const char *name, bool ok0,
                       uint64_t v0, bool ok1, uint64_t v1, int width)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->v = realloc(s->v, (size_t)s->cap * sizeof(*s->v));
        assert_non_null(s->v);
    }
    struct topo_err_counter *e = &s->v[s->n++];
    memset(e, 0, sizeof(*e));
    e->port = port;
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->valid0 = ok0;
    e->v0 = v0;
    e->valid1 = ok1;
    e->v1 = v1;
    e->width = width;
}

/* ---- rules on given samples ---- */

static void test_rising_is_error(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    struct topo_err_samples s = {.window_s = 10};
    add_sample(&s, 0, "symbol_error", true, 10, true, 22, 16);
    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "err-counter-rising", TOPO_SEV_ERROR), 1);
    const struct topo_finding *x = fx_find(&f, "err-counter-rising");
    assert_ptr_equal(x, &f.v[0]); /* errors first */
    assert_string_equal(x->object, "mlx5_0 port 1");
    assert_int_equal(x->port, 0);
    assert_int_equal(x->pci, FX_NIC0);
    HAS(x->msg, "symbol_error rose by 12, from 10 to 22 in 10 s (1.2/s): Minor link");
    HAS(x->remedy, "cable");
    assert_int_equal(topo_findings_worst(&f), TOPO_SEV_ERROR);
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    topo_model_free(m);
}

static void test_totals_since_boot_are_quiet(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    struct topo_err_samples s = {.window_s = 10};
    add_sample(&s, 0, "symbol_error", true, 500, true, 500, 16);
    add_sample(&s, 0, "link_downed", true, 3, true, 3, 8);
    add_sample(&s, 1, "port_xmit_discards", true, 65534, true, 65534, 16);
    /* Unreadable at one of the two samples: nothing can be said. */
    add_sample(&s, 1, "port_rcv_errors", false, 0, true, 40, 16);
    add_sample(&s, 1, "link_error_recovery", true, 1, false, 0, 8);
    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(topo_findings_worst(&f), -1);
    assert_int_equal(fx_count(&f, "err-counter-rising", -1), 0);
    assert_int_equal(fx_count(&f, "err-counter-saturated", -1), 0);
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    topo_model_free(m);
}

static void test_reset_is_not_an_increase(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    struct topo_err_samples s = {.window_s = 5};
    add_sample(&s, 0, "symbol_error", true, 500, true, 3, 16);
    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "err-counter-rising", -1), 0);
    assert_int_equal(fx_count(&f, "err-counter-reset", TOPO_SEV_INFO), 1);
    HAS(fx_find(&f, "err-counter-reset")->msg, "from 500 down to 3");
    assert_int_equal(topo_findings_worst(&f), -1);
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    topo_model_free(m);
}

static void test_saturated_each_width(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int width;
        uint64_t max;
    } c[] = {
        {"local_link_integrity_errors", 4, 15},  {"link_downed", 8, 255},
        {"port_xmit_constraint_errors", 8, 255}, {"symbol_error", 16, 65535},
        {"port_xmit_wait", 32, 4294967295u}, /* any width the sample carries */
    };
    struct topo_model *m = fx_ib_node();
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct topo_err_samples s = {.window_s = 1};
        add_sample(&s, 1, c[i].name, true, c[i].max, true, c[i].max, c[i].width);
        add_sample(&s, 0, c[i].name, true, c[i].max - 1, true, c[i].max - 1, c[i].width);
        struct topo_findings f;
        fx_lint(m, &s, &f);
        fx_dump(&f);
        assert_int_equal(fx_count(&f, "err-counter-saturated", TOPO_SEV_WARN), 1);
        assert_int_equal(fx_count(&f, "err-counter-rising", -1), 0);
        const struct topo_finding *x = fx_find(&f, "err-counter-saturated");
        assert_string_equal(x->object, "mlx5_1 port 1");
        HAS(x->msg, "saturated: the real count is unknown");
        HAS(x->msg, c[i].name);
        char bits[32];
        snprintf(bits, sizeof(bits), "%d-bit", c[i].width);
        HAS(x->msg, bits);
        HAS(x->remedy, "perfquery -x -R -C mlx5_1 -P 1");
        topo_findings_free(&f);
        topo_err_samples_free(&s);
    }
    topo_model_free(m);
}

static void test_rising_into_ceiling(void **state)
{
    (void)state;
    struct topo_model *m = fx_ib_node();
    struct topo_err_samples s = {.window_s = 0};
    add_sample(&s, 0, "port_rcv_errors", true, 65530, true, 65535, 16);
    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "err-counter-rising", TOPO_SEV_ERROR), 1);
    assert_int_equal(fx_count(&f, "err-counter-saturated", TOPO_SEV_WARN), 1);
    const struct topo_finding *x = fx_find(&f, "err-counter-rising");
    HAS(x->msg, "rose by at least 5");
    assert_null(strstr(x->msg, "/s")); /* no window, no rate */
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    topo_model_free(m);
}

/* ---- topo_lint_sample on synthetic trees ---- */

#define CNT(dev, port, name) "sys/class/infiniband/" dev "/ports/" port "/counters/" name

static const struct topo_err_counter *entry(const struct topo_err_samples *s, int port,
                                            const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i].port == port && !strcmp(s->v[i].name, name))
            return &s->v[i];
    return NULL;
}

static void test_sample_tree(void **state)
{
    (void)state;
    char root[256];
    fx_tmpdir(root, sizeof(root));
    fx_write(root, CNT("mlx5_0", "1", "symbol_error"), "5\n");
    fx_write(root, CNT("mlx5_0", "1", "link_downed"), "N/A (no PMA)\n");
    fx_write(root, CNT("mlx5_0", "1", "link_error_recovery"), "2\n");
    fx_write(root, CNT("mlx5_0", "1", "local_link_integrity_errors"), "0\n");
    fx_write(root, CNT("mlx5_0", "1", "port_xmit_data"), "123456\n"); /* not an error */
    /* Unreadable: a directory where the file should be (read fails with EISDIR even for
     * root, unlike a chmod 000 file). */
    char path[512];
    snprintf(path, sizeof(path), "%s/" CNT("mlx5_0", "1", "port_rcv_errors"), root);
    assert_int_equal(mkdir(path, 0755), 0);
    /* mlx5_1 has no counters directory at all. */

    struct topo_model *m = fx_ib_node();
    struct topo_err_samples s = {0};
    assert_int_equal(topo_lint_sample(m, root, false, &s), 3);
    assert_int_equal(s.n, 5);
    const struct topo_err_counter *e = entry(&s, 0, "symbol_error");
    assert_non_null(e);
    assert_true(e->valid0);
    assert_int_equal(e->v0, 5);
    assert_int_equal(e->width, 16);
    e = entry(&s, 0, "link_downed");
    assert_non_null(e);
    assert_false(e->valid0); /* "N/A (no PMA)" is not 0 */
    assert_int_equal(e->width, 8);
    e = entry(&s, 0, "port_rcv_errors");
    assert_non_null(e);
    assert_false(e->valid0);
    assert_int_equal(entry(&s, 0, "local_link_integrity_errors")->width, 4);
    assert_null(entry(&s, 0, "port_xmit_data"));
    assert_null(entry(&s, 0, "VL15_dropped")); /* absent file: not a counter here */
    assert_null(entry(&s, 1, "symbol_error"));

    /* Between the samples: errors, the PMA comes back, one counter vanishes. */
    fx_write(root, CNT("mlx5_0", "1", "symbol_error"), "9\n");
    fx_write(root, CNT("mlx5_0", "1", "link_downed"), "3\n");
    snprintf(path, sizeof(path), "%s/" CNT("mlx5_0", "1", "link_error_recovery"), root);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(topo_lint_sample(m, root, true, &s), 3);
    s.window_s = 2;
    e = entry(&s, 0, "symbol_error");
    assert_true(e->valid1);
    assert_int_equal(e->v1, 9);
    e = entry(&s, 0, "link_downed");
    assert_true(e->valid1);
    assert_int_equal(e->v1, 3);
    assert_false(entry(&s, 0, "link_error_recovery")->valid1);
    assert_false(entry(&s, 0, "port_rcv_errors")->valid1);

    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "err-counter-rising", TOPO_SEV_ERROR), 1);
    HAS(fx_find(&f, "err-counter-rising")->msg, "symbol_error rose by 4, from 5 to 9 in 2 s (2/s)");
    assert_int_equal(fx_count(&f, "err-counter-saturated", -1), 0);
    assert_int_equal(fx_count(&f, "err-counter-reset", -1), 0);
    topo_findings_free(&f);

    /* A new first sample starts over. */
    assert_int_equal(topo_lint_sample(m, root, false, &s), 3);
    assert_int_equal(s.n, 4);
    topo_err_samples_free(&s);
    topo_model_free(m);
    fx_rm_rf(root);
}

static void test_sample_saturation_each_width(void **state)
{
    (void)state;
    char root[256];
    fx_tmpdir(root, sizeof(root));
    fx_write(root, CNT("mlx5_1", "1", "local_link_integrity_errors"), "15\n");
    fx_write(root, CNT("mlx5_1", "1", "excessive_buffer_overrun_errors"), "14\n");
    fx_write(root, CNT("mlx5_1", "1", "link_downed"), "255\n");
    fx_write(root, CNT("mlx5_1", "1", "port_rcv_constraint_errors"), "255\n");
    fx_write(root, CNT("mlx5_1", "1", "link_error_recovery"), "254\n");
    fx_write(root, CNT("mlx5_1", "1", "symbol_error"), "65535\n");
    fx_write(root, CNT("mlx5_1", "1", "port_rcv_errors"), "65534\n");
    fx_write(root, CNT("mlx5_1", "1", "port_xmit_wait"), "4294967295\n"); /* not an error */
    struct topo_model *m = fx_ib_node();
    struct topo_err_samples s = {0};
    assert_int_equal(topo_lint_sample(m, root, false, &s), 7);
    assert_int_equal(topo_lint_sample(m, root, true, &s), 7);
    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "err-counter-saturated", TOPO_SEV_WARN), 4);
    assert_int_equal(fx_count(&f, "err-counter-rising", -1), 0);
    static const char *const sat[] = {"local_link_integrity_errors", "link_downed",
                                      "port_rcv_constraint_errors", "symbol_error"};
    for (size_t i = 0; i < 4; i++) {
        bool found = false;
        for (int k = 0; k < f.n; k++)
            found |= !strcmp(f.v[k].rule, "err-counter-saturated") &&
                     !strncmp(f.v[k].msg, sat[i], strlen(sat[i])) && f.v[k].port == 1;
        assert_true(found);
    }
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    topo_model_free(m);
    fx_rm_rf(root);
}

static void test_sample_which_ports(void **state)
{
    (void)state;
    char root[256];
    fx_tmpdir(root, sizeof(root));
    fx_write(root, CNT("mlx5_0", "1", "symbol_error"), "1\n");
    fx_write(root, CNT("mlx5_1", "1", "symbol_error"), "1\n");
    /* RoCE ports have PortCounters too (emulated by the driver): sampled. */
    struct topo_model *m = fx_roce_node();
    struct topo_err_samples s = {0};
    assert_int_equal(topo_lint_sample(m, root, false, &s), 2);
    topo_err_samples_free(&s);
    /* A port of a function without an RDMA device is not sampled. */
    m->nics[1].rdma_dev[0] = '\0';
    assert_int_equal(topo_lint_sample(m, root, false, &s), 1);
    assert_int_equal(s.v[0].port, 0);
    topo_err_samples_free(&s);
    /* No tree at all: nothing, and the second sample is harmless. */
    char none[300];
    snprintf(none, sizeof(none), "%s/absent", root);
    assert_int_equal(topo_lint_sample(m, none, false, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(topo_lint_sample(m, none, true, &s), 0);
    struct topo_findings f;
    fx_lint(m, &s, &f);
    assert_int_equal(fx_count(&f, "err-counter-rising", -1), 0);
    assert_int_equal(fx_count(&f, "err-counter-saturated", -1), 0);
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    assert_int_equal(topo_lint_sample(NULL, root, false, &s), -EINVAL);
    topo_model_free(m);
    fx_rm_rf(root);
}

/* The node_exporter capture: mlx4_0 (port_xmit_discards 5 since boot, port_xmit_wait
 * saturated) and i40iw0 whose every counter reads "N/A (no PMA)". */
static void test_sample_shared_capture(void **state)
{
    (void)state;
    const char *data = getenv("FABTOP_SHARED_DATA");
    char root[1024];
    snprintf(root, sizeof(root), "%s/sysfs-infiniband/node_exporter", data ? data : "");
    if (!data || !fsutil_exists(root, "sys/class/infiniband/mlx4_0")) {
        print_message("shared data not present: skipped\n");
        skip();
    }
    struct topo_model *m = fx_ib_node();
    snprintf(m->nics[0].rdma_dev, sizeof(m->nics[0].rdma_dev), "mlx4_0");
    snprintf(m->nics[1].rdma_dev, sizeof(m->nics[1].rdma_dev), "i40iw0");
    m->ports[1].link_layer = TOPO_LL_ETHERNET;
    int p2 = topo_model_add_port(m);
    m->ports[p2] = m->ports[0];
    m->ports[p2].num = 2;
    m->ports[p2].gids = NULL;
    m->ports[p2].ngids = 0;
    struct topo_err_samples s = {0};
    int n0 = topo_lint_sample(m, root, false, &s);
    assert_true(n0 > 0);
    assert_int_equal(topo_lint_sample(m, root, true, &s), n0);
    int na = 0;
    for (int i = 0; i < s.n; i++)
        if (s.v[i].port == 1) {
            assert_false(s.v[i].valid0);
            assert_false(s.v[i].valid1);
            na++;
        }
    assert_true(na >= 10);
    const struct topo_err_counter *e = entry(&s, 0, "port_xmit_discards");
    assert_non_null(e);
    assert_true(e->valid0 && e->v0 == 5);
    assert_null(entry(&s, 0, "port_xmit_wait"));
    assert_non_null(entry(&s, p2, "link_downed"));
    struct topo_findings f;
    fx_lint(m, &s, &f);
    fx_dump(&f);
    assert_int_equal(fx_count(&f, "err-counter-rising", -1), 0);
    assert_int_equal(fx_count(&f, "err-counter-saturated", -1), 0);
    topo_findings_free(&f);
    topo_err_samples_free(&s);
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rising_is_error),
        cmocka_unit_test(test_totals_since_boot_are_quiet),
        cmocka_unit_test(test_reset_is_not_an_increase),
        cmocka_unit_test(test_saturated_each_width),
        cmocka_unit_test(test_rising_into_ceiling),
        cmocka_unit_test(test_sample_tree),
        cmocka_unit_test(test_sample_saturation_each_width),
        cmocka_unit_test(test_sample_which_ports),
        cmocka_unit_test(test_sample_shared_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
