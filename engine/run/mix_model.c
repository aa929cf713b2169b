/* mix_model: a serving mix from a model's sizes (docs/serving.md, "The mix"). */
#include "engine/run/mix_model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/flow/kv.h"
#include "engine/run/runner.h"

/* bytes in the largest binary unit that divides them exactly: "4KiB", "320MiB", "7392B". */
static void exact_bytes(uint64_t b, char *out, size_t len)
{
    if (b && b % (1ull << 30) == 0)
        snprintf(out, len, "%" PRIu64 "GiB", b >> 30);
    else if (b && b % (1ull << 20) == 0)
        snprintf(out, len, "%" PRIu64 "MiB", b >> 20);
    else if (b && b % 1024 == 0)
        snprintf(out, len, "%" PRIu64 "KiB", b >> 10);
    else
        snprintf(out, len, "%" PRIu64 "B", b);
}

struct gen {
    const char *transport;
    bool nccl;
    const char *act_dtype; /* NCCL's name for the activations' dtype */
    cJSON *flows;
    struct ft_err *err;
    int rc;
};

/* A flow with the reader's defaults written out; NULL once an error is set. */
static cJSON *flow(struct gen *g, const char *name, const char *role, const char *op, uint64_t size)
{
    if (g->rc)
        return NULL;
    if (strlen(name) >= sizeof(((struct mix_flow *)0)->name)) {
        g->rc = ft_err_set(g->err, -EINVAL, "flow name '%s' is too long (internal)", name);
        return NULL;
    }
    /* An emulated all-reduce's S may be larger than a message: it moves S / N per step. */
    uint64_t max = g->nccl || !strcmp(op, "collective") ? MIX_MAX_BYTES : MIX_MODEL_MAX_MSG;
    if (size > max) {
        g->rc = ft_err_set(g->err, -E2BIG,
                           "flow %s: %" PRIu64 " B is more than the %" PRIu64 " B a %s message "
                           "takes: lower --prompt or --batch",
                           name, size, max, g->transport);
        return NULL;
    }
    if (!g->nccl && !strcmp(op, "pingpong") && size < MIX_MODEL_MIN_MSG) {
        g->rc = ft_err_set(g->err, -EINVAL,
                           "flow %s: %" PRIu64 " B is less than the %d B a %s ping-pong carries "
                           "(its header): raise --batch",
                           name, size, MIX_MODEL_MIN_MSG, g->transport);
        return NULL;
    }
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "name", name);
    cJSON_AddStringToObject(f, "role", role);
    /* The class is the name's prefix (tp-, kv-, moe-, pp-), now also a field of its own; a
     * prefill flow's is its own (tp-prefill, pp-prefill): a prefill all-reduce is hundreds of
     * times a decode one, and only decode is on the step. */
    char cls[16];
    int pre = (int)strcspn(name, "-");
    bool prefill = !strncmp(name + pre, "-prefill", 8);
    snprintf(cls, sizeof(cls), "%.*s%s", pre, name, prefill ? "-prefill" : "");
    cJSON_AddStringToObject(f, "class", cls);
    cJSON_AddStringToObject(f, "transport", g->transport);
    cJSON_AddStringToObject(f, "op", op);
    cJSON_AddNumberToObject(f, "size", (double)size);
    cJSON_AddNumberToObject(f, "warmup_s", 0.3);
    if (!strcmp(role, "foreground"))
        cJSON_AddNumberToObject(f, "duration_s", 2);
    cJSON_AddStringToObject(f, "peer", "loopback");
    cJSON_AddItemToArray(g->flows, f);
    return f;
}

/* Operations of f on one decode step's critical path (mix.h: per_step). */
static void per_step(cJSON *f, double n)
{
    if (f && n > 0)
        cJSON_AddNumberToObject(f, "per_step", n);
}

