/* model_config: read a Hugging Face config.json into a model's shape; find the presets. */
#include "engine/model/model_config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/datadir.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

int model_config_dtype_bytes(const char *dtype)
{
    static const struct {
        const char *name;
        int bytes;
    } dtypes[] = {{"bfloat16", 2}, {"bf16", 2},    {"float16", 2},       {"fp16", 2},
                  {"half", 2},     {"float32", 4}, {"fp32", 4},          {"float", 4},
                  {"fp8", 1},      {"float8", 1},  {"float8_e4m3fn", 1}, {NULL, 0}};
    for (int i = 0; dtype && dtypes[i].name; i++)
        if (!strcasecmp(dtype, dtypes[i].name))
            return dtypes[i].bytes;
    return 0;
}

/* An integer field from 1 (lo) to MODEL_CONFIG_MAX_DIM: 1 when read, 0 when absent (or
 * null), -EINVAL (err set) when present but not a whole number in range. */
static int dim(const cJSON *doc, const char *what, const char *key, long lo, long *out,
               struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    int64_t x;
    if (!cJSON_IsNumber(v) || !jsonutil_whole(v->valuedouble, lo, MODEL_CONFIG_MAX_DIM, &x))
        return ft_err_set(err, -EINVAL, "%s: %s must be a whole number from %ld to %d", what, key,
                          lo, MODEL_CONFIG_MAX_DIM);
    *out = (long)x;
    return 1;
}

/* A field the arithmetic needs: absent is refused, naming it. */
static int need(const cJSON *doc, const char *what, const char *key, long *out, struct ft_err *err)
{
    int rc = dim(doc, what, key, 1, out, err);
    if (rc == 0)
        return ft_err_set(err, -EINVAL,
                          "%s: %s is missing (a Hugging Face config.json has it; add it)", what,
                          key);
    return rc < 0 ? rc : 0;
}

static void base_name(const char *what, char *out, size_t len)
{
    const char *b = strrchr(what, '/');
    snprintf(out, len, "%s", b ? b + 1 : what);
    char *dot = strstr(out, ".json");
    if (dot)
        *dot = '\0';
}

int model_config_from_json(const cJSON *doc, const char *what, struct model_config *m,
                           struct ft_err *err)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->what, sizeof(m->what), "%s", what);
    base_name(what, m->name, sizeof(m->name));
    if (!cJSON_IsObject(doc))
        return ft_err_set(err, -EINVAL,
                          "%s: not a model config (expected a JSON object, as "
                          "Hugging Face's config.json)",
                          what);
    const char *src = jsonutil_str(doc, "_source");
    if (src)
        snprintf(m->source, sizeof(m->source), "%s", src);
    int rc;
    if ((rc = need(doc, what, "hidden_size", &m->hidden, err)) < 0 ||
        (rc = need(doc, what, "num_hidden_layers", &m->layers, err)) < 0 ||
        (rc = need(doc, what, "num_attention_heads", &m->heads, err)) < 0)
        return rc;
    /* KV heads: absent means one per attention head (MHA). */
    m->kv_heads = m->heads;
    if (dim(doc, what, "num_key_value_heads", 1, &m->kv_heads, err) < 0)
        return -EINVAL;
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return ft_err_set(err, -EINVAL,
                          "%s: num_key_value_heads (%ld) must divide num_attention_heads (%ld)",
                          what, m->kv_heads, m->heads);
    rc = dim(doc, what, "head_dim", 1, &m->head_dim, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (m->hidden % m->heads)
            return ft_err_set(err, -EINVAL,
                              "%s: head_dim is missing and hidden_size (%ld) is not a multiple "
                              "of num_attention_heads (%ld): add head_dim",
                              what, m->hidden, m->heads);
        m->head_dim = m->hidden / m->heads;
    }
    const char *dt = jsonutil_str(doc, "torch_dtype");
    const char *key = "torch_dtype";
    if (!dt) {
        dt = jsonutil_str(doc, "dtype");
        key = "dtype";
    }
    if (!dt)
        return ft_err_set(err, -EINVAL,
                          "%s: torch_dtype (or dtype) is missing: add \"torch_dtype\": "
                          "\"bfloat16\" (or float16, float32)",
                          what);
    m->dtype_bytes = model_config_dtype_bytes(dt);
    if (!m->dtype_bytes || m->dtype_bytes == 1)
        return ft_err_set(err, -EINVAL, "%s: %s '%s' is not bfloat16, float16 or float32", what,
                          key, dt);
    snprintf(m->dtype, sizeof(m->dtype), "%s", dt);
    if (dim(doc, what, "intermediate_size", 1, &m->intermediate, err) < 0)
        return -EINVAL;

    /* Mixture of experts: DeepSeek names the routed experts n_routed_experts, Mixtral
     * num_local_experts. */
    const char *ekey = "n_routed_experts";
    rc = dim(doc, what, ekey, 1, &m->experts, err);
    if (rc == 0) {
        ekey = "num_local_experts";
        rc = dim(doc, what, ekey, 1, &m->experts, err);
    }
    if (rc < 0)
        return rc;
    m->moe = rc == 1;
    if (m->moe) {
        if ((rc = need(doc, what, "num_experts_per_tok", &m->experts_per_tok, err)) < 0)
            return rc;
        if (m->experts_per_tok > m->experts)
            return ft_err_set(err, -EINVAL, "%s: num_experts_per_tok (%ld) is more than %s (%ld)",
                              what, m->experts_per_tok, ekey, m->experts);
        m->moe_intermediate = m->intermediate;
        if (dim(doc, what, "moe_intermediate_size", 1, &m->moe_intermediate, err) < 0 ||
            dim(doc, what, "first_k_dense_replace", 0, &m->dense_layers, err) < 0)
            return -EINVAL;
        if (m->dense_layers >= m->layers)
            return ft_err_set(err, -EINVAL,
                              "%s: first_k_dense_replace (%ld) leaves no MoE layer of %ld", what,
                              m->dense_layers, m->layers);
    }

    /* Multi-head latent attention: the cache holds one latent per token and layer. */
    rc = dim(doc, what, "kv_lora_rank", 1, &m->kv_lora_rank, err);
    if (rc < 0)
        return rc;
    m->mla = rc == 1;
    if (m->mla && (rc = need(doc, what, "qk_rope_head_dim", &m->qk_rope_head_dim, err)) < 0)
        return rc;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(doc, "quantization_config");
    const char *qm = cJSON_IsObject(q) ? jsonutil_str(q, "quant_method") : NULL;
    m->fp8 = qm && !strcasecmp(qm, "fp8");
    return 0;
}

