/* test_refs: the shipped reference table (topology/refs/reference.json) loads, every row
 * names its source and what a run must be for it to apply, and it holds the pass lines the
 * issue names (ConnectX-6/7 at 100/200/400 G, H100/H200 all_reduce busbw, Gen4/Gen5 x16 host
 * copies); the reader refuses each kind of bad field with one line naming the row and the
 * field; a row names a model as a whole name or by its PCI ids. */
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
        /* pass lines carry a tolerance and say where it comes from; the others have none */
        assert_true(row->has_tolerance == (row->kind == TOPO_REF_PASS_LINE));
        assert_true(!row->has_tolerance || row->tolerance_basis[0]);
        /* every row can be matched to a run: by its models or PCI ids, or a PCIe link */
        assert_true(row->match.nmodels + row->match.npci_ids > 0 ||
                    !strncmp(row->part, "PCIe ", 5));
    }
    /* the pass lines the issue names, each with its conditions */
    static const struct {
        const char *id, *metric;
        double value, tol, port;
        int gpus;
    } want[] = {
        {"ngc-rdma-write-connectx-6-100g", "rdma_write_bw", 100, 10, 100, 0},
        {"ngc-rdma-write-connectx-6-200g", "rdma_write_bw", 200, 10, 200, 0},
        {"ngc-rdma-write-connectx-7-400g", "rdma_write_bw", 400, 10, 400, 0},
        {"azure-ndv5-ib-write-gdr-connectx-7-400g", "rdma_write_bw", 380, 0, 400, 0},
        {"azure-ndv5-h100-all-reduce-busbw", "nccl_all_reduce_busbw", 460, 0, 0, 8},
        {"azure-ndv5-h200-all-reduce-busbw", "nccl_all_reduce_busbw", 431, 0, 0, 8},
        {"azure-ndv5-h100-host-copy", "host_copy_bw", 48, 0, 0, 0},
        {"azure-ndv4-a100-host-copy", "host_copy_bw", 21, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const struct topo_ref *w = topo_refs_find(&r, want[i].id);
        if (!w)
            fail_msg("no row %s", want[i].id);
        assert_int_equal(w->kind, TOPO_REF_PASS_LINE);
        assert_string_equal(w->metric, want[i].metric);
        assert_true(w->value == want[i].value && w->tolerance_pct == want[i].tol);
        assert_true(w->match.port_gbps == want[i].port && w->match.gpus == want[i].gpus);
        assert_true(!strncmp(w->url, "https://github.com/", 19));
    }
    const struct topo_ref *az = topo_refs_find(&r, "azure-ndv5-ib-write-gdr-connectx-7-400g");
    assert_string_equal(az->match.memory, "gpu");
    assert_true(az->match.min_bytes == 8388608);
    const struct topo_ref *res = topo_refs_find(&r, "nccl-h100-nvls-all-reduce-busbw");
    assert_non_null(res);
    assert_int_equal(res->kind, TOPO_REF_RESULT);
    assert_string_equal(topo_ref_kind_str(res->kind), "result");
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
    "\"tolerance_pct\": 3, \"tolerance_basis\": \"B\", \"document\": \"D\", "                      \
    "\"match\": {\"models\": [\"CX\"], \"port_gbps\": 100}"

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
        {"\"kind\": \"pass_line\"", "\"kind\": \"result\"",
         ".tolerance_pct: a result has no tolerance"},
        {"\"tolerance_basis\": \"B\", ", "", ".tolerance_basis: missing"},
        {"\"match\": {", "\"match\": {\"speed\": 1, ", ".match: unknown key 'speed'"},
        {"\"match\": {", "\"match\": {\"pci_ids\": [\"15b3-1021\"], ",
         ".match.pci_ids[0]: '15b3-1021' is not vvvv:dddd"},
        {"\"models\": [\"CX\"]", "\"models\": \"CX\"", ".match.models: must be an array"},
        {"\"models\": [\"CX\"]",
         "\"models\": [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\"]",
         ".match.models: must be an array of at most 8"},
        {"\"models\": [\"CX\"]", "\"models\": [\"\"]", ".match.models[0]: must be a non-empty"},
        {"\"port_gbps\": 100", "\"port_gbps\": -4", ".match.port_gbps: must be a rate above 0"},
        {"\"port_gbps\": 100", "\"gpus\": 2.5", ".match.gpus: must be a whole number"},
        {"\"port_gbps\": 100", "\"min_bytes\": -1", ".match.min_bytes: must be a size"},
        {"\"port_gbps\": 100", "\"memory\": \"hbm\"", ".match.memory: must be \"gpu\" or"},
        {"\"port_gbps\": 100", "\"algo\": 7", ".match.algo: must be NCCL's algorithm"},
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

/* A row names a model as a whole name ("ConnectX-7" in "MT2910 Family [ConnectX-7]", not
 * in "ConnectX-70"; "H100" not in "GH100"), or by its PCI ids in either case. */
static void test_names(void **state)
{
    (void)state;
    struct topo_ref row = {0};
    row.match.nmodels = 2;
    snprintf(row.match.models[0], sizeof(row.match.models[0]), "ConnectX-7");
    snprintf(row.match.models[1], sizeof(row.match.models[1]), "H100");
    row.match.npci_ids = 1;
    snprintf(row.match.pci_ids[0], sizeof(row.match.pci_ids[0]), "10de:2330");
    assert_true(topo_ref_names(&row, "MT2910 Family [ConnectX-7]"));
    assert_false(topo_ref_names(&row, "MT9999 Family [ConnectX-70]"));
    assert_true(topo_ref_names(&row, "NVIDIA H100 80GB HBM3"));
    assert_false(topo_ref_names(&row, "GH100 [H800]"));
    assert_true(topo_ref_names(&row, "10DE:2330"));
    assert_false(topo_ref_names(&row, "10de:2335"));
    assert_false(topo_ref_names(&row, ""));
    assert_false(topo_ref_names(&row, NULL));
    struct topo_ref none = {0};
    assert_false(topo_ref_names(&none, "ConnectX-7"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_table),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
