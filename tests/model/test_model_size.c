/* test_model_size: engine/model/: the config reader (presets, defaults, a refusal per bad
 * field) and each size of docs/serving.md against its worked example, with a refusal per bad
 * layout. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/model/model_config.h"
#include "engine/model/model_size.h"

static const char *const presets[] = {"Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Qwen3-8B",
                                      "Qwen3-32B",    "Mixtral-8x7B",  "DeepSeek-V3",    NULL};

static void load(const char *name, struct model_config *m)
{
    struct ft_err err = {0};
    int rc = model_config_load(name, m, &err);
    if (rc)
        fail_msg("%s: %s", name, err.msg);
}

static void sizes(const struct model_config *m, const struct model_layout *l, struct model_sizes *s)
{
    struct ft_err err = {0};
    int rc = model_size_compute(m, l, s, &err);
    if (rc)
        fail_msg("%s: %s", m->name, err.msg);
}

static void test_presets(void **state)
{
    (void)state;
    char **names = model_config_presets();
    for (int i = 0; presets[i]; i++) {
        bool listed = false;
        for (char **p = names; *p; p++)
            listed |= !strcmp(*p, presets[i]);
        assert_true(listed);
        struct model_config m;
        load(presets[i], &m);
        assert_string_equal(m.name, presets[i]);
        /* Each names the config.json its values come from. */
        assert_int_equal(strncmp(m.source, "https://huggingface.co/", 23), 0);
        assert_non_null(strstr(m.source, "/blob/main/config.json"));
        assert_int_equal(m.dtype_bytes, 2);
        struct model_layout l;
        struct model_sizes s;
        model_size_layout_defaults(&l);
        sizes(&m, &l, &s);
        assert_true(s.kv_token > 0 && s.desc_bytes > 0 && s.descs > 0);
    }
    model_config_free_names(names);
    /* A path loads too, named by its file. */
    char path[512];
    snprintf(path, sizeof(path), "%s/engine/models/Qwen3-8B.json", getenv("FABTOP_SRC"));
    struct model_config m;
    load(path, &m);
    assert_string_equal(m.name, "Qwen3-8B");
    struct ft_err err = {0};
    assert_int_equal(model_config_load("No-Such-Model", &m, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "Llama-3.1-70B"));
}

static void test_shapes(void **state)
{
    (void)state;
    struct model_config m;
    load("Llama-3.1-8B", &m);
    assert_int_equal(m.head_dim, 128); /* 4096 / 32: absent from its config */
    assert_int_equal(m.kv_heads, 8);
    assert_false(m.moe || m.mla);
    load("Qwen3-32B", &m);
    assert_int_equal(m.head_dim, 128); /* from its config: 5120 / 64 would be 80 */
    assert_int_equal(m.hidden, 5120);
    assert_int_equal(m.heads, 64);
    load("Mixtral-8x7B", &m);
    assert_true(m.moe);
    assert_int_equal(m.experts, 8);
    assert_int_equal(m.experts_per_tok, 2);
    assert_int_equal(m.dense_layers, 0);
    assert_int_equal(m.moe_intermediate, 14336); /* intermediate_size: no moe_ field */
    load("DeepSeek-V3", &m);
    assert_true(m.moe && m.mla && m.fp8);
    assert_int_equal(m.experts, 256);
    assert_int_equal(m.experts_per_tok, 8);
    assert_int_equal(m.dense_layers, 3);
    assert_int_equal(m.moe_intermediate, 2048);
    assert_int_equal(m.kv_lora_rank, 512);
    assert_int_equal(m.qk_rope_head_dim, 64);
}

