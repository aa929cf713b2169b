/* test_mix_model: engine/run/mix_model.c: the serving mix of every preset over nccl, verbs
 * and tcp loads through the mix reader unchanged (mix_from_json), saves and loads to the same
 * document, and passes the params check and each transport's validate; its flows carry the
 * sizes of docs/serving.md under their class names; too large a message is refused naming
 * the option. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"
#include "engine/run/mix_model.h"
#include "engine/xport/xport.h"

static const char *const presets[] = {"Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Qwen3-8B",
                                      "Qwen3-32B",    "Mixtral-8x7B",  "DeepSeek-V3",    NULL};
static const char *const transports[] = {"nccl", "verbs", "tcp", NULL};

/* The mix of name at l over tr, through the reader; checks the round trip and the
 * transports' checks. */
static void make(const char *name, const struct model_layout *l, const char *tr, struct mix *out)
{
    struct model_config m;
    struct model_sizes s;
    struct ft_err err = {0};
    if (model_config_load(name, &m, &err) || model_size_compute(&m, l, &s, &err))
        fail_msg("%s: %s", name, err.msg);
    if (mix_model_make(&m, l, &s, tr, out, &err))
        fail_msg("%s over %s: %s", name, tr, err.msg);
    /* Saved and loaded again: the same document. */
    cJSON *doc = mix_to_json(out);
    char *first = cJSON_PrintUnformatted(doc);
    struct mix *again = calloc(1, sizeof(*again));
    if (mix_from_json(doc, "saved", again, &err))
        fail_msg("%s over %s, saved: %s", name, tr, err.msg);
    cJSON_Delete(doc);
    doc = mix_to_json(again);
    char *second = cJSON_PrintUnformatted(doc);
    assert_string_equal(first, second);
    cJSON_Delete(doc);
    cJSON_free(first);
    cJSON_free(second);
    mix_free(again);
    free(again);
    /* What runner_validate checks short of the transport being here. */
    if (xport_check_params(out, &err))
        fail_msg("%s over %s: %s", name, tr, err.msg);
    for (int i = 0; i < out->nflows; i++) {
        const struct mix_flow *f = &out->flows[i];
        const struct xport_ops *xp = xport_find(f->transport);
        assert_non_null(xp);
        assert_true(xp->ops & (1u << f->op));
        if (xp->validate && xp->validate(f, &err))
            fail_msg("%s over %s: %s", name, tr, err.msg);
        /* Every flow's class is its name's prefix. */
        assert_true(!strncmp(f->name, "tp-", 3) || !strncmp(f->name, "kv-", 3) ||
                    !strncmp(f->name, "moe-", 4) || !strncmp(f->name, "pp-", 3));
    }
}

static void test_every_preset(void **state)
{
    (void)state;
    struct mix *mix = calloc(1, sizeof(*mix));
    for (int i = 0; presets[i]; i++)
        for (int t = 0; transports[t]; t++) {
            struct model_layout l;
            model_size_layout_defaults(&l);
            l.tp = 8;
            l.pp = 2;
            l.ep = strstr(presets[i], "Mixtral") || strstr(presets[i], "DeepSeek") ? 8 : 1;
            make(presets[i], &l, transports[t], mix);
            /* tp decode, tp prefill, kv, pp x 2, and moe x 2 when EP > 1 */
            assert_int_equal(mix->nflows, l.ep > 1 ? 7 : 5);
            assert_int_equal(mix_foreground(mix), 0);
            assert_true(mix->quiet_then_loaded);
            mix_free(mix);
            /* TP 1, PP 1: the KV transfer alone, in the foreground. */
            model_size_layout_defaults(&l);
            make(presets[i], &l, transports[t], mix);
            assert_int_equal(mix->nflows, 1);
            assert_int_equal(strncmp(mix->flows[0].name, "kv-", 3), 0);
            assert_int_equal(mix->flows[0].role, MIX_ROLE_FOREGROUND);
            mix_free(mix);
        }
    free(mix);
}

