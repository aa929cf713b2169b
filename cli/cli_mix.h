/* cli_mix: `fabtop mix --model`: a serving mix from a model (engine/run/mix_model.h), its
 * options shared with `fabtop run --model` (CLI_MIX_MODEL_OPTS), the mix and the human
 * summary of the sizes it was built from. */
#ifndef CLI_MIX_H
#define CLI_MIX_H

#include <stddef.h>

#include "cli/cli_opts.h"
#include "common/strbuf.h"
#include "engine/flow/mix.h"
#include "engine/model/model_config.h"
#include "engine/model/model_size.h"

/* The model options as given; 0 / NULL: not given (the defaults of engine/model/model_size.h). */
struct cli_mix_model {
    const char *model;
    long tp, pp, ep, batch, context, prompt, page;
    int dtype;  /* 0, or enum model_dtype */
    int engine; /* 0, or enum model_engine + 1 */
};

extern const struct cli_enum cli_mix_dtypes[];
extern const struct cli_enum cli_mix_engines[];

/* The option table's entries for struct cli_mix_model at offset base of a command's args. */
#define CLI_MIX_MODEL_OPTS(base)                                                                   \
    {"model",                                                                                      \
     0,                                                                                            \
     CLI_ARG_REQUIRED,                                                                             \
     "NAME|FILE",                                                                                  \
     "a model preset (Llama-3.1-70B, DeepSeek-V3, ...) or a\nHugging Face config.json",            \
     CLI_V_STRING,                                                                                 \
     CLI_C_MODEL,                                                                                  \
     .off = (base) + offsetof(struct cli_mix_model, model)},                                       \
        {"tp",                                                                                     \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "N",                                                                                      \
         "tensor-parallel ranks (default 1)",                                                      \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_TP,                                                                 \
         .off = (base) + offsetof(struct cli_mix_model, tp)},                                      \
        {"pp",                                                                                     \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "N",                                                                                      \
         "pipeline stages (default 1)",                                                            \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_PP,                                                                 \
         .off = (base) + offsetof(struct cli_mix_model, pp)},                                      \
        {"ep",                                                                                     \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "N",                                                                                      \
         "expert-parallel ranks, MoE models (default 1)",                                          \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_EP,                                                                 \
         .off = (base) + offsetof(struct cli_mix_model, ep)},                                      \
        {"batch",                                                                                  \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "B",                                                                                      \
         "sequences per decode step (default 32)",                                                 \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_BATCH,                                                              \
         .off = (base) + offsetof(struct cli_mix_model, batch)},                                   \
        {"context",                                                                                \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "T",                                                                                      \
         "tokens each sequence holds (default 8192)",                                              \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_CONTEXT,                                                            \
         .off = (base) + offsetof(struct cli_mix_model, context)},                                 \
        {"prompt",                                                                                 \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "T",                                                                                      \
         "tokens of one prefill, one request's KV transfer\n(default 8192)",                       \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_CONTEXT,                                                            \
         .off = (base) + offsetof(struct cli_mix_model, prompt)},                                  \
        {"page",                                                                                   \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "T",                                                                                      \
         "tokens per KV page (default 16)",                                                        \
         CLI_V_INTEGER,                                                                            \
         .min = 1,                                                                                 \
         .max = MODEL_SIZE_MAX_PAGE,                                                               \
         .bad = "--page takes 1 to 65536 tokens (a page holds at least one), not '%s'",            \
         .off = (base) + offsetof(struct cli_mix_model, page)},                                    \
        {"dtype",                                                                                  \
         0,                                                                                        \
         CLI_ARG_REQUIRED,                                                                         \
         "bf16|fp8",                                                                               \
         "the KV cache's and MoE dispatch's dtype (default: the\nconfig's torch_dtype; "           \
         "DeepSeek-V3 dispatches FP8)",                                                            \
         CLI_V_ENUM,                                                                               \
         .values = cli_mix_dtypes,                                                                 \
         .off = (base) + offsetof(struct cli_mix_model, dtype)},                                   \
    {                                                                                              \
        "engine", 0, CLI_ARG_REQUIRED, "NAME",                                                     \
            "vllm, sglang or trtllm: the KV layout (default vllm)", CLI_V_ENUM,                    \
            .values = cli_mix_engines, .off = (base) + offsetof(struct cli_mix_model, engine)      \
    }

/* What a mix was built from. */
struct cli_mix_result {
    struct model_config m;
    struct model_layout l;
    struct model_sizes s;
};

/* The model, its sizes and its mix over transport ("nccl", "verbs", "tcp") from the options
 * of command cmd: 0, or the exit status after one line on stderr (66 a missing config, 65 a
 * bad one, 64 a layout the model cannot take). r may be NULL. */
int cli_mix_build(const char *cmd, const struct cli_mix_model *a, const char *transport,
                  struct mix *out, struct cli_mix_result *r);
/* The human summary of the sizes (units written out). */
void cli_mix_summary(struct strbuf *sb, const struct model_config *m, const struct model_layout *l,
                     const struct model_sizes *s, const char *transport);
int cli_mix_main(int argc, char **argv);

#endif
