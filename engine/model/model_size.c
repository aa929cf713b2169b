/* model_size: serving sizes from a model's shape and a layout (docs/serving.md). */
#include "engine/model/model_size.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void model_size_layout_defaults(struct model_layout *l)
{
    *l = (struct model_layout){.tp = 1,
                               .pp = 1,
                               .ep = 1,
                               .batch = 32,
                               .context = 8192,
                               .prompt = 8192,
                               .page = 16,
                               .dtype = MODEL_DTYPE_AUTO,
                               .engine = MODEL_ENGINE_VLLM};
}

const char *model_size_engine_str(enum model_engine e)
{
    static const char *const names[] = {"vllm", "sglang", "trtllm"};
    return (unsigned)e <= MODEL_ENGINE_TRTLLM ? names[e] : "?";
}

const char *model_size_layout_str(enum model_kv_layout k)
{
    return k == MODEL_KV_LAYER_KV_PAGE ? "one descriptor per (layer, K or V, page)"
                                       : "one descriptor per (layer, page)";
}

static int range(const char *opt, long v, long lo, long hi, const char *unit, struct ft_err *err)
{
    if (v >= lo && v <= hi)
        return 0;
    return ft_err_set(err, -EINVAL, "--%s %ld is out of range: give %ld to %ld %s", opt, v, lo, hi,
                      unit);
}

int model_size_check(const struct model_config *m, const struct model_layout *l, struct ft_err *err)
{
    int rc;
    if ((rc = range("tp", l->tp, 1, MODEL_SIZE_MAX_TP, "ranks", err)) < 0 ||
        (rc = range("pp", l->pp, 1, MODEL_SIZE_MAX_PP, "stages", err)) < 0 ||
        (rc = range("ep", l->ep, 1, MODEL_SIZE_MAX_EP, "ranks", err)) < 0 ||
        (rc = range("batch", l->batch, 1, MODEL_SIZE_MAX_BATCH, "sequences", err)) < 0 ||
        (rc = range("context", l->context, 1, MODEL_SIZE_MAX_CONTEXT, "tokens", err)) < 0 ||
        (rc = range("prompt", l->prompt, 1, MODEL_SIZE_MAX_CONTEXT, "tokens", err)) < 0)
        return rc;
    if (l->page < 1 || l->page > MODEL_SIZE_MAX_PAGE)
        return ft_err_set(err, -EINVAL,
                          "--page %ld: a KV page holds 1 to %d tokens (vLLM's default is 16)",
                          l->page, MODEL_SIZE_MAX_PAGE);
    if (l->prompt > l->context)
        return ft_err_set(err, -EINVAL,
                          "--prompt %ld is longer than --context %ld: the context holds the "
                          "prompt; raise --context",
                          l->prompt, l->context);
    /* TP splits the attention heads: each rank needs whole query heads. */
    if (m->heads % l->tp)
        return ft_err_set(err, -EINVAL,
                          "--tp %ld does not divide %s's %ld attention heads: pick a divisor",
                          l->tp, m->name, m->heads);
    /* KV heads: split (TP divides them) or replicated (TP a multiple of them); MLA's latent
     * is not split by heads at all. */
    if (!m->mla && m->kv_heads % l->tp && l->tp % m->kv_heads)
        return ft_err_set(err, -EINVAL,
                          "--tp %ld and %s's %ld KV heads: neither divides the other (each rank "
                          "would hold part of a head); pick a TP that divides %ld or a multiple "
                          "of it",
                          l->tp, m->name, m->kv_heads, m->kv_heads);
    /* PP: every stage holds at least one layer; stages hold floor or ceil(layers / PP). */
    if (l->pp > m->layers)
        return ft_err_set(err, -EINVAL,
                          "--pp %ld is more than %s's %ld layers: a stage would hold no layer",
                          l->pp, m->name, m->layers);
    if (!m->moe && l->ep > 1)
        return ft_err_set(err, -EINVAL, "--ep %ld: %s is dense (no experts); leave --ep at 1",
                          l->ep, m->name);
    if (m->moe && m->experts % l->ep)
        return ft_err_set(err, -EINVAL,
                          "--ep %ld does not divide %s's %ld routed experts: pick a divisor", l->ep,
                          m->name, m->experts);
    return 0;
}

/* a * b, remembering an overflow in *of. */
static uint64_t mul(uint64_t a, uint64_t b, bool *of)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *of = true;
        return UINT64_MAX;
    }
    return r;
}