static void test_llama70b(void **state)
{
    (void)state;
    struct model_config m;
    struct model_layout l;
    struct model_sizes s;
    load("Llama-3.1-70B", &m);
    model_size_layout_defaults(&l);
    sizes(&m, &l, &s);
    assert_int_equal(s.kv_token, 320 * 1024); /* 2 x 80 x 8 x 128 x 2 */
    assert_int_equal(s.kv_token_rank, 320 * 1024);
    l.tp = 8;
    l.page = 16;
    l.prompt = 8192;
    sizes(&m, &l, &s);
    assert_int_equal(s.kv_heads_rank, 1);
    assert_false(s.kv_replicated);
    assert_int_equal(s.kv_token_rank, 40 * 1024);
    assert_int_equal(s.kv_layout, MODEL_KV_LAYER_KV_PAGE);
    assert_int_equal(s.desc_bytes, 4096); /* one (layer, K or V, page) */
    assert_int_equal(s.kv_page_rank, 40 * 1024 * 16);
    assert_int_equal(s.prompt_pages, 512);
    assert_int_equal(s.descs, 81920);
    assert_int_equal(s.kv_request_rank, 320ull << 20);
    /* the batch's context: 32 x 512 pages x 640 KiB */
    assert_int_equal(s.kv_batch_rank, 32ull * 512 * 40 * 1024 * 16);
    /* TP: hidden x batch x 2 per all-reduce, two per layer; prefill hidden x prompt x 2. */
    assert_int_equal(s.tp_decode, 8192 * 32 * 2);
    assert_int_equal(s.tp_allreduces, 160);
    assert_int_equal(s.tp_prefill, 8192ull * 8192 * 2);
    assert_int_equal(s.ring_steps, 14);
    assert_int_equal(s.ring_decode_chunk, 8192 * 32 * 2 / 8);
    assert_int_equal(s.ring_prefill_chunk, 16ull << 20);
    assert_int_equal(s.pp_decode, 0);
    assert_int_equal(s.dispatch_decode, 0);
    /* FP8 KV halves every KV size, not the all-reduce. */
    l.dtype = MODEL_DTYPE_FP8;
    sizes(&m, &l, &s);
    assert_int_equal(s.desc_bytes, 2048);
    assert_int_equal(s.kv_request_rank, 160ull << 20);
    assert_int_equal(s.tp_decode, 8192 * 32 * 2);
    /* TP 4: two KV heads per rank; TP 16: replicated, one per rank. */
    l.dtype = MODEL_DTYPE_AUTO;
    l.tp = 4;
    sizes(&m, &l, &s);
    assert_int_equal(s.kv_heads_rank, 2);
    assert_int_equal(s.desc_bytes, 8192);
    l.tp = 16;
    sizes(&m, &l, &s);
    assert_int_equal(s.kv_heads_rank, 1);
    assert_true(s.kv_replicated);
    assert_int_equal(s.kv_token_rank, 40 * 1024);
    /* FlashInfer layout (sglang, trtllm): K and V of a page in one descriptor. */
    l.tp = 8;
    l.engine = MODEL_ENGINE_SGLANG;
    sizes(&m, &l, &s);
    assert_int_equal(s.kv_layout, MODEL_KV_LAYER_PAGE);
    assert_int_equal(s.desc_bytes, 8192);
    assert_int_equal(s.descs, 40960);
    assert_int_equal(s.kv_request_rank, 320ull << 20);
    /* A partial last page moves whole. */
    l.engine = MODEL_ENGINE_VLLM;
    l.prompt = 100;
    sizes(&m, &l, &s);
    assert_int_equal(s.prompt_pages, 7);
    assert_int_equal(s.descs, 80 * 2 * 7);
}

