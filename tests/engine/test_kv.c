/* The KV-transfer builder (engine/flow/kv): descriptors per engine and layout, runs of
 * contiguous pages, layer blocks, prefix reuse from a Mooncake-format trace, params and trace
 * errors naming the field, arrival gaps. Pure functions, no network. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/flow/kv.h"
#include "engine/flow/mix.h"
#include "engine/xport/xport.h"

static struct kv_params params_of(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    struct kv_params p;
    struct ft_err e = {0};
    int rc = kv_params_from_json(o, "kv", &p, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    assert_int_equal(rc, 0);
    cJSON_Delete(o);
    return p;
}

static void refused(const char *json, const char *field)
{
    cJSON *o = cJSON_Parse(json);
    struct kv_params p;
    struct ft_err e = {0};
    assert_int_equal(kv_params_from_json(o, "kv", &p, &e), -EINVAL);
    if (!strstr(e.msg, field))
        fail_msg("\"%s\" does not name %s", e.msg, field);
    assert_non_null(strstr(e.msg, "flow kv:"));
    cJSON_Delete(o);
}

static void test_vllm_flash(void **state)
{
    (void)state;
    struct kv_params p = params_of("{\"engine\": \"vllm\", \"layers\": 2, \"pages\": 4}");
    assert_int_equal(p.layout, KV_LAYOUT_FLASH);
    uint32_t pages[8];
    int n = kv_request_pages(&p, NULL, NULL, pages, 8);
    assert_int_equal(n, 4);
    long nd = kv_build(&p, 4096, pages, n, NULL, 0);
    assert_int_equal(nd, 2 * 2 * 4); /* (layer, K or V, page) */
    struct kv_desc d[16];
    kv_build(&p, 4096, pages, n, d, 16);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(d[i].len, 4096);
        assert_int_equal(d[i].npages, 1);
        for (int j = 0; j < i; j++)
            assert_true(d[i].offset != d[j].offset); /* no two in one place */
    }
    assert_int_equal(d[0].kv, 0);
    assert_int_equal(d[4].kv, 1); /* layer 0's V after its K pages */
    assert_int_equal(d[8].layer, 1);
    /* A cap smaller than the list: counted in full, written up to the cap. */
    assert_int_equal(kv_build(&p, 4096, pages, n, d, 3), 16);
}

static void test_vllm_flashinfer_and_mla(void **state)
{
    (void)state;
    uint32_t pages[] = {0, 1, 2, 3};
    struct kv_params p = params_of("{\"layers\": 2, \"layout\": \"flashinfer\"}");
    assert_int_equal(kv_build(&p, 8192, pages, 4, NULL, 0), 2 * 4); /* (layer, page) */
    struct kv_desc d[8];
    kv_build(&p, 8192, pages, 4, d, 8);
    assert_int_equal(d[0].kv, 2); /* K and V together */
    p = params_of("{\"layers\": 3, \"layout\": \"mla\"}");
    assert_int_equal(kv_build(&p, 18432, pages, 4, NULL, 0), 3 * 4);
}

static void test_sglang_runs(void **state)
{
    (void)state;
    struct kv_params p = params_of("{\"engine\": \"sglang\", \"layers\": 2, \"run_pages\": 2}");
    assert_int_equal(p.layout, KV_LAYOUT_FLASHINFER); /* SGLang keeps K and V together */
    uint32_t pages[] = {0, 1, 2, 5, 6, 9};
    /* Runs: [0 1] [2] [5 6] [9]: a run ends at run_pages and where pages stop being
     * contiguous (reused blocks skipped). */
    long nd = kv_build(&p, 1000, pages, 6, NULL, 0);
    assert_int_equal(nd, 2 * 4);
    struct kv_desc d[8];
    kv_build(&p, 1000, pages, 6, d, 8);
    uint64_t want_len[] = {2000, 1000, 2000, 1000};
    uint32_t want_page[] = {0, 2, 5, 9};
    uint64_t total = 0;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(d[i].len, want_len[i % 4]);
        assert_int_equal(d[i].page, want_page[i % 4]);
        assert_int_equal(d[i].layer, (uint32_t)(i / 4));
        total += d[i].len;
    }
    assert_int_equal(total, 2 * 6 * 1000); /* every page of every layer, once */
    /* K and V apart: one per (layer, K or V, run). */
    p = params_of(
        "{\"engine\": \"sglang\", \"layout\": \"flash\", \"layers\": 2, \"run_pages\": 16}");
    assert_int_equal(kv_build(&p, 1000, pages, 6, NULL, 0), 2 * 2 * 3);
}