static uint64_t mul3(uint64_t a, uint64_t b, uint64_t c, bool *of)
{
    return mul(mul(a, b, of), c, of);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* x (EP - 1) / EP, rounded down: what leaves one rank of an all-to-all. */
static uint64_t off_rank(uint64_t x, long ep, bool *of)
{
    return mul(x / (uint64_t)ep, (uint64_t)(ep - 1), of) +
           (x % (uint64_t)ep) * (uint64_t)(ep - 1) / (uint64_t)ep;
}

int model_size_compute(const struct model_config *m, const struct model_layout *l,
                       struct model_sizes *s, struct ft_err *err)
{
    memset(s, 0, sizeof(*s));
    int rc = model_size_check(m, l, err);
    if (rc < 0)
        return rc;
    bool of = false;
    s->act_bytes = m->dtype_bytes;
    s->kv_bytes = l->dtype == MODEL_DTYPE_FP8    ? 1
                  : l->dtype == MODEL_DTYPE_BF16 ? 2
                                                 : m->dtype_bytes;
    s->layers_stage = (m->layers + l->pp - 1) / l->pp;
    uint64_t L = (uint64_t)m->layers, Ls = (uint64_t)s->layers_stage, kvb = (uint64_t)s->kv_bytes;
    uint64_t page = (uint64_t)l->page;

    /* KV cache. */
    if (m->mla) {
        /* One latent (kv_lora_rank) and one rope key per token and layer, no K/V pair, and
         * every TP rank holds the whole latent. */
        uint64_t lat = (uint64_t)(m->kv_lora_rank + m->qk_rope_head_dim);
        s->kv_heads_rank = 1;
        s->kv_token = mul3(lat, L, kvb, &of);
        s->kv_token_rank = mul3(lat, Ls, kvb, &of);
        s->kv_layout = MODEL_KV_LAYER_PAGE;
        s->desc_bytes = mul3(lat, kvb, page, &of);
    } else {
        s->kv_replicated = l->tp > m->kv_heads;
        s->kv_heads_rank = s->kv_replicated ? 1 : m->kv_heads / l->tp;
        uint64_t hd = (uint64_t)m->head_dim, kvr = (uint64_t)s->kv_heads_rank;
        s->kv_token = mul(2 * L, mul3((uint64_t)m->kv_heads, hd, kvb, &of), &of);
        s->kv_token_rank = mul(2 * Ls, mul3(kvr, hd, kvb, &of), &of);
        s->kv_layout =
            l->engine == MODEL_ENGINE_VLLM ? MODEL_KV_LAYER_KV_PAGE : MODEL_KV_LAYER_PAGE;
        uint64_t one = mul3(kvr, hd, kvb, &of); /* K (or V) of one token, one layer */
        s->desc_bytes = mul(mul(one, page, &of), s->kv_layout == MODEL_KV_LAYER_PAGE ? 2 : 1, &of);
    }
    s->kv_page_rank = mul(s->kv_token_rank, page, &of);
    s->prompt_pages = ceil_div((uint64_t)l->prompt, page);
    s->descs = mul3(Ls, s->kv_layout == MODEL_KV_LAYER_KV_PAGE ? 2 : 1, s->prompt_pages, &of);
    s->kv_request_rank = mul(s->descs, s->desc_bytes, &of);
    s->kv_batch_rank =
        mul3((uint64_t)l->batch, ceil_div((uint64_t)l->context, page), s->kv_page_rank, &of);

    /* Tensor parallel: two all-reduces per layer (after attention, after the MLP). */
    uint64_t H = (uint64_t)m->hidden, act = (uint64_t)s->act_bytes;
    uint64_t tp = (uint64_t)l->tp;
    if (l->tp > 1) {
        s->tp_allreduces = 2 * s->layers_stage;
        s->tp_decode = mul3(H, (uint64_t)l->batch, act, &of);
        s->tp_prefill = mul3(H, (uint64_t)l->prompt, act, &of);
        s->ring_steps = 2 * (int)(l->tp - 1);
        s->ring_decode_chunk = ceil_div(s->tp_decode, tp);
        s->ring_prefill_chunk = ceil_div(s->tp_prefill, tp);
    }

    /* Mixture of experts: in the MoE layers only. */
    if (m->moe) {
        s->moe_layers = m->layers - m->dense_layers;
        s->dispatch_fp8 = l->dtype == MODEL_DTYPE_FP8 || (l->dtype == MODEL_DTYPE_AUTO && m->fp8);
        s->dispatch_token = s->dispatch_fp8
                                ? H + ceil_div(H, MODEL_SIZE_FP8_GROUP) * MODEL_SIZE_FP8_SCALE_BYTES
                                : mul(H, act, &of);
        s->combine_token = mul(H, act, &of);
        uint64_t k = (uint64_t)m->experts_per_tok;
        s->dispatch_decode =
            off_rank(mul3((uint64_t)l->batch, k, s->dispatch_token, &of), l->ep, &of);
        s->combine_decode =
            off_rank(mul3((uint64_t)l->batch, k, s->combine_token, &of), l->ep, &of);
        s->dispatch_prefill =
            off_rank(mul3((uint64_t)l->prompt, k, s->dispatch_token, &of), l->ep, &of);
        s->combine_prefill =
            off_rank(mul3((uint64_t)l->prompt, k, s->combine_token, &of), l->ep, &of);
    }

    /* Pipeline parallel: one stage's output to the next. */
    if (l->pp > 1) {
        s->pp_decode = mul3(H, (uint64_t)l->batch, act, &of);
        s->pp_prefill = mul3(H, (uint64_t)l->prompt, act, &of);
    }
    if (of)
        return ft_err_set(err, -EOVERFLOW,
                          "%s: the sizes of this layout overflow 64 bits: lower --batch, "
                          "--context or --prompt",
                          m->what);
    return 0;
}
