/* model_size: the sizes serving a model moves, from its shape (model_config.h) and a layout
 * (TP, PP, EP, batch, context, prompt, page, KV dtype, engine): TP all-reduce, KV cache per
 * token, rank, page and descriptor, MoE dispatch and combine, PP activations. Each formula
 * is stated in docs/serving.md; all sizes are bytes. */
#ifndef MODEL_SIZE_H
#define MODEL_SIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/ft_err.h"
#include "engine/model/model_config.h"

#define MODEL_SIZE_MAX_TP      1024
#define MODEL_SIZE_MAX_PP      1024
#define MODEL_SIZE_MAX_EP      1024
#define MODEL_SIZE_MAX_BATCH   65536
#define MODEL_SIZE_MAX_CONTEXT 16777216 /* tokens */
#define MODEL_SIZE_MAX_PAGE    65536    /* tokens */
/* DeepSeek-V3's FP8 dispatch: one float32 scale per 128 elements of a token's hidden state. */
#define MODEL_SIZE_FP8_GROUP       128
#define MODEL_SIZE_FP8_SCALE_BYTES 4

enum model_engine { MODEL_ENGINE_VLLM = 0, MODEL_ENGINE_SGLANG, MODEL_ENGINE_TRTLLM };
/* The KV cache's dtype (--dtype): the config's, or forced. */
enum model_dtype { MODEL_DTYPE_AUTO = 0, MODEL_DTYPE_BF16, MODEL_DTYPE_FP8 };
/* What one transfer descriptor covers: one (layer, K or V, page) when K and V lie apart
 * (vLLM's FlashAttention layout), one (layer, page) when they lie together (FlashInfer, as
 * SGLang and TensorRT-LLM are taken here) or the cache is one latent (MLA). */
enum model_kv_layout { MODEL_KV_LAYER_KV_PAGE = 0, MODEL_KV_LAYER_PAGE };

struct model_layout {
    long tp, pp, ep;
    long batch;   /* sequences decoding in one step (tokens per step per rank) */
    long context; /* tokens each sequence holds in the cache */
    long prompt;  /* tokens of one prefill (one request's KV transfer) */
    long page;    /* tokens per KV page (block) */
    enum model_dtype dtype;
    enum model_engine engine;
};

struct model_sizes {
    int act_bytes;     /* activations: all-reduce, PP, MoE combine (the config's dtype) */
    int kv_bytes;      /* one KV element */
    long layers_stage; /* layers on one PP stage (the largest stage) */
    long kv_heads_rank;
    bool kv_replicated; /* TP > KV heads: each KV head on TP / KV heads ranks */
    /* KV cache. */
    uint64_t kv_token;      /* per token, the whole model (every layer, every KV head once) */
    uint64_t kv_token_rank; /* per token on one rank (its KV heads, its stage's layers) */
    enum model_kv_layout kv_layout;
    uint64_t kv_page_rank;    /* one page on one rank, all its layers */
    uint64_t desc_bytes;      /* one descriptor */
    uint64_t prompt_pages;    /* pages of one prompt: ceil(prompt / page) */
    uint64_t descs;           /* descriptors of one prompt's KV on one rank */
    uint64_t kv_request_rank; /* one prompt's KV on one rank: descs x desc_bytes */
    uint64_t kv_batch_rank;   /* the batch's whole context on one rank (whole pages) */
    /* Tensor parallel all-reduce (0 when TP is 1). */
    long tp_allreduces;  /* per decode step on one stage: 2 per layer */
    uint64_t tp_decode;  /* one decode all-reduce: hidden x batch x act_bytes */
    uint64_t tp_prefill; /* one prefill all-reduce: hidden x prompt x act_bytes */
    int ring_steps;      /* ring all-reduce: 2 (TP - 1) steps ... */
    uint64_t ring_decode_chunk, ring_prefill_chunk; /* ... of ceil(S / TP) bytes each */
    /* Mixture of experts (0 when dense). */
    long moe_layers;
    bool dispatch_fp8;
    uint64_t dispatch_token;  /* one token's copy to one expert: hidden x bytes (+ scales) */
    uint64_t combine_token;   /* one expert's result back: hidden x act_bytes */
    uint64_t dispatch_decode; /* per MoE layer and step, leaving the rank: */
    uint64_t combine_decode;  /*   batch x k x token bytes x (EP - 1) / EP */
    uint64_t dispatch_prefill, combine_prefill; /* the same for one prompt */
    /* Pipeline parallel (0 when PP is 1): between two stages. */
    uint64_t pp_decode;  /* hidden x batch x act_bytes per step */
    uint64_t pp_prefill; /* hidden x prompt x act_bytes per prompt */
};

/* The defaults: TP, PP, EP 1, batch 32, context and prompt 8192, page 16, the config's
 * dtype, vLLM. */
void model_size_layout_defaults(struct model_layout *l);
/* Is the layout one this model can be served with? 0, or -EINVAL with one line naming the
 * option and what to do (docs/serving.md, "Layouts refused"). */
int model_size_check(const struct model_config *m, const struct model_layout *l,
                     struct ft_err *err);
/* Check, then every size: 0, -EINVAL (model_size_check) or -EOVERFLOW. */
int model_size_compute(const struct model_config *m, const struct model_layout *l,
                       struct model_sizes *s, struct ft_err *err);
const char *model_size_engine_str(enum model_engine e);
const char *model_size_layout_str(enum model_kv_layout k);

#endif