int model_config_load_file(const char *path, struct model_config *m, struct ft_err *err)
{
    cJSON *doc;
    int rc = jsonutil_load(path, &doc, err);
    if (rc < 0)
        return rc;
    rc = model_config_from_json(doc, path, m, err);
    cJSON_Delete(doc);
    return rc;
}

static int preset_dirs(char dirs[DATADIR_MAX][DATADIR_LEN])
{
    return datadir_search("models", FABTOP_MODEL_SOURCE_DIR, dirs);
}

int model_config_load(const char *name_or_path, struct model_config *m, struct ft_err *err)
{
    struct stat st;
    if ((stat(name_or_path, &st) == 0 && !S_ISDIR(st.st_mode)) || strchr(name_or_path, '/') ||
        strstr(name_or_path, ".json"))
        return model_config_load_file(name_or_path, m, err);
    char dirs[DATADIR_MAX][DATADIR_LEN];
    int n = preset_dirs(dirs);
    for (int i = 0; i < n; i++) {
        char path[700];
        snprintf(path, sizeof(path), "%s/%s.json", dirs[i], name_or_path);
        if (fsutil_exists("/", path)) {
            int rc = model_config_load_file(path, m, err);
            if (rc == 0)
                snprintf(m->name, sizeof(m->name), "%s", name_or_path);
            return rc;
        }
    }
    struct strbuf sb;
    strbuf_init(&sb);
    char **names = model_config_presets();
    for (char **p = names; p && *p; p++)
        strbuf_printf(&sb, "%s%s", p == names ? "" : ", ", *p);
    int rc = ft_err_set(err, -ENOENT, "model '%s': no such preset or config.json (presets: %s)",
                        name_or_path, sb.len ? sb.s : "none found");
    model_config_free_names(names);
    strbuf_free(&sb);
    return rc;
}

char **model_config_presets(void)
{
    char dirs[DATADIR_MAX][DATADIR_LEN];
    int n = preset_dirs(dirs), count = 0;
    char **out = xalloc_zero(1, sizeof(char *));
    for (int i = 0; i < n; i++)
        fsutil_add_json_names(dirs[i], "", &out, &count);
    return out;
}

void model_config_free_names(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}
