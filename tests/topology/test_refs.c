/* test_refs: the shipped reference table (topology/refs/reference.json) loads and every row
 * names its source; the reader refuses each kind of bad field with one line naming the row
 * and the field. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topology/topo_refs.h"

static void test_shipped_table(void **state)
{
    (void)state;
    const char *src = getenv("FABTOP_SRC");
    char path[1024];
    snprintf(path, sizeof(path), "%s/topology/refs/reference.json", src && *src ? src : ".");
    struct topo_refs r;
    struct ft_err err = {0};
    if (topo_refs_load(path, &r, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(r.n >= 5);
    for (int i = 0; i < r.n; i++) {
        const struct topo_ref *row = &r.rows[i];
        assert_true(row->document[0]);
        assert_true(row->conditions[0]);
        assert_true(row->value > 0);
        assert_true(row->kind == TOPO_REF_PEAK || row->has_tolerance);
    }
    /* H100 SXM NVLink: 900 GB/s both ways = 450 GB/s x 8 = 3600 Gb/s one way, what
     * topo_ceiling_gpu_nvlink gives for the XE8640's H100s (18 links x 25 GB/s). */
    const struct topo_ref *h = topo_refs_find(&r, "h100-sxm-nvlink-peak");
    assert_non_null(h);
    assert_true(fabs(topo_ref_gbps_one_way(h) - 3600) < 1e-9);
    const struct topo_ref *c7 = topo_refs_find(&r, "connectx-7-port-peak");
    assert_non_null(c7);
    assert_true(topo_ref_gbps_one_way(c7) == 400);
    assert_null(topo_refs_find(&r, "no-such-row"));
    topo_refs_free(&r);
}

#define ROW_OK                                                                                     \
    "\"id\": \"x-1\", \"part\": \"P\", \"metric\": \"rdma_write_bw\", \"kind\": \"pass_line\", "   \
    "\"value\": 97, \"unit\": \"Gb/s\", \"direction\": \"one\", \"conditions\": \"C\", "           \
    "\"tolerance_pct\": 3, \"document\": \"D\""

static void refuse(const char *text, const char *want)
{
    struct topo_refs r;
    struct ft_err err = {0};
    int rc = topo_refs_parse(text, strlen(text), "t.json", &r, &err);
    /* -EINVAL for a bad field, jsonutil_parse's code for text that is not JSON */
    if (rc >= 0 || (rc != -EINVAL && strchr(text, '}')))
        fail_msg("accepted or wrong code (%d): %s", rc, text);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' lacks '%s'", err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(r.n, 0);
    assert_null(r.rows);
}

static void test_refusals(void **state)
{
    (void)state;
    struct topo_refs r;
    struct ft_err err = {0};
    const char *ok = "{\"version\": 1, \"rows\": [{" ROW_OK ", \"url\": \"https://x.example/\"}]}";
    assert_int_equal(topo_refs_parse(ok, strlen(ok), "t.json", &r, &err), 0);
    assert_int_equal(r.n, 1);
    assert_true(r.rows[0].has_tolerance && r.rows[0].tolerance_pct == 3);
    assert_string_equal(r.rows[0].url, "https://x.example/");
    topo_refs_free(&r);

    refuse("[1]", "t.json: must be an object");
    refuse("{\"version\": 2, \"rows\": []}", "t.json.version: must be 1");
    refuse("{\"version\": 1, \"row\": []}", "unknown key 'row'");
    refuse("{\"version\": 1, \"rows\": {}}", "t.json.rows: must be an array");
    refuse("{\"version\": 1, \"rows\": [3]}", "t.json: rows[0]: must be an object");
    refuse("{\"version\": 1, \"rows\": [{\"part\": \"P\"}]}", "rows[0].id: missing");
    refuse("{\"version\": 1, \"rows\": [{\"id\": \"A B\"}]}", "rows[0].id: 'A B' may hold only");
    refuse("{\"version\": 1, \"rows\": [{" ROW_OK "}, {" ROW_OK "}]}",
           "rows[1].id: 'x-1' is used by an earlier row");
    refuse("{\"version\": 1, \"rows\": [{" ROW_OK ", \"valu\": 1}]}",
           "rows[0] (id 'x-1'): unknown key 'valu'");
    refuse("{\"version\": 1, \"rows\": [{\"id\": \"x\", \"part\": \"\"}]}",
           "rows[0] (id 'x').part: must be a non-empty string");
    /* each field's own refusal: replace one member of a good row */
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"\"metric\": \"rdma_write_bw\"", "\"metric\": \"speed\"",
         ".metric: 'speed' is not one of"},
        {"\"kind\": \"pass_line\"", "\"kind\": \"target\"", ".kind: 'target' is not pass_line"},
        {"\"unit\": \"Gb/s\"", "\"unit\": \"MB/sec\"", ".unit: 'MB/sec' is not Gb/s"},
        {"\"direction\": \"one\"", "\"direction\": \"up\"", ".direction: 'up' is not one"},
        {"\"value\": 97", "\"value\": -1", ".value: must be a number above 0"},
        {"\"value\": 97", "\"value\": \"97\"", ".value: must be a number above 0"},
        {"\"tolerance_pct\": 3, ", "", ".tolerance_pct: missing"},
        {"\"tolerance_pct\": 3", "\"tolerance_pct\": 75",
         ".tolerance_pct: must be a number from 0"},
        {"\"kind\": \"pass_line\"", "\"kind\": \"peak\"",
         ".tolerance_pct: a peak has no tolerance"},
        {"\"document\": \"D\"", "\"document\": 5", ".document: must be a non-empty string"},
        {"\"conditions\": \"C\", ", "", ".conditions: missing"},
        {"\"document\": \"D\"", "\"document\": \"D\", \"url\": \"http://x\"",
         ".url: must be a string starting with https://"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char row[1024], doc[1200];
        snprintf(row, sizeof(row), "%s", ROW_OK);
        char *at = strstr(row, cases[i].from);
        assert_non_null(at);
        char tail[1024];
        snprintf(tail, sizeof(tail), "%s", at + strlen(cases[i].from));
        snprintf(at, sizeof(row) - (size_t)(at - row), "%s%s", cases[i].to, tail);
        snprintf(doc, sizeof(doc), "{\"version\": 1, \"rows\": [{%s}]}", row);
        refuse(doc, cases[i].want);
    }
    /* not JSON, and a missing file */
    refuse("{\"version\": 1,", "t.json");
    assert_true(topo_refs_load("/nonexistent/ref.json", &r, &err) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_table),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