/* An NCCL collective's params over n ranks (devices 0..n-1 when they fit, else all). */
static void coll(cJSON *f, const char *which, const char *dtype, long n, bool graph)
{
    if (!f)
        return;
    cJSON *p = cJSON_AddObjectToObject(f, "params");
    cJSON_AddStringToObject(p, "collective", which);
    cJSON_AddStringToObject(p, "dtype", dtype);
    if (!strcmp(which, "all_reduce"))
        cJSON_AddStringToObject(p, "redop", "sum");
    if (n >= 2 && n <= 16) {
        cJSON *g = cJSON_AddArrayToObject(p, "gpus");
        for (long i = 0; i < n; i++)
            cJSON_AddItemToArray(g, cJSON_CreateNumber((double)i));
    } else {
        cJSON_AddStringToObject(p, "gpus", "all");
    }
    if (graph)
        cJSON_AddBoolToObject(p, "graph", true);
}

/* The TP all-reduce of one phase: NCCL's all_reduce; over tcp and verbs a ring all-reduce's
 * message pattern between this host and its peer (op collective, params.ranks = TP: 2 (TP - 1)
 * steps of ceil(S / TP) bytes each way, engine/flow/ring.h), one sample per whole all-reduce. */
static void tp_flow(struct gen *g, const char *phase, const char *role, uint64_t size,
                    uint64_t chunk, const struct model_layout *l, long per_decode)
{
    char name[64];
    bool decode = !strcmp(phase, "decode");
    if (g->nccl) {
        snprintf(name, sizeof(name), "tp-%s-allreduce", phase);
        cJSON *f = flow(g, name, role, "collective", size);
        coll(f, "all_reduce", g->act_dtype, l->tp, decode);
        per_step(f, decode ? (double)per_decode : 0);
        return;
    }
    {
        snprintf(name, sizeof(name), "tp-%s-ring%ld", phase, l->tp);
        if (!g->rc && chunk > MIX_MODEL_MAX_MSG) {
            g->rc = ft_err_set(g->err, -E2BIG,
                               "flow %s: a ring step of %" PRIu64 " B is more than the %" PRIu64
                               " B a %s message takes: lower --prompt or --batch",
                               name, chunk, (uint64_t)MIX_MODEL_MAX_MSG, g->transport);
            return;
        }
        cJSON *f = flow(g, name, role, "collective", size);
        if (f) {
            cJSON *p = cJSON_AddObjectToObject(f, "params");
            cJSON_AddStringToObject(p, "collective", "all_reduce");
            cJSON_AddNumberToObject(p, "ranks", (double)l->tp);
        }
        per_step(f, decode ? (double)per_decode : 0);
    }
}

/* The kv flow's params for one prompt's KV on one rank (engine/flow/kv.h), and the number of
 * descriptors they make (kv_build over the prompt's pages): 0 or -errno. */
static int kv_params_model(const struct model_config *m, const struct model_layout *l,
                           const struct model_sizes *s, cJSON **out, long *ndesc)
{
    static const char *const engines[] = {"vllm", "sglang", "trtllm"};
    const char *layout = m->kv_lora_rank                          ? "mla"
                         : s->kv_layout == MODEL_KV_LAYER_KV_PAGE ? "flash"
                                                                  : "flashinfer";
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "engine", engines[l->engine]);
    cJSON_AddStringToObject(p, "layout", layout);
    cJSON_AddNumberToObject(p, "layers", (double)s->layers_stage);
    cJSON_AddNumberToObject(p, "pages", (double)s->prompt_pages);
    cJSON_AddNumberToObject(p, "page_tokens", (double)l->page);
    struct kv_params kp;
    int rc = kv_params_from_json(p, "kv", &kp, NULL);
    uint32_t *pages = rc ? NULL : malloc((size_t)s->prompt_pages * sizeof(uint32_t));
    if (!rc && !pages)
        rc = -ENOMEM;
    if (!rc) {
        int n = kv_request_pages(&kp, NULL, NULL, pages, (int)s->prompt_pages);
        *ndesc = n < 0 ? n : kv_build(&kp, s->desc_bytes, pages, n, NULL, 0);
        rc = *ndesc < 0 ? (int)*ndesc : 0;
    }
    free(pages);
    if (rc) {
        cJSON_Delete(p);
        return rc;
    }
    *out = p;
    return 0;
}

static const char *nccl_dtype(int bytes)
{
    return bytes == 4 ? "float" : "bfloat16";
}

