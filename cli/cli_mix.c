/* cli_mix: `fabtop mix --model NAME|config.json`: print the serving mix of a model (a
 * fabtop-mix document `fabtop run --mix FILE` loads) and the sizes it comes from. */
#include "cli/cli_mix.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/run/mix_model.h"
#include "engine/run/runner.h"

const struct cli_enum cli_mix_dtypes[] = {{"bf16", MODEL_DTYPE_BF16, 0},
                                          {"fp8", MODEL_DTYPE_FP8, 0},
                                          {"bfloat16", MODEL_DTYPE_BF16, 1},
                                          {NULL, 0, 0}};
const struct cli_enum cli_mix_engines[] = {{"vllm", MODEL_ENGINE_VLLM + 1, 0},
                                           {"sglang", MODEL_ENGINE_SGLANG + 1, 0},
                                           {"trtllm", MODEL_ENGINE_TRTLLM + 1, 0},
                                           {NULL, 0, 0}};

struct mix_args {
    struct cli_mix_model model;
    int transport; /* 0: nccl */
    bool json, list;
    const char *out;
};

static const struct cli_enum mix_transports[] = {
    {"nccl", 1, 0}, {"verbs", 2, 0}, {"tcp", 3, 0}, {NULL, 0, 0}};

#define A(f) offsetof(struct mix_args, f)
static const struct cli_opt mix_opts[] = {
    CLI_MIX_MODEL_OPTS(A(model)),
    {"transport", 0, CLI_ARG_REQUIRED, "NAME",
     "nccl, verbs or tcp (default: the best available here,\nin that order); over verbs and tcp "
     "the "
     "collectives are\nemulated by their ring / all-to-all pattern",
     CLI_V_ENUM, .values = mix_transports, .off = A(transport)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also save the mix to FILE (atomically)",
     CLI_V_STRING, CLI_C_FILE, .off = A(out)},
    {"json", 0, CLI_ARG_NONE, NULL, "print only the mix document, without the summary", CLI_V_SET,
     .off = A(json)},
    {"list", 'l', CLI_ARG_NONE, NULL, "list the model presets", CLI_V_SET, .off = A(list)},
};
#undef A

const struct cli_command cli_mix_command = {
    .name = "mix",
    .summary = "make a serving traffic mix from a model's config.json",
    .synopsis = "Usage: fabtop mix --model NAME|config.json [OPTIONS]\n"
                "Derive a model's serving traffic (TP all-reduce, KV-cache transfer, MoE\n"
                "dispatch and combine, PP activations) and print it as a fabtop mix, which\n"
                "`fabtop run --mix FILE` runs (or `fabtop run --model` directly).\n",
    .opts = mix_opts,
    .nopts = sizeof(mix_opts) / sizeof(mix_opts[0]),
    .epilogue = "Sizes are bytes; KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes. Every formula is in\n"
                "docs/serving.md. Exit status: 0 ok, 64 usage or a layout the model cannot\n"
                "take, 65 a bad config.json, 66 a missing one, 73 cannot write -o FILE.\n",
    .help_col = 24,
    .main = cli_mix_main,
};

int cli_mix_build(const char *cmd, const struct cli_mix_model *a, const char *transport,
                  struct mix *out, struct cli_mix_result *res)
{
    struct cli_mix_result local, *r = res ? res : &local;
    struct ft_err err = {0};
    if (!a->model)
        return cli_usage_error(cmd, "--model is required (try 'fabtop mix --list')");
    if (model_config_load(a->model, &r->m, &err) < 0)
        return cli_fail(&err);
    model_size_layout_defaults(&r->l);
    struct model_layout *l = &r->l;
    if (a->tp)
        l->tp = a->tp;
    if (a->pp)
        l->pp = a->pp;
    if (a->ep)
        l->ep = a->ep;
    if (a->batch)
        l->batch = a->batch;
    if (a->context)
        l->context = a->context;
    if (a->prompt)
        l->prompt = a->prompt;
    if (a->page)
        l->page = a->page;
    /* A prompt longer than the default context makes the context as long. */
    if (a->prompt && !a->context && l->prompt > l->context)
        l->context = l->prompt;
    l->dtype = (enum model_dtype)a->dtype;
    if (a->engine)
        l->engine = (enum model_engine)(a->engine - 1);
    if (model_size_compute(&r->m, l, &r->s, &err) < 0)
        return cli_usage_error(cmd, "%s", err.msg);
    if (mix_model_make(&r->m, l, &r->s, transport, out, &err) < 0)
        return cli_usage_error(cmd, "%s", err.msg);
    return 0;
}