static void test_deepseek(void **state)
{
    (void)state;
    struct model_config m;
    struct model_layout l;
    struct model_sizes s;
    load("DeepSeek-V3", &m);
    model_size_layout_defaults(&l);
    const long tps[] = {1, 8, 16, 128};
    for (int i = 0; i < 4; i++) {
        l.tp = tps[i];
        sizes(&m, &l, &s);
        /* (512 + 64) x 61 x 2, not halved by K/V, not divided by TP. */
        assert_int_equal(s.kv_token_rank, 70272);
        assert_int_equal(s.kv_token, 70272);
    }
    assert_int_equal(s.kv_layout, MODEL_KV_LAYER_PAGE);
    assert_int_equal(s.desc_bytes, 576 * 2 * 16);
    assert_int_equal(s.descs, 61 * 512);
    /* MoE: FP8 dispatch with one float32 scale per 128 elements; BF16 combine. */
    l.tp = 8;
    l.ep = 8;
    l.batch = 32;
    l.prompt = 8192;
    sizes(&m, &l, &s);
    assert_int_equal(s.moe_layers, 58);
    assert_true(s.dispatch_fp8);
    assert_int_equal(s.dispatch_token, 7168 + 56 * 4);
    assert_int_equal(s.combine_token, 7168 * 2);
    assert_int_equal(s.dispatch_decode, 32ull * 8 * 7392 * 7 / 8);
    assert_int_equal(s.combine_decode, 32ull * 8 * 14336 * 7 / 8);
    assert_int_equal(s.dispatch_prefill, 8192ull * 8 * 7392 * 7 / 8);
    assert_int_equal(s.combine_prefill, 8192ull * 8 * 14336 * 7 / 8);
    /* --dtype bf16: BF16 dispatch and KV; fp8: KV halves. */
    l.dtype = MODEL_DTYPE_BF16;
    sizes(&m, &l, &s);
    assert_false(s.dispatch_fp8);
    assert_int_equal(s.dispatch_token, 14336);
    l.dtype = MODEL_DTYPE_FP8;
    sizes(&m, &l, &s);
    assert_int_equal(s.kv_token_rank, 35136);
    /* EP 1: nothing leaves the rank. */
    l.ep = 1;
    sizes(&m, &l, &s);
    assert_int_equal(s.dispatch_decode, 0);
    assert_int_equal(s.combine_prefill, 0);
}

static void test_mixtral_pp(void **state)
{
    (void)state;
    struct model_config m;
    struct model_layout l;
    struct model_sizes s;
    load("Mixtral-8x7B", &m);
    model_size_layout_defaults(&l);
    l.ep = 8;
    sizes(&m, &l, &s);
    assert_false(s.dispatch_fp8);
    assert_int_equal(s.moe_layers, 32);
    assert_int_equal(s.dispatch_decode, 32ull * 2 * 8192 * 7 / 8);
    /* (EP - 1) / EP rounded down to a byte. */
    l.ep = 4;
    l.batch = 3;
    sizes(&m, &l, &s);
    assert_int_equal(s.dispatch_decode, 3ull * 2 * 8192 * 3 / 4);
    /* PP: layers per stage ceil(126 / 4) = 32; activations hidden x tokens x 2. */
    load("Llama-3.1-405B", &m);
    model_size_layout_defaults(&l);
    l.tp = 8;
    l.pp = 4;
    sizes(&m, &l, &s);
    assert_int_equal(s.layers_stage, 32);
    assert_int_equal(s.tp_allreduces, 64);
    assert_int_equal(s.pp_decode, 16384 * 32 * 2);
    assert_int_equal(s.pp_prefill, 16384ull * 8192 * 2);
    assert_int_equal(s.kv_token_rank, 2 * 32 * 1 * 128 * 2);
    assert_int_equal(s.descs, 32 * 2 * 512);
    l.pp = 126;
    sizes(&m, &l, &s);
    assert_int_equal(s.layers_stage, 1);
}

/* The layout l (from the defaults, changed by the caller) is refused naming what. */
static void refused(const struct model_config *m, const struct model_layout *l, int code,
                    const char *what)
{
    struct ft_err err = {0};
    struct model_sizes s;
    int rc = model_size_compute(m, l, &s, &err);
    if (rc != code || !strstr(err.msg, what))
        fail_msg("expected %d naming '%s', got %d: %s", code, what, rc, err.msg);
}