static const struct mix_flow *find(const struct mix *m, const char *name)
{
    for (int i = 0; i < m->nflows; i++)
        if (!strcmp(m->flows[i].name, name))
            return &m->flows[i];
    fail_msg("no flow %s", name);
    return NULL;
}

static void test_llama70b_flows(void **state)
{
    (void)state;
    struct mix *mix = calloc(1, sizeof(*mix));
    struct model_layout l;
    model_size_layout_defaults(&l);
    l.tp = 8;
    make("Llama-3.1-70B", &l, "nccl", mix);
    const struct mix_flow *f = find(mix, "tp-decode-allreduce");
    assert_int_equal(f->op, MIX_OP_COLLECTIVE);
    assert_int_equal(f->size.bytes[0], 8192 * 32 * 2);
    assert_string_equal(jsonutil_str(f->params, "collective"), "all_reduce");
    assert_string_equal(jsonutil_str(f->params, "dtype"), "bfloat16");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(f->params, "gpus")), 8);
    f = find(mix, "tp-prefill-allreduce");
    assert_int_equal(f->size.bytes[0], 128ull << 20);
    f = find(mix, "kv-4KiBx81920"); /* 4 KiB descriptors, 81,920 per request */
    assert_string_equal(jsonutil_str(f->params, "collective"), "sendrecv");
    assert_int_equal(f->size.bytes[0], 4096);
    assert_non_null(strstr(mix->description, "huggingface.co/meta-llama/Llama-3.1-70B"));
    mix_free(mix);
    /* tcp: the all-reduce as a ring's pattern for 8 ranks (op collective, S the whole
     * all-reduce, 14 steps of S / 8 = 64 KiB), per_step the all-reduces of a decode step (80
     * layers x 2), not their steps; the KV descriptors as a kv flow: one request of 80 layers
     * x K and V x 512 pages. */
    make("Llama-3.1-70B", &l, "tcp", mix);
    f = find(mix, "tp-decode-ring8");
    assert_int_equal(f->op, MIX_OP_COLLECTIVE);
    assert_string_equal(f->transport, "tcp");
    assert_int_equal(f->size.bytes[0], 8192 * 32 * 2);
    assert_int_equal(f->role, MIX_ROLE_FOREGROUND);
    assert_string_equal(jsonutil_str(f->params, "collective"), "all_reduce");
    double r = 0;
    assert_true(jsonutil_num(f->params, "ranks", &r) && r == 8);
    assert_true(f->per_step == 160);
    assert_int_equal(mix_latency_kind_of(f), MIX_LAT_PER_OP);
    f = find(mix, "tp-prefill-ring8");
    assert_int_equal(f->op, MIX_OP_COLLECTIVE);
    assert_int_equal(f->size.bytes[0], 128ull << 20);
    assert_true(f->per_step == 0);
    f = find(mix, "kv-4KiBx81920");
    assert_int_equal(f->op, MIX_OP_KV);
    assert_int_equal(f->size.bytes[0], 4096);
    assert_string_equal(jsonutil_str(f->params, "engine"), "vllm");
    assert_string_equal(jsonutil_str(f->params, "layout"), "flash");
    double v = 0;
    assert_true(jsonutil_num(f->params, "layers", &v) && v == 80);
    assert_true(jsonutil_num(f->params, "pages", &v) && v == 512);
    assert_true(jsonutil_num(f->params, "page_tokens", &v) && v == 16);
    assert_int_equal(mix_latency_kind_of(f), MIX_LAT_PER_REQUEST);
    mix_free(mix);
    /* verbs: the same ring all-reduce; the same kv flow, its 64 READs in flight over 4 QPs (16
     * each). */
    make("Llama-3.1-70B", &l, "verbs", mix);
    f = find(mix, "tp-decode-ring8");
    assert_int_equal(f->op, MIX_OP_COLLECTIVE);
    assert_string_equal(f->transport, "verbs");
    assert_int_equal(f->size.bytes[0], 8192 * 32 * 2);
    assert_true(jsonutil_num(f->params, "ranks", &r) && r == 8);
    assert_true(f->per_step == 160);
    f = find(mix, "kv-4KiBx81920");
    assert_int_equal(f->op, MIX_OP_KV);
    assert_true(jsonutil_num(f->params, "qps", &v) && v == 4);
    mix_free(mix);
    /* sglang over tcp: K and V of a page together, runs of up to 16 contiguous pages: 80
     * layers x 512 / 16 runs = 2,560 writes of 16 pages of 8 KiB. */
    l.engine = MODEL_ENGINE_SGLANG;
    make("Llama-3.1-70B", &l, "tcp", mix);
    f = find(mix, "kv-8KiBx2560");
    assert_string_equal(jsonutil_str(f->params, "engine"), "sglang");
    assert_string_equal(jsonutil_str(f->params, "layout"), "flashinfer");
    mix_free(mix);
    l.engine = MODEL_ENGINE_VLLM;
    make("Llama-3.1-70B", &l, "tcp", mix);
    assert_non_null(strstr(mix->lesson, "ring all-reduce's message pattern"));
    assert_non_null(strstr(mix->lesson, "not NCCL"));
    mix_free(mix);
    free(mix);
}