/* "335544320 B (320 MiB)": bytes, then the largest binary unit under them. */
static void bytes(struct strbuf *sb, uint64_t b)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    strbuf_printf(sb, "%" PRIu64 " B", b);
    double v = (double)b;
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (u >= 0)
        strbuf_printf(sb, " (%.4g %s)", v, units[u]);
}

void cli_mix_summary(struct strbuf *sb, const struct model_config *m, const struct model_layout *l,
                     const struct model_sizes *s, const char *transport)
{
    strbuf_printf(sb, "%s", m->name);
    if (m->source[0])
        strbuf_printf(sb, " (from %s)", m->source);
    strbuf_printf(sb, "\n  shape   hidden %ld, %ld layers, %ld attention heads, ", m->hidden,
                  m->layers, m->heads);
    /* MLA caches a latent: its KV heads and head_dim do not size the cache. */
    if (!m->mla)
        strbuf_printf(sb, "%ld KV heads, head_dim %ld, ", m->kv_heads, m->head_dim);
    strbuf_printf(sb, "%s (%d B)", m->dtype, m->dtype_bytes);
    if (m->mla)
        strbuf_printf(sb, "; MLA latent %ld + rope %ld", m->kv_lora_rank, m->qk_rope_head_dim);
    if (m->moe)
        strbuf_printf(sb, "; MoE %ld experts, %ld per token, %ld dense layers", m->experts,
                      m->experts_per_tok, m->dense_layers);
    strbuf_printf(sb,
                  "\n  layout  TP %ld, PP %ld (%ld layers per stage), EP %ld; batch %ld, "
                  "context %ld, prompt %ld tokens; %ld-token pages; %s; over %s\n",
                  l->tp, l->pp, s->layers_stage, l->ep, l->batch, l->context, l->prompt, l->page,
                  model_size_engine_str(l->engine), transport);
    strbuf_printf(sb, "  KV      per token ");
    bytes(sb, s->kv_token);
    strbuf_printf(sb, ", per token per rank ");
    bytes(sb, s->kv_token_rank);
    if (!m->mla)
        strbuf_printf(sb, " (%ld KV head%s per rank%s)", s->kv_heads_rank,
                      s->kv_heads_rank == 1 ? "" : "s", s->kv_replicated ? ", replicated" : "");
    else
        strbuf_printf(sb, " (the whole latent on every rank)");
    strbuf_printf(sb, ", %d B per element\n          descriptor ", s->kv_bytes);
    bytes(sb, s->desc_bytes);
    strbuf_printf(
        sb, ", %s\n          one %ld-token prompt: %" PRIu64 " pages, %" PRIu64 " descriptors, ",
        model_size_layout_str(s->kv_layout), l->prompt, s->prompt_pages, s->descs);
    bytes(sb, s->kv_request_rank);
    strbuf_printf(sb, " per rank\n          the batch's context: ");
    bytes(sb, s->kv_batch_rank);
    strbuf_printf(sb, " per rank\n");
    if (l->tp > 1) {
        strbuf_printf(sb, "  TP      decode all-reduce ");
        bytes(sb, s->tp_decode);
        strbuf_printf(sb, ", %ld per step (", s->tp_allreduces);
        bytes(sb, (uint64_t)s->tp_allreduces * s->tp_decode);
        strbuf_printf(sb, " per step); prefill all-reduce ");
        bytes(sb, s->tp_prefill);
        strbuf_printf(sb, "\n");
        if (strcmp(transport, "nccl")) {
            strbuf_printf(sb, "          ring pattern over %s: %d steps of ", transport,
                          s->ring_steps);
            bytes(sb, s->ring_decode_chunk);
            strbuf_printf(sb, " (decode), of ");
            bytes(sb, s->ring_prefill_chunk);
            strbuf_printf(sb, " (prefill)\n");
        }
    }
    if (m->moe) {
        strbuf_printf(sb, "  MoE     %ld MoE layers; per token and expert: dispatch ",
                      s->moe_layers);
        bytes(sb, s->dispatch_token);
        strbuf_printf(sb, "%s, combine ",
                      s->dispatch_fp8 ? " (FP8 + one 4 B scale per 128 elements)" : "");
        bytes(sb, s->combine_token);
        strbuf_printf(sb, "\n          per layer and step leaving a rank: dispatch ");
        bytes(sb, s->dispatch_decode);
        strbuf_printf(sb, ", combine ");
        bytes(sb, s->combine_decode);
        strbuf_printf(sb, "; per prompt: dispatch ");
        bytes(sb, s->dispatch_prefill);
        strbuf_printf(sb, ", combine ");
        bytes(sb, s->combine_prefill);
        strbuf_printf(sb, "%s\n", l->ep > 1 ? "" : " (EP 1: nothing leaves the rank)");
    }
    if (l->pp > 1) {
        strbuf_printf(sb, "  PP      activations per decode step ");
        bytes(sb, s->pp_decode);
        strbuf_printf(sb, ", per prompt ");
        bytes(sb, s->pp_prefill);
        strbuf_printf(sb, "\n");
    }
}