static void test_trtllm_blocks(void **state)
{
    (void)state;
    struct kv_params p = params_of("{\"engine\": \"trtllm\", \"layout\": \"flash\", \"layers\": 5, "
                                   "\"layers_per_block\": 2}");
    uint32_t pages[] = {0, 1, 2};
    /* Blocks of layers [0 1] [2 3] [4], one descriptor per (block, page), K and V inside. */
    long nd = kv_build(&p, 100, pages, 3, NULL, 0);
    assert_int_equal(nd, 3 * 3);
    struct kv_desc d[9];
    kv_build(&p, 100, pages, 3, d, 9);
    assert_int_equal(d[0].len, 100 * 2 * 2);
    assert_int_equal(d[0].nlayers, 2);
    assert_int_equal(d[8].len, 100 * 2 * 1); /* the last block holds one layer */
    assert_int_equal(d[8].layer, 4);
    p = params_of("{\"engine\": \"trtllm\", \"layers\": 4}"); /* all layers in one block */
    assert_int_equal(kv_build(&p, 100, pages, 3, NULL, 0), 3);
}

static void test_prefix_reuse(void **state)
{
    (void)state;
    struct kv_params p = params_of("{\"page_tokens\": 16, \"layers\": 1, \"layout\": \"mla\"}");
    struct kv_trace_rec a, b, c;
    struct ft_err e = {0};
    assert_int_equal(kv_trace_parse_line("{\"timestamp\": 0, \"input_length\": 1024, "
                                         "\"output_length\": 10, \"hash_ids\": [1, 2]}",
                                         &a, &e),
                     0);
    assert_int_equal(kv_trace_parse_line("{\"timestamp\": 5, \"input_length\": 1500, "
                                         "\"output_length\": 10, \"hash_ids\": [1, 2, 3]}",
                                         &b, &e),
                     0);
    assert_int_equal(kv_trace_parse_line("{\"timestamp\": 9, \"input_length\": 600, "
                                         "\"output_length\": 10, \"hash_ids\": [1, 4]}",
                                         &c, &e),
                     0);
    assert_int_equal(b.t_ns, 5000000);
    struct kv_seen seen = {0};
    uint32_t pages[128];
    assert_int_equal(kv_request_pages(&p, &a, &seen, pages, 128), 64);
    /* b: blocks 1 and 2 already moved (tokens 0-1023, pages 0-63): pages 64-93 remain. */
    int n = kv_request_pages(&p, &b, &seen, pages, 128);
    assert_int_equal(n, 94 - 64);
    assert_int_equal(pages[0], 64);
    assert_int_equal(pages[n - 1], 93);
    /* Without the seen set (no reuse): all 94. */
    assert_int_equal(kv_request_pages(&p, &b, NULL, pages, 128), 94);
    /* c with 100-token pages: page 5 (tokens 500-599) straddles block 1 (reused) and block 2
     * (new, hash 4): it moves. */
    p.page_tokens = 100;
    n = kv_request_pages(&p, &c, &seen, pages, 128);
    assert_int_equal(n, 1);
    assert_int_equal(pages[0], 5);
    /* Too small an output. */
    struct kv_seen none = {0};
    p.page_tokens = 16;
    assert_int_equal(kv_request_pages(&p, &b, &none, pages, 10), -E2BIG);
    kv_seen_free(&seen);
    kv_seen_free(&none);
    free(a.hash);
    free(b.hash);
    free(c.hash);
}

