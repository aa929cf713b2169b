/* model_config: a model's shape from its Hugging Face config.json (hidden size, layers,
 * attention and KV heads, head_dim, dtype; MoE experts; MLA latent), as docs/serving.md
 * reads it. Presets ship as config files in engine/models/, each naming its source. */
#ifndef MODEL_CONFIG_H
#define MODEL_CONFIG_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

/* The largest value any one dimension may take (hidden size, heads, experts, layers). */
#define MODEL_CONFIG_MAX_DIM 1048576

struct model_config {
    char name[64];     /* the preset's name or the file's base name */
    char source[256];  /* "_source": the config.json the values come from ("" if none) */
    char what[256];    /* what it was read from, for messages */
    long hidden;       /* hidden_size */
    long layers;       /* num_hidden_layers */
    long heads;        /* num_attention_heads */
    long kv_heads;     /* num_key_value_heads (absent: heads, MHA) */
    long head_dim;     /* head_dim (absent: hidden / heads) */
    char dtype[16];    /* torch_dtype or dtype: "bfloat16", "float16", "float32" */
    int dtype_bytes;   /* 2, 2, 4 */
    long intermediate; /* intermediate_size (0 if absent) */
    /* Mixture of experts: n_routed_experts or num_local_experts present. */
    bool moe;
    long experts;          /* routed experts */
    long experts_per_tok;  /* num_experts_per_tok */
    long moe_intermediate; /* moe_intermediate_size (absent: intermediate_size) */
    long dense_layers;     /* first_k_dense_replace (absent: 0) */
    /* Multi-head latent attention: kv_lora_rank present. */
    bool mla;
    long kv_lora_rank;
    long qk_rope_head_dim;
    /* quantization_config.quant_method is "fp8" (DeepSeek-V3: FP8 MoE dispatch). */
    bool fp8;
};

/* Read a config.json document; what names it in errors. A needed field absent or out of
 * range is refused naming the field: 0 or -EINVAL. */
int model_config_from_json(const cJSON *doc, const char *what, struct model_config *m,
                           struct ft_err *err);
/* A config.json file (-ENOENT when missing, -EINVAL when malformed). */
int model_config_load_file(const char *path, struct model_config *m, struct ft_err *err);
/* NAME (a preset: $XDG_CONFIG_HOME/fabtop/models, the installed share/fabtop/models, this
 * source tree's engine/models) or a FILE path (anything with a '/' or ".json" in it, or that
 * exists). */
int model_config_load(const char *name_or_path, struct model_config *m, struct ft_err *err);
/* The preset names (NULL-terminated; free with model_config_free_names). */
char **model_config_presets(void);
void model_config_free_names(char **names);
/* Bytes of one element of a dtype name ("bfloat16", "bf16", "fp8", ...): 0 if unknown. */
int model_config_dtype_bytes(const char *dtype);

#endif