static void list_models(void)
{
    char **names = model_config_presets();
    for (char **p = names; *p; p++) {
        struct model_config m;
        struct ft_err err = {0};
        if (model_config_load(*p, &m, &err) == 0)
            printf("%-16s %s\n", *p, m.source);
        else
            printf("%-16s (unreadable: %s)\n", *p, err.msg);
    }
    model_config_free_names(names);
}

int cli_mix_main(int argc, char **argv)
{
    struct mix_args o = {0};
    int first, rc = cli_parse_args(&cli_mix_command, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (first < argc)
        return cli_usage_error("mix", "unexpected argument '%s'", argv[first]);
    if (o.list) {
        list_models();
        return CLI_OK;
    }
    if (o.out && cli_check_output(o.out) != CLI_OK)
        return CLI_CANTCREAT;
    char why[600] = "";
    const char *transport = o.transport ? mix_transports[o.transport - 1].name
                                        : mix_model_best_transport(why, sizeof(why));
    struct mix *mix = calloc(1, sizeof(*mix));
    struct cli_mix_result *r = calloc(1, sizeof(*r));
    rc = cli_mix_build("mix", &o.model, transport, mix, r);
    if (rc == 0) {
        cJSON *doc = mix_to_json(mix);
        if (!o.json) {
            struct strbuf sb;
            strbuf_init(&sb);
            cli_mix_summary(&sb, &r->m, &r->l, &r->s, transport);
            if (!o.transport)
                strbuf_printf(&sb,
                              "transport %s: the best available here (--transport to "
                              "choose)%s%s\n",
                              transport, why[0] ? "; " : "", why);
            fputs(sb.s, stdout);
            fputc('\n', stdout);
            strbuf_free(&sb);
        }
        char *text = cJSON_Print(doc);
        puts(text);
        cJSON_free(text);
        if (o.out)
            rc = cli_save_json(doc, o.out, "mix");
        cJSON_Delete(doc);
        mix_free(mix);
    }
    free(mix);
    free(r);
    return rc;
}