static void test_trace_errors(void **state)
{
    (void)state;
    struct kv_trace_rec r;
    struct ft_err e = {0};
    assert_int_equal(kv_trace_parse_line("{\"timestamp\": 0, \"input_length\": 1025, "
                                         "\"output_length\": 1, \"hash_ids\": [1, 2]}",
                                         &r, &e),
                     -EINVAL);
    assert_non_null(strstr(e.msg, "hash_ids"));
    ft_err_clear(&e);
    assert_int_equal(kv_trace_parse_line("{\"input_length\": 1, \"output_length\": 1, "
                                         "\"hash_ids\": [1]}",
                                         &r, &e),
                     -EINVAL);
    assert_non_null(strstr(e.msg, "timestamp"));
    /* A file: line numbers in the message, timestamps in order. */
    char path[] = "/tmp/test_kv_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *txt = "{\"timestamp\": 100, \"input_length\": 10, \"output_length\": 1, "
                      "\"hash_ids\": [7]}\n"
                      "{\"timestamp\": 50, \"input_length\": 10, \"output_length\": 1, "
                      "\"hash_ids\": [8]}\n";
    assert_int_equal(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
    close(fd);
    struct kv_trace t;
    ft_err_clear(&e);
    assert_int_equal(kv_trace_load(path, &t, &e), -EINVAL);
    assert_non_null(strstr(e.msg, ":2: timestamp goes backwards"));
    FILE *fp = fopen(path, "w");
    fputs("{\"timestamp\": 100, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [7]}\n"
          "\n{\"timestamp\": 350, \"input_length\": 513, \"output_length\": 1, "
          "\"hash_ids\": [7, 9]}\n",
          fp);
    fclose(fp);
    ft_err_clear(&e);
    assert_int_equal(kv_trace_load(path, &t, &e), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.rec[0].t_ns, 0); /* from the first request */
    assert_int_equal(t.rec[1].t_ns, 250000000);
    kv_trace_free(&t);
    unlink(path);
    ft_err_clear(&e);
    assert_true(kv_trace_load("/nonexistent/kv.jsonl", &t, &e) < 0);
    assert_non_null(strstr(e.msg, "/nonexistent/kv.jsonl"));
}

static void test_params_errors(void **state)
{
    (void)state;
    refused("{\"engine\": \"mooncake\"}", "params.engine");
    refused("{\"layout\": \"paged\"}", "params.layout");
    refused("{\"depth\": 0}", "params.depth");
    refused("{\"depth\": 2.5}", "params.depth");
    refused("{\"qps\": 1000}", "params.qps");
    refused("{\"depth\": 8, \"doorbell_batch\": 16}", "params.doorbell_batch");
    refused("{\"layers\": 2, \"layers_per_block\": 3}", "params.layers_per_block");
    refused("{\"arrival\": {\"process\": \"poisson\"}}", "params.arrival.rate_per_s");
    refused("{\"arrival\": {\"process\": \"trace\"}}", "params.arrival.trace");
    refused("{\"arrival\": {\"process\": \"burst\"}}", "params.arrival.process");
    refused("{\"arrival\": {\"rate\": 5}}", "rate");
    refused("{\"arrival\": {\"trace\": \"x.jsonl\"}}", "params.arrival.trace");
    struct kv_params p = params_of(NULL);
    assert_int_equal(p.engine, KV_ENGINE_VLLM);
    assert_int_equal(p.depth, 64);
    cJSON *j = kv_params_to_json(&p);
    char *txt = cJSON_PrintUnformatted(j);
    struct kv_params q = params_of(txt); /* what the results record reads back */
    assert_memory_equal(&p, &q, sizeof(p));
    free(txt);
    cJSON_Delete(j);
}

static void test_gaps(void **state)
{
    (void)state;
    struct kv_params p = params_of("{\"arrival\": {\"process\": \"fixed\", \"rate_per_s\": 100}}");
    uint64_t rng = 1;
    assert_int_equal(kv_next_gap_ns(&p, 2, &rng), 20000000); /* each of 2 workers: 50/s */
    p = params_of("{\"arrival\": {\"process\": \"poisson\", \"rate_per_s\": 1000}}");
    double sum = 0;
    int n = 20000;
    for (int i = 0; i < n; i++)
        sum += (double)kv_next_gap_ns(&p, 1, &rng);
    double mean = sum / n;
    assert_true(mean > 0.95e6 && mean < 1.05e6); /* 1 ms mean, within 5% at 20,000 draws */
    p = params_of("{}");
    assert_int_equal(kv_next_gap_ns(&p, 1, &rng), 0); /* back to back */
}

/* A flow's plan from the shipped trace: one list per record, offsets folded into the region,
 * records dealt round robin and replayed after the trace's span; without a trace one list
 * and the fixed rate's schedule. */
static void test_plan(void **state)
{
    (void)state;
    const char *src = getenv("FABTOP_SRC");
    if (!src)
        skip();
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"engine\": \"sglang\", \"layers\": 2, \"run_pages\": 4, \"arrival\": "
             "{\"process\": \"trace\", \"trace\": \"%s/engine/mixes/traces/kv-small.jsonl\"}}",
             src);
    struct mix_flow f;
    memset(&f, 0, sizeof(f));
    snprintf(f.name, sizeof(f.name), "kv");
    f.op = MIX_OP_KV;
    f.size.kind = MIX_SIZE_FIXED;
    f.size.n = 1;
    f.size.bytes[0] = 8192;
    f.params = cJSON_Parse(json);
    struct kv_plan *k = NULL;
    struct ft_err e = {0};
    assert_int_equal(kv_plan_build(&f, 2, 1, 1u << 20, &k, &e), 0);
    assert_int_equal(k->njobs, 40);
    assert_true(k->bytes_min < k->bytes_max); /* reuse and lengths differ */
    assert_int_equal(k->region, 1u << 20);
    for (int j = 0; j < k->njobs; j++) {
        uint64_t sum = 0;
        for (long i = 0; i < k->jobs[j].ndesc; i++) {
            assert_true(k->jobs[j].off[i] + k->jobs[j].len[i] <= k->region);
            assert_true(k->jobs[j].len[i] <= 4 * 8192); /* runs of at most 4 pages */
            sum += k->jobs[j].len[i];
        }
        assert_int_equal(sum, k->jobs[j].bytes);
        assert_int_equal(sum % 8192, 0);
    }
    /* Worker 1 of 2 takes records 1, 3, 5...; record 41 is record 1 one span later. */
    uint64_t next = 0, rng = 1, due0, due1;
    const struct kv_job *a = kv_plan_request(k, 1, 2, 0, 1000, &next, &rng, &due0);
    assert_ptr_equal(a, &k->jobs[1]);
    assert_int_equal(due0, 1000 + k->jobs[1].t_ns);
    const struct kv_job *b = kv_plan_request(k, 1, 2, 20, 1000, &next, &rng, &due1);
    assert_ptr_equal(b, &k->jobs[1]);
    assert_int_equal(due1, due0 + k->trace_span_ns);
    assert_true(kv_plan_paced(k));
    cJSON *fig = kv_plan_figures(k, "test");
    assert_int_equal(cJSON_GetArraySize(fig), 1);
    cJSON_Delete(fig);
    kv_plan_free(k);
    cJSON_Delete(f.params);
    /* No trace: one list, a fixed 10/s shared by 2 workers: 200 ms apart each. */
    f.params = cJSON_Parse("{\"layers\": 2, \"pages\": 3, \"arrival\": {\"process\": "
                           "\"fixed\", \"rate_per_s\": 10}}");
    assert_int_equal(kv_plan_build(&f, 2, 1, 1u << 20, &k, &e), 0);
    assert_int_equal(k->njobs, 1);
    assert_int_equal(k->jobs[0].ndesc, 2 * 2 * 3);
    kv_plan_request(k, 0, 2, 0, 5000, &next, &rng, &due0);
    kv_plan_request(k, 0, 2, 1, 5000, &next, &rng, &due1);
    assert_int_equal(due0, 5000);
    assert_int_equal(due1, 5000 + 200000000ull);
    kv_plan_free(k);
    cJSON_Delete(f.params);
}

/* Every kv params key is one the kv-capable transports accept for op kv (the mix reader
 * refuses the others), and the verbs list holds its own settings beside them. */
static void test_transport_keys(void **state)
{
    (void)state;
    const char *const xp[] = {"tcp", "verbs"};
    for (size_t t = 0; t < 2; t++) {
        const struct xport_ops *x = xport_find(xp[t]);
        assert_non_null(x);
        assert_true(x->ops & (1u << MIX_OP_KV));
        const char *const *have = x->param_keys(MIX_OP_KV);
        for (const char *const *k = kv_param_keys(); *k; k++) {
            bool found = false;
            for (const char *const *h = have; *h && !found; h++)
                found = !strcmp(*h, *k);
            if (!found)
                fail_msg("%s does not take params.%s for kv flows", xp[t], *k);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vllm_flash),     cmocka_unit_test(test_vllm_flashinfer_and_mla),
        cmocka_unit_test(test_sglang_runs),    cmocka_unit_test(test_trtllm_blocks),
        cmocka_unit_test(test_prefix_reuse),   cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_params_errors),  cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_transport_keys), cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