static void test_deepseek_flows(void **state)
{
    (void)state;
    struct mix *mix = calloc(1, sizeof(*mix));
    struct model_layout l;
    model_size_layout_defaults(&l);
    l.tp = 8;
    l.ep = 8;
    make("DeepSeek-V3", &l, "nccl", mix);
    /* alltoall's S is a rank's whole buffer: 32 tokens x 8 experts x 7,392 B (FP8 + scales). */
    const struct mix_flow *f = find(mix, "moe-dispatch-ep8");
    assert_string_equal(jsonutil_str(f->params, "collective"), "alltoall");
    assert_string_equal(jsonutil_str(f->params, "dtype"), "uint8");
    assert_int_equal(f->size.bytes[0], 32 * 8 * 7392);
    f = find(mix, "moe-combine-ep8");
    assert_int_equal(f->size.bytes[0], 32 * 8 * 14336);
    f = find(mix, "kv-18KiBx31232"); /* (512 + 64) x 2 x 16 per (layer, page) */
    assert_int_equal(f->size.bytes[0], 18432);
    mix_free(mix);
    /* verbs: one peer's share of the all-to-all, as a ping-pong. */
    make("DeepSeek-V3", &l, "verbs", mix);
    f = find(mix, "moe-dispatch-ep8-peer");
    assert_int_equal(f->op, MIX_OP_PINGPONG);
    assert_int_equal(f->size.bytes[0], 32 * 8 * 7392 / 8);
    mix_free(mix);
    free(mix);
}

static void test_refused(void **state)
{
    (void)state;
    struct model_config m;
    struct model_layout l;
    struct model_sizes s;
    struct ft_err err = {0};
    assert_int_equal(model_config_load("Llama-3.1-405B", &m, &err), 0);
    model_size_layout_defaults(&l);
    l.tp = 2;
    l.prompt = l.context = 1 << 20; /* 16384 x 2^20 x 2 / 2: 32 GiB ring steps */
    assert_int_equal(model_size_compute(&m, &l, &s, &err), 0);
    struct mix *mix = calloc(1, sizeof(*mix));
    assert_int_equal(mix_model_make(&m, &l, &s, "tcp", mix, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "tp-prefill-ring"));
    assert_non_null(strstr(err.msg, "--prompt"));
    struct ft_err err2 = {0};
    assert_null(mix_model_json(&m, &l, &s, "sim", &err2));
    assert_non_null(strstr(err2.msg, "--transport sim"));
    free(mix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_preset),
        cmocka_unit_test(test_llama70b_flows),
        cmocka_unit_test(test_deepseek_flows),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