static void test_layouts_refused(void **state)
{
    (void)state;
    struct model_config m, mix, ds;
    struct model_layout l;
    load("Llama-3.1-70B", &m);
    load("Mixtral-8x7B", &mix);
    load("DeepSeek-V3", &ds);
#define REFUSE(model, field, value, code, what)                                                    \
    do {                                                                                           \
        model_size_layout_defaults(&l);                                                            \
        l.field = (value);                                                                         \
        refused(&(model), &l, code, what);                                                         \
    } while (0)
    REFUSE(m, tp, 0, -EINVAL, "--tp 0");
    REFUSE(m, tp, 2048, -EINVAL, "--tp 2048");
    REFUSE(m, tp, 3, -EINVAL, "attention heads"); /* 64 heads */
    REFUSE(m, pp, 0, -EINVAL, "--pp 0");
    REFUSE(m, pp, 81, -EINVAL, "80 layers");
    REFUSE(m, ep, 0, -EINVAL, "--ep 0");
    REFUSE(m, ep, 2, -EINVAL, "dense");
    REFUSE(mix, ep, 3, -EINVAL, "8 routed experts");
    REFUSE(ds, ep, 3, -EINVAL, "256 routed experts");
    REFUSE(m, batch, 0, -EINVAL, "--batch 0");
    REFUSE(m, batch, MODEL_SIZE_MAX_BATCH + 1, -EINVAL, "--batch");
    REFUSE(m, context, 0, -EINVAL, "--context 0");
    REFUSE(m, prompt, 0, -EINVAL, "--prompt 0");
    REFUSE(m, prompt, 8193, -EINVAL, "longer than --context");
    REFUSE(m, page, 0, -EINVAL, "--page 0");
    REFUSE(m, page, MODEL_SIZE_MAX_PAGE + 1, -EINVAL, "--page");
    /* KV heads neither dividing TP nor divided by it: 48 heads, 12 KV heads, TP 8. */
    struct model_config odd = m;
    odd.heads = 48;
    odd.kv_heads = 12;
    REFUSE(odd, tp, 8, -EINVAL, "neither divides the other");
    /* ... while 5 (not dividing the 48 heads) breaks the head rule and 24 (a multiple of
     * 12) replicates. */
    REFUSE(odd, tp, 5, -EINVAL, "attention heads");
    model_size_layout_defaults(&l);
    l.tp = 24;
    struct model_sizes s;
    struct ft_err err = {0};
    assert_int_equal(model_size_compute(&odd, &l, &s, &err), 0);
    assert_true(s.kv_replicated);
    /* Sizes beyond 64 bits. */
    struct model_config huge = m;
    huge.hidden = huge.layers = huge.heads = huge.kv_heads = huge.head_dim = MODEL_CONFIG_MAX_DIM;
    model_size_layout_defaults(&l);
    l.batch = MODEL_SIZE_MAX_BATCH;
    l.context = l.prompt = MODEL_SIZE_MAX_CONTEXT;
    refused(&huge, &l, -EOVERFLOW, "overflow");
#undef REFUSE
}

static const char base_config[] =
    "{\"hidden_size\": 4096, \"num_hidden_layers\": 32, \"num_attention_heads\": 32,"
    " \"num_key_value_heads\": 8, \"torch_dtype\": \"bfloat16\"}";

/* base_config with key set to value (JSON text; NULL: removed) is refused naming what. */
static void config_refused(const char *key, const char *value, const char *what)
{
    cJSON *doc = cJSON_Parse(base_config);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, key);
    if (value)
        cJSON_AddItemToObject(doc, key, cJSON_Parse(value));
    struct model_config m;
    struct ft_err err = {0};
    int rc = model_config_from_json(doc, "test.json", &m, &err);
    cJSON_Delete(doc);
    if (rc != -EINVAL || !strstr(err.msg, what) || !strstr(err.msg, "test.json"))
        fail_msg("%s=%s: expected a refusal naming '%s', got %d: %s", key,
                 value ? value : "(absent)", what, rc, err.msg);
}

/* A whole document that is refused naming what. */
static void doc_refused(const char *text, const char *what)
{
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    struct model_config m;
    struct ft_err err = {0};
    int rc = model_config_from_json(doc, "test.json", &m, &err);
    cJSON_Delete(doc);
    if (rc != -EINVAL || !strstr(err.msg, what))
        fail_msg("%s: expected a refusal naming '%s', got %d: %s", text, what, rc, err.msg);
}

