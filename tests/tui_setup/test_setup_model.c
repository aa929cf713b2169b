/* test_setup_model: the setup view's model choices as text (tui/setup_model.c): bytes with
 * units, Llama-3.1-70B's sizes at TP 1 and TP 8 (docs/serving.md's worked example), a
 * refused TP named in one line, lines kept within the width, and the command line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tui/setup_model.h"

static void load(struct model_config *m, const char *name)
{
    struct ft_err err = {0};
    if (model_config_load(name, m, &err) < 0)
        fail_msg("%s: %s", name, err.msg);
}

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("'%s' not in:\n%s", needle, text);
}

static void test_bytes(void **state)
{
    (void)state;
    char b[32];
    setup_model_fmt_bytes(b, sizeof(b), 512);
    assert_string_equal(b, "512 B");
    setup_model_fmt_bytes(b, sizeof(b), 327680);
    assert_string_equal(b, "320 KiB");
    setup_model_fmt_bytes(b, sizeof(b), 70272);
    assert_string_equal(b, "68.62 KiB");
    setup_model_fmt_bytes(b, sizeof(b), 335544320);
    assert_string_equal(b, "320 MiB");
}

static void test_sizes(void **state)
{
    (void)state;
    struct model_config m;
    load(&m, "Llama-3.1-70B");
    struct model_layout l;
    model_size_layout_defaults(&l);
    struct strbuf sb;
    strbuf_init(&sb);
    struct model_sizes s;
    /* TP 1: the whole KV on one rank, no all-reduce. */
    assert_int_equal(setup_model_sizes_text(&m, &l, "tcp", 78, &sb, &s), 0);
    contains(sb.s, "KV per token 320 KiB, per rank 320 KiB (8 KV heads per rank)");
    contains(sb.s, "All-reduce: none at TP 1");
    /* TP 8: one KV head per rank, 4 KiB descriptors, 81,920 of them, 320 MiB. */
    strbuf_reset(&sb);
    l.tp = 8;
    assert_int_equal(setup_model_sizes_text(&m, &l, "tcp", 78, &sb, &s), 0);
    contains(sb.s, "KV per token 320 KiB, per rank 40 KiB (1 KV head per rank)");
    contains(sb.s, "Per descriptor 4 KiB (layer, K or V, page); a prompt: 81920 of them, 320 MiB");
    contains(sb.s, "All-reduce 512 KiB per decode (160 a step), prefill 128 MiB; ring 14 x 64 KiB");
    /* Over nccl there is no ring emulated. */
    strbuf_reset(&sb);
    assert_int_equal(setup_model_sizes_text(&m, &l, "nccl", 78, &sb, &s), 0);
    assert_null(strstr(sb.s, "ring"));
    /* Narrow: each line still within the width (the optional tails dropped). */
    strbuf_reset(&sb);
    assert_int_equal(setup_model_sizes_text(&m, &l, "tcp", 60, &sb, &s), 0);
    int lines = 0;
    for (const char *p = sb.s; *p; lines++) {
        size_t n = strcspn(p, "\n");
        assert_true(n <= 60);
        p += n + 1;
    }
    assert_int_equal(lines, 3);
    /* sglang: K and V of a page together. */
    strbuf_reset(&sb);
    l.engine = MODEL_ENGINE_SGLANG;
    assert_int_equal(setup_model_sizes_text(&m, &l, "tcp", 78, &sb, &s), 0);
    contains(sb.s, "Per descriptor 8 KiB (layer, page)");
    strbuf_free(&sb);
}

static void test_refused(void **state)
{
    (void)state;
    struct model_config m;
    load(&m, "Llama-3.1-70B");
    struct model_layout l;
    model_size_layout_defaults(&l);
    l.tp = 3;
    struct strbuf sb;
    strbuf_init(&sb);
    assert_int_equal(setup_model_sizes_text(&m, &l, "tcp", 78, &sb, NULL), -EINVAL);
    assert_string_equal(sb.s, "refused: --tp 3 does not divide Llama-3.1-70B's 64 attention heads: "
                              "pick a divisor\n");
    /* EP on a dense model. */
    strbuf_reset(&sb);
    l.tp = 1;
    l.ep = 2;
    assert_int_equal(setup_model_sizes_text(&m, &l, "tcp", 78, &sb, NULL), -EINVAL);
    contains(sb.s, "refused: --ep 2: Llama-3.1-70B is dense");
    strbuf_free(&sb);
}

static void test_command(void **state)
{
    (void)state;
    struct model_layout l;
    model_size_layout_defaults(&l);
    struct strbuf sb;
    strbuf_init(&sb);
    setup_model_command("Qwen3-8B", &l, "tcp", &sb);
    assert_string_equal(sb.s, "fabtop run --model Qwen3-8B --transport tcp");
    strbuf_reset(&sb);
    l.tp = 2;
    l.batch = 64;
    l.dtype = MODEL_DTYPE_FP8;
    l.engine = MODEL_ENGINE_TRTLLM;
    setup_model_command("DeepSeek-V3", &l, "nccl", &sb);
    assert_string_equal(sb.s, "fabtop run --model DeepSeek-V3 --tp 2 --batch 64 --dtype fp8 "
                              "--engine trtllm --transport nccl");
    strbuf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