cJSON *mix_model_json(const struct model_config *m, const struct model_layout *l,
                      const struct model_sizes *s, const char *transport, struct ft_err *err)
{
    if (strcmp(transport, "nccl") && strcmp(transport, "verbs") && strcmp(transport, "tcp")) {
        ft_err_set(err, -EINVAL, "--transport %s: give nccl, verbs or tcp", transport);
        return NULL;
    }
    struct gen g = {.transport = transport,
                    .nccl = !strcmp(transport, "nccl"),
                    .act_dtype = nccl_dtype(s->act_bytes),
                    .err = err};
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", MIX_FORMAT);
    cJSON_AddNumberToObject(doc, "version", MIX_VERSION);
    char buf[1024], b1[24], b2[24];
    snprintf(buf, sizeof(buf), "model-%s", m->name);
    buf[63] = '\0';
    cJSON_AddStringToObject(doc, "name", buf);
    snprintf(buf, sizeof(buf),
             "%s served by %s: TP %ld, PP %ld, EP %ld, batch %ld, context %ld, prompt %ld "
             "tokens, %ld-token pages, KV %d B per element, over %s. Sizes from %s "
             "(docs/serving.md).",
             m->name, model_size_engine_str(l->engine), l->tp, l->pp, l->ep, l->batch, l->context,
             l->prompt, l->page, s->kv_bytes, transport, m->source[0] ? m->source : m->what);
    buf[511] = '\0';
    cJSON_AddStringToObject(doc, "description", buf);
    exact_bytes(s->desc_bytes, b1, sizeof(b1));
    exact_bytes(s->kv_request_rank, b2, sizeof(b2));
    snprintf(buf, sizeof(buf),
             "Flows are named by class: tp- (tensor-parallel all-reduce, %ld per decode step), "
             "kv- (one prompt's KV cache per rank: %" PRIu64 " descriptors of %s, %s; over tcp "
             "and verbs one request of the engine's descriptor list, timed from the first posted "
             "to the notification; NCCL moves one descriptor), moe- (expert dispatch and "
             "combine), pp- (activations "
             "between stages). %s The foreground is the decode all-reduce, alone (quiet), then "
             "with the rest (loaded).",
             s->tp_allreduces, s->descs, b1, b2,
             g.nccl ? "NCCL runs the collectives themselves."
                    : "Over tcp and verbs the collectives are emulated between this host and its "
                      "peer: tp-*-ringN is a ring all-reduce's message pattern for N ranks, "
                      "2(N-1) full-duplex steps of S/N bytes each way, timed per whole "
                      "all-reduce (the mean step beside it; not NCCL); moe-* is one peer's share "
                      "of the all-to-all.");
    buf[1023] = '\0';
    cJSON_AddStringToObject(doc, "lesson", buf);
    cJSON *ph = cJSON_AddArrayToObject(doc, "phases");
    cJSON_AddItemToArray(ph, cJSON_CreateString("quiet"));
    cJSON_AddItemToArray(ph, cJSON_CreateString("loaded"));
    g.flows = cJSON_AddArrayToObject(doc, "flows");

    char name[64];
    if (l->tp > 1) {
        tp_flow(&g, "decode", "foreground", s->tp_decode, s->ring_decode_chunk, l,
                s->tp_allreduces);
        tp_flow(&g, "prefill", "background", s->tp_prefill, s->ring_prefill_chunk, l, 0);
    }
    /* KV transfer: over tcp and verbs a kv flow, the engine's descriptor list per request (the
     * name carries its count); over verbs vLLM's 64 READs in flight take 4 QPs (16 each, the
     * QP's max_rd_atomic). NCCL: one descriptor as a sendrecv. */
    exact_bytes(s->desc_bytes, b1, sizeof(b1));
    const char *kvrole = l->tp > 1 ? "background" : "foreground";
    if (!g.nccl && !g.rc) {
        cJSON *kp = NULL;
        long nd = 0;
        int rc = kv_params_model(m, l, s, &kp, &nd);
        if (rc) {
            g.rc = ft_err_set(err, rc,
                              "flow kv: one prompt's KV makes more than %u descriptors: lower "
                              "--prompt or raise --page",
                              KV_MAX_DESCS);
        } else {
            snprintf(name, sizeof(name), "kv-%sx%ld", b1, nd);
            cJSON *f = flow(&g, name, kvrole, "kv", s->desc_bytes);
            if (f && !strcmp(transport, "verbs") && l->engine == MODEL_ENGINE_VLLM)
                cJSON_AddNumberToObject(kp, "qps", 4);
            if (f)
                cJSON_AddItemToObject(f, "params", kp);
            else
                cJSON_Delete(kp);
        }
    } else {
        snprintf(name, sizeof(name), "kv-%sx%" PRIu64, b1, s->descs);
        coll(flow(&g, name, kvrole, "collective", s->desc_bytes), "sendrecv", "uint8", 2, false);
    }
    /* MoE: nothing leaves a rank at EP 1. */
    if (m->moe && l->ep > 1) {
        uint64_t k = (uint64_t)m->experts_per_tok, bt = (uint64_t)l->batch;
        /* One dispatch and one combine per MoE layer of a stage, each step. */
        double moe_steps = (double)((s->moe_layers + l->pp - 1) / l->pp);
        if (g.nccl) {
            /* alltoall's S is the whole buffer of a rank (nccl-tests' meaning). */
            snprintf(name, sizeof(name), "moe-dispatch-ep%ld", l->ep);
            cJSON *f = flow(&g, name, "background", "collective", bt * k * s->dispatch_token);
            coll(f, "alltoall", s->dispatch_fp8 ? "uint8" : g.act_dtype, l->ep, false);
            per_step(f, moe_steps);
            snprintf(name, sizeof(name), "moe-combine-ep%ld", l->ep);
            f = flow(&g, name, "background", "collective", bt * k * s->combine_token);
            coll(f, "alltoall", g.act_dtype, l->ep, false);
            per_step(f, moe_steps);
        } else {
            uint64_t d = s->dispatch_decode / (uint64_t)(l->ep - 1),
                     c = s->combine_decode / (uint64_t)(l->ep - 1);
            snprintf(name, sizeof(name), "moe-dispatch-ep%ld-peer", l->ep);
            per_step(flow(&g, name, "background", "pingpong", d), moe_steps);
            snprintf(name, sizeof(name), "moe-combine-ep%ld-peer", l->ep);
            per_step(flow(&g, name, "background", "pingpong", c), moe_steps);
        }
    }
    if (l->pp > 1) {
        /* A decode step's activations cross PP - 1 stage boundaries, one send each. */
        if (g.nccl) {
            cJSON *f = flow(&g, "pp-decode", "background", "collective", s->pp_decode);
            coll(f, "sendrecv", g.act_dtype, 2, false);
            per_step(f, (double)(l->pp - 1));
            coll(flow(&g, "pp-prefill", "background", "collective", s->pp_prefill), "sendrecv",
                 g.act_dtype, 2, false);
        } else {
            per_step(flow(&g, "pp-decode", "background", "pingpong", s->pp_decode),
                     (double)(l->pp - 1));
            flow(&g, "pp-prefill", "background", "stream", s->pp_prefill);
        }
    }
    if (g.rc) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

int mix_model_make(const struct model_config *m, const struct model_layout *l,
                   const struct model_sizes *s, const char *transport, struct mix *out,
                   struct ft_err *err)
{
    cJSON *doc = mix_model_json(m, l, s, transport, err);
    if (!doc)
        return err->code ? err->code : -EINVAL;
    char what[128];
    snprintf(what, sizeof(what), "the mix of model %s", m->name);
    int rc = mix_from_json(doc, what, out, err);
    cJSON_Delete(doc);
    return rc;
}

const char *mix_model_best_transport(char *why, size_t len)
{
    char w[512] = "", v[512] = "";
    if (runner_transport_available("nccl", w, sizeof(w)) == 0 &&
        runner_transport_devices("nccl") > 0) {
        if (why && len)
            why[0] = '\0';
        return "nccl";
    }
    const char *pick = runner_transport_available("verbs", v, sizeof(v)) == 0 ? "verbs" : "tcp";
    if (why && len)
        snprintf(why, len, "no nccl here (%.200s)%s%.200s", w[0] ? w : "unavailable",
                 strcmp(pick, "tcp") ? "" : "; no verbs: ", strcmp(pick, "tcp") ? "" : v);
    return pick;
}