static void test_fields_refused(void **state)
{
    (void)state;
    /* The base loads, with MHA and head_dim defaults when those are absent. */
    cJSON *doc = cJSON_Parse(base_config);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "num_key_value_heads");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "torch_dtype");
    cJSON_AddStringToObject(doc, "dtype", "float16");
    struct model_config m;
    struct ft_err err = {0};
    assert_int_equal(model_config_from_json(doc, "test.json", &m, &err), 0);
    assert_int_equal(m.kv_heads, 32);
    assert_int_equal(m.head_dim, 128);
    assert_string_equal(m.dtype, "float16");
    cJSON_Delete(doc);

    config_refused("hidden_size", NULL, "hidden_size is missing");
    config_refused("num_hidden_layers", NULL, "num_hidden_layers is missing");
    config_refused("num_attention_heads", NULL, "num_attention_heads is missing");
    config_refused("torch_dtype", NULL, "torch_dtype (or dtype) is missing");
    config_refused("hidden_size", "\"4096\"", "hidden_size must be a whole number");
    config_refused("hidden_size", "0", "hidden_size must be a whole number");
    config_refused("hidden_size", "4096.5", "hidden_size must be a whole number");
    config_refused("num_hidden_layers", "-1", "num_hidden_layers");
    config_refused("num_attention_heads", "1e12", "num_attention_heads");
    config_refused("num_key_value_heads", "5", "num_key_value_heads (5) must divide");
    config_refused("num_key_value_heads", "64", "num_key_value_heads (64) must divide");
    config_refused("head_dim", "0", "head_dim must be a whole number");
    config_refused("torch_dtype", "\"int8\"", "torch_dtype 'int8'");
    config_refused("torch_dtype", "\"float8_e4m3fn\"", "torch_dtype");
    config_refused("intermediate_size", "true", "intermediate_size");
    doc_refused("[1, 2]", "not a model config");
    /* head_dim absent and hidden not a multiple of the heads. */
    doc_refused("{\"hidden_size\": 100, \"num_hidden_layers\": 2, \"num_attention_heads\": 3,"
                " \"torch_dtype\": \"bfloat16\"}",
                "head_dim is missing");
    /* MoE and MLA fields. */
    const char *moe = "{\"hidden_size\": 64, \"num_hidden_layers\": 4, \"num_attention_heads\": 4,"
                      " \"torch_dtype\": \"bfloat16\", \"num_local_experts\": 8";
    char text[512];
    snprintf(text, sizeof(text), "%s}", moe);
    doc_refused(text, "num_experts_per_tok is missing");
    snprintf(text, sizeof(text), "%s, \"num_experts_per_tok\": 9}", moe);
    doc_refused(text, "num_experts_per_tok (9) is more than num_local_experts (8)");
    snprintf(text, sizeof(text), "%s, \"num_experts_per_tok\": 2, \"first_k_dense_replace\": 4}",
             moe);
    doc_refused(text, "first_k_dense_replace (4) leaves no MoE layer");
    snprintf(text, sizeof(text), "%s, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 0}",
             moe);
    doc_refused(text, "moe_intermediate_size");
    doc_refused("{\"hidden_size\": 64, \"num_hidden_layers\": 4, \"num_attention_heads\": 4,"
                " \"torch_dtype\": \"bfloat16\", \"n_routed_experts\": 0}",
                "n_routed_experts");
    doc_refused("{\"hidden_size\": 64, \"num_hidden_layers\": 4, \"num_attention_heads\": 4,"
                " \"torch_dtype\": \"bfloat16\", \"kv_lora_rank\": 512}",
                "qk_rope_head_dim is missing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_llama70b),       cmocka_unit_test(test_deepseek),
        cmocka_unit_test(test_mixtral_pp),     cmocka_unit_test(test_layouts_refused),
        cmocka_unit_test(test_fields_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
