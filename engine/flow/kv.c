/* kv: params, trace, pages and descriptor lists of a KV-cache transfer (pure functions). */
#include "engine/flow/kv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"

static const char *const engine_names[] = {"vllm", "sglang", "trtllm"};
static const char *const layout_names[] = {"flash", "flashinfer", "mla"};
static const char *const arrival_names[] = {"fixed", "poisson", "trace"};

const char *kv_engine_str(enum kv_engine e)
{
    return (unsigned)e <= KV_ENGINE_TRTLLM ? engine_names[e] : "?";
}

const char *kv_layout_str(enum kv_layout l)
{
    return (unsigned)l <= KV_LAYOUT_MLA ? layout_names[l] : "?";
}

const char *kv_arrival_str(enum kv_arrival a)
{
    return (unsigned)a <= KV_ARRIVAL_TRACE ? arrival_names[a] : "?";
}

const char *const *kv_param_keys(void)
{
    static const char *const keys[] = {"engine",      "layout",         "layers",           "pages",
                                       "page_tokens", "run_pages",      "layers_per_block", "depth",
                                       "qps",         "doorbell_batch", "arrival",          NULL};
    return keys;
}

static int pick(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int whole(const cJSON *o, const char *key, const char *flow, const char *where, int dflt,
                 int lo, int hi, int *out, struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    int64_t x;
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !jsonutil_whole(v->valuedouble, lo, hi, &x))
        return ft_err_set(err, -EINVAL, "flow %s: params.%s%s must be a whole number from %d to %d",
                          flow, where, key, lo, hi);
    *out = (int)x;
    return 0;
}

int kv_params_from_json(const cJSON *params, const char *flow, struct kv_params *p,
                        struct ft_err *err)
{
    memset(p, 0, sizeof(*p));
    if (params && !cJSON_IsObject(params))
        return ft_err_set(err, -EINVAL, "flow %s: params must be an object", flow);
    const char *eng = jsonutil_str(params, "engine");
    int e = eng ? pick(eng, engine_names, 3) : 0;
    if (e < 0 || (cJSON_GetObjectItemCaseSensitive(params, "engine") && !eng))
        return ft_err_set(err, -EINVAL, "flow %s: params.engine must be vllm, sglang or trtllm",
                          flow);
    p->engine = (enum kv_engine)e;
    const char *lay = jsonutil_str(params, "layout");
    /* vLLM's default backend is FlashAttention (K and V apart); SGLang and TensorRT-LLM keep
     * K and V of a page together. */
    int l = lay ? pick(lay, layout_names, 3) : (p->engine == KV_ENGINE_VLLM ? 0 : 1);
    if (l < 0 || (cJSON_GetObjectItemCaseSensitive(params, "layout") && !lay))
        return ft_err_set(err, -EINVAL, "flow %s: params.layout must be flash, flashinfer or mla",
                          flow);
    p->layout = (enum kv_layout)l;
    int rc = 0;
    rc = rc ? rc : whole(params, "layers", flow, "", 32, 1, 4096, &p->layers, err);
    rc = rc ? rc : whole(params, "pages", flow, "", 16, 1, 1 << 20, &p->pages, err);
    rc = rc ? rc : whole(params, "page_tokens", flow, "", 16, 1, 65536, &p->page_tokens, err);
    rc = rc ? rc : whole(params, "run_pages", flow, "", 16, 1, 1 << 20, &p->run_pages, err);
    rc = rc ? rc
            : whole(params, "layers_per_block", flow, "", 0, 0, 4096, &p->layers_per_block, err);
    rc = rc ? rc : whole(params, "depth", flow, "", 64, 1, 4096, &p->depth, err);
    rc = rc ? rc : whole(params, "qps", flow, "", 1, 1, 256, &p->qps, err);
    rc = rc ? rc : whole(params, "doorbell_batch", flow, "", 16, 1, 4096, &p->doorbell_batch, err);
    if (rc)
        return rc;
    if (p->doorbell_batch > p->depth)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.doorbell_batch (%d) must be at most params.depth (%d)",
                          flow, p->doorbell_batch, p->depth);
    if (p->layers_per_block > p->layers)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.layers_per_block (%d) must be at most params.layers "
                          "(%d)",
                          flow, p->layers_per_block, p->layers);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(params, "arrival");
    if (!arr || cJSON_IsNull(arr))
        return 0;
    if (!cJSON_IsObject(arr))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival must be an object {\"process\": fixed|poisson|"
                          "trace, \"rate_per_s\", \"trace\"}",
                          flow);
    static const char *const akeys[] = {"process", "rate_per_s", "trace", NULL};
    char where[160];
    snprintf(where, sizeof(where), "flow %s: params.arrival", flow);
    rc = jsonutil_check_keys(arr, akeys, where, err);
    if (rc)
        return rc;
    const char *proc = jsonutil_str(arr, "process");
    int a = proc ? pick(proc, arrival_names, 3) : 0;
    if (a < 0 || (cJSON_GetObjectItemCaseSensitive(arr, "process") && !proc))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival.process must be fixed, poisson or trace", flow);
    p->arrival = (enum kv_arrival)a;
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(arr, "rate_per_s");
    if (rate && (!cJSON_IsNumber(rate) || !(rate->valuedouble >= 0 && rate->valuedouble <= 1e7)))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival.rate_per_s must be a number from 0 to 1e7",
                          flow);
    p->rate_per_s = rate ? rate->valuedouble : 0;
    if (p->arrival == KV_ARRIVAL_POISSON && !(p->rate_per_s > 0))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival.rate_per_s must be above 0 for poisson", flow);
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(arr, "trace");
    if (tr &&
        (!cJSON_IsString(tr) || !tr->valuestring[0] || strlen(tr->valuestring) >= sizeof(p->trace)))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival.trace must be a file name shorter than %zu "
                          "characters",
                          flow, sizeof(p->trace));
    if (tr)
        snprintf(p->trace, sizeof(p->trace), "%s", tr->valuestring);
    if (p->arrival == KV_ARRIVAL_TRACE && !p->trace[0])
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival.trace (a Mooncake-format file) is required for "
                          "process trace",
                          flow);
    if (p->arrival != KV_ARRIVAL_TRACE && p->trace[0])
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.arrival.trace is only read with \"process\": \"trace\"",
                          flow);
    return 0;
}

cJSON *kv_params_to_json(const struct kv_params *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "engine", kv_engine_str(p->engine));
    cJSON_AddStringToObject(o, "layout", kv_layout_str(p->layout));
    cJSON_AddNumberToObject(o, "layers", p->layers);
    cJSON_AddNumberToObject(o, "pages", p->pages);
    cJSON_AddNumberToObject(o, "page_tokens", p->page_tokens);
    cJSON_AddNumberToObject(o, "run_pages", p->run_pages);
    cJSON_AddNumberToObject(o, "layers_per_block", p->layers_per_block);
    cJSON_AddNumberToObject(o, "depth", p->depth);
    cJSON_AddNumberToObject(o, "qps", p->qps);
    cJSON_AddNumberToObject(o, "doorbell_batch", p->doorbell_batch);
    cJSON *a = cJSON_AddObjectToObject(o, "arrival");
    cJSON_AddStringToObject(a, "process", kv_arrival_str(p->arrival));
    cJSON_AddNumberToObject(a, "rate_per_s", p->rate_per_s);
    if (p->trace[0])
        cJSON_AddStringToObject(a, "trace", p->trace);
    return o;
}

/* ---- trace ---- */

static int trace_field(const cJSON *o, const char *key, double hi, double *out, struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= hi) ||
        v->valuedouble != floor(v->valuedouble))
        return ft_err_set(err, -EINVAL, "%s must be a whole number from 0 to %g", key, hi);
    *out = v->valuedouble;
    return 0;
}

int kv_trace_parse_line(const char *line, struct kv_trace_rec *rec, struct ft_err *err)
{
    memset(rec, 0, sizeof(*rec));
    cJSON *o = cJSON_Parse(line);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return ft_err_set(err, -EINVAL, "not a JSON object");
    }
    double ts, in, out;
    int rc = trace_field(o, "timestamp", 1e12, &ts, err);
    rc = rc ? rc : trace_field(o, "input_length", 16777216, &in, err);
    rc = rc ? rc : trace_field(o, "output_length", 16777216, &out, err);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "hash_ids");
    if (!rc && !cJSON_IsArray(h))
        rc = ft_err_set(err, -EINVAL, "hash_ids must be a list of whole numbers");
    if (!rc && (uint64_t)cJSON_GetArraySize(h) !=
                   ((uint64_t)in + KV_TRACE_BLOCK_TOKENS - 1) / KV_TRACE_BLOCK_TOKENS)
        rc = ft_err_set(err, -EINVAL,
                        "hash_ids has %d entries, input_length %.0f needs ceil(%.0f / %d) = %llu",
                        cJSON_GetArraySize(h), in, in, KV_TRACE_BLOCK_TOKENS,
                        (unsigned long long)(((uint64_t)in + KV_TRACE_BLOCK_TOKENS - 1) /
                                             KV_TRACE_BLOCK_TOKENS));
    if (!rc) {
        rec->t_ns = (uint64_t)(ts * 1e6);
        rec->input_tokens = (uint32_t)in;
        rec->output_tokens = (uint32_t)out;
        rec->nhash = (uint32_t)cJSON_GetArraySize(h);
        rec->hash = xalloc_zero(rec->nhash + 1, sizeof(uint64_t));
        const cJSON *e;
        uint32_t i = 0;
        cJSON_ArrayForEach(e, h)
        {
            uint64_t id;
            if (!cJSON_IsNumber(e) || !jsonutil_whole_u64(e->valuedouble, &id) ||
                id >= UINT64_MAX - 1) {
                rc = ft_err_set(err, -EINVAL, "hash_ids[%u] must be a whole number", i);
                break;
            }
            rec->hash[i++] = id;
        }
        if (rc) {
            free(rec->hash);
            rec->hash = NULL;
        }
    }
    cJSON_Delete(o);
    return rc;
}

int kv_trace_load(const char *path, struct kv_trace *t, struct ft_err *err)
{
    memset(t, 0, sizeof(*t));
    FILE *fp = fopen(path, "r");
    if (!fp)
        return ft_err_set(err, -errno, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    uint64_t t0 = 0;
    while ((len = getline(&line, &cap, fp)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (!len)
            continue;
        if (t->n == KV_MAX_TRACE) {
            rc = ft_err_set(err, -E2BIG, "%s: more than %d requests", path, KV_MAX_TRACE);
            break;
        }
        struct kv_trace_rec r;
        struct ft_err e = {0};
        if (kv_trace_parse_line(line, &r, &e) < 0) {
            rc = ft_err_set(err, -EINVAL,
                            "%s:%d: %s (Mooncake format: one JSON object a line "
                            "with timestamp, input_length, output_length, hash_ids)",
                            path, lineno, e.msg);
            break;
        }
        if (t->n == 0)
            t0 = r.t_ns;
        if (r.t_ns < t0 || (t->n && r.t_ns < t->rec[t->n - 1].t_ns + t0)) {
            free(r.hash);
            rc = ft_err_set(err, -EINVAL, "%s:%d: timestamp goes backwards", path, lineno);
            break;
        }
        r.t_ns -= t0;
        t->rec = xalloc_resize(t->rec, ((size_t)t->n + 1) * sizeof(*t->rec));
        t->rec[t->n++] = r;
    }
    free(line);
    fclose(fp);
    if (!rc && t->n == 0)
        rc = ft_err_set(err, -EINVAL, "%s: no requests in the trace", path);
    if (rc)
        kv_trace_free(t);
    return rc;
}

void kv_trace_free(struct kv_trace *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->rec[i].hash);
    free(t->rec);
    memset(t, 0, sizeof(*t));
}

/* ---- prefix reuse ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static bool seen_has(const struct kv_seen *s, uint64_t id)
{
    if (!s->cap)
        return false;
    for (size_t i = mix64(id) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slot[i])
            return false;
        if (s->slot[i] == id + 1)
            return true;
    }
}

static void seen_add(struct kv_seen *s, uint64_t id)
{
    if (seen_has(s, id))
        return;
    if ((s->n + 1) * 2 > s->cap) {
        struct kv_seen g = {0, s->cap ? s->cap * 2 : 64, NULL};
        g.slot = xalloc_zero(g.cap, sizeof(uint64_t));
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i])
                seen_add(&g, s->slot[i] - 1);
        free(s->slot);
        *s = g;
    }
    size_t i = mix64(id) & (s->cap - 1);
    while (s->slot[i])
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = id + 1;
    s->n++;
}

void kv_seen_free(struct kv_seen *s)
{
    free(s->slot);
    memset(s, 0, sizeof(*s));
}

int kv_request_pages(const struct kv_params *p, const struct kv_trace_rec *rec,
                     struct kv_seen *seen, uint32_t *pages, int cap)
{
    uint64_t tokens = rec ? rec->input_tokens : (uint64_t)p->pages * (uint64_t)p->page_tokens;
    uint64_t T = (uint64_t)p->page_tokens;
    uint64_t total = (tokens + T - 1) / T;
    int n = 0;
    for (uint64_t pg = 0; pg < total; pg++) {
        bool skip = false;
        if (rec && seen) {
            uint64_t first = pg * T, end = (pg + 1) * T < tokens ? (pg + 1) * T : tokens;
            uint64_t b0 = first / KV_TRACE_BLOCK_TOKENS, b1 = (end - 1) / KV_TRACE_BLOCK_TOKENS;
            skip = true;
            for (uint64_t b = b0; b <= b1 && skip; b++)
                skip = b < rec->nhash && seen_has(seen, rec->hash[b]);
        }
        if (skip)
            continue;
        if (n == cap)
            return -E2BIG;
        pages[n++] = (uint32_t)pg;
    }
    if (rec && seen)
        for (uint32_t b = 0; b < rec->nhash; b++)
            seen_add(seen, rec->hash[b]);
    return n;
}

/* ---- descriptors ---- */

static long put(struct kv_desc *out, size_t cap, long n, struct kv_desc d)
{
    if (n >= (long)KV_MAX_DESCS)
        return -E2BIG;
    if (out && (size_t)n < cap)
        out[n] = d;
    return n + 1;
}

long kv_build(const struct kv_params *p, uint64_t page_bytes, const uint32_t *pages, int npages,
              struct kv_desc *out, size_t cap)
{
    /* The logical region: [layer][K or V][page slot], page slots up to the highest page. */
    uint64_t slots = npages ? (uint64_t)pages[npages - 1] + 1 : 0;
    uint32_t nkv = p->layout == KV_LAYOUT_FLASH ? 2 : 1;
    uint32_t kvtag = p->layout == KV_LAYOUT_FLASH ? 0 : 2;
    long n = 0;
    if (p->engine == KV_ENGINE_TRTLLM) {
        /* Pages of all (or layers_per_block) layers packed into one block: the region is
         * [block of layers][page][layer in block][K and V]. */
        uint32_t lpb = p->layers_per_block ? (uint32_t)p->layers_per_block : (uint32_t)p->layers;
        for (uint32_t l0 = 0; l0 < (uint32_t)p->layers; l0 += lpb) {
            uint32_t nl = l0 + lpb <= (uint32_t)p->layers ? lpb : (uint32_t)p->layers - l0;
            uint64_t blk = page_bytes * nkv * lpb;
            for (int i = 0; i < npages && n >= 0; i++)
                n = put(out, cap, n,
                        (struct kv_desc){l0, nl, 2, pages[i], 1,
                                         ((uint64_t)l0 / lpb * slots + pages[i]) * blk,
                                         page_bytes * nkv * nl});
        }
        return n;
    }
    for (uint32_t l = 0; l < (uint32_t)p->layers; l++)
        for (uint32_t kv = 0; kv < nkv; kv++) {
            uint32_t tag = nkv == 2 ? kv : kvtag;
            uint64_t base = ((uint64_t)l * nkv + kv) * slots;
            for (int i = 0; i < npages && n >= 0;) {
                int run = 1;
                if (p->engine == KV_ENGINE_SGLANG)
                    while (i + run < npages && run < p->run_pages &&
                           pages[i + run] == pages[i] + (uint32_t)run)
                        run++;
                n = put(out, cap, n,
                        (struct kv_desc){l, 1, tag, pages[i], (uint32_t)run,
                                         (base + pages[i]) * page_bytes,
                                         (uint64_t)run * page_bytes});
                i += run;
            }
        }
    return n;
}

uint64_t kv_next_gap_ns(const struct kv_params *p, int workers, uint64_t *rng)
{
    if (!(p->rate_per_s > 0) || p->arrival == KV_ARRIVAL_TRACE)
        return 0;
    double mean = 1e9 * (workers > 0 ? workers : 1) / p->rate_per_s;
    if (p->arrival == KV_ARRIVAL_FIXED)
        return (uint64_t)mean;
    /* xorshift64*, then an exponential draw: -mean ln(U), U in (0, 1]. */
    uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    double u = (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
    return (uint64_t)(-mean * log(1.0 - u));
}

/* ---- a flow's plan ---- */

void kv_plan_free(struct kv_plan *k)
{
    if (!k)
        return;
    for (int i = 0; i < k->njobs; i++) {
        free(k->jobs[i].off);
        free(k->jobs[i].len);
    }
    free(k->jobs);
    free(k->desc);
    free((void *)k->late);
    free((void *)k->queued);
    free((void *)k->measured);
    free((void *)k->measured_bytes);
    free(k);
}

int kv_plan_build(const struct mix_flow *s, int nworkers, int npoints, uint64_t region_min,
                  struct kv_plan **out, struct ft_err *err)
{
    struct kv_plan *k = xalloc_zero(1, sizeof(*k));
    *out = k;
    int rc = kv_params_from_json(s->params, s->name, &k->p, err);
    if (rc)
        return rc;
    k->unit = s->size.bytes[0];
    struct kv_trace tr = {0};
    if (k->p.arrival == KV_ARRIVAL_TRACE && (rc = kv_trace_load(k->p.trace, &tr, err)) < 0)
        return rc;
    k->njobs = tr.n ? tr.n : 1;
    k->jobs = xalloc_zero((size_t)k->njobs, sizeof(*k->jobs));
    struct kv_seen seen = {0};
    uint32_t cap = 1u << 16;
    uint32_t *pages = xalloc(cap * sizeof(uint32_t));
    for (int j = 0; j < k->njobs && !rc; j++) {
        const struct kv_trace_rec *rec = tr.n ? &tr.rec[j] : NULL;
        uint64_t tokens = rec ? rec->input_tokens : (uint64_t)k->p.pages * k->p.page_tokens;
        uint64_t need = (tokens + (uint64_t)k->p.page_tokens - 1) / (uint64_t)k->p.page_tokens;
        if (need > cap) {
            cap = (uint32_t)(need > (1u << 24) ? (1u << 24) : need);
            pages = xalloc_resize(pages, cap * sizeof(uint32_t));
        }
        int np = kv_request_pages(&k->p, rec, &seen, pages, (int)cap);
        long nd = np < 0 ? -E2BIG : kv_build(&k->p, k->unit, pages, np, NULL, 0);
        if (nd < 0) {
            rc = ft_err_set(err, -E2BIG, "flow %s: request %d has more than %u descriptors",
                            s->name, j, KV_MAX_DESCS);
            break;
        }
        struct kv_job *jb = &k->jobs[j];
        struct kv_desc *d = xalloc_zero((size_t)nd + 1, sizeof(*d));
        kv_build(&k->p, k->unit, pages, np, d, (size_t)nd);
        jb->ndesc = nd;
        jb->t_ns = rec ? rec->t_ns : 0;
        jb->off = xalloc_zero((size_t)nd + 1, sizeof(uint64_t));
        jb->len = xalloc_zero((size_t)nd + 1, sizeof(uint64_t));
        for (long i = 0; i < nd; i++) {
            jb->off[i] = d[i].offset;
            jb->len[i] = d[i].len;
            jb->bytes += d[i].len;
            if (d[i].len > k->len_max)
                k->len_max = d[i].len;
        }
        free(d);
    }
    free(pages);
    kv_seen_free(&seen);
    if (tr.n) {
        uint64_t last = tr.rec[tr.n - 1].t_ns;
        k->trace_span_ns = last + (tr.n > 1 ? last / (uint64_t)(tr.n - 1) : 1000000000ull);
    }
    kv_trace_free(&tr);
    if (rc)
        return rc;
    /* The region: at least region_min and the largest descriptor, page-aligned; a logical
     * offset beyond it folds back in (the bytes a request moves are what count). */
    k->region = k->len_max > region_min ? (k->len_max + 4095) / 4096 * 4096 : region_min;
    k->desc_min = k->jobs[0].ndesc;
    k->bytes_min = k->jobs[0].bytes;
    for (int j = 0; j < k->njobs; j++) {
        struct kv_job *jb = &k->jobs[j];
        k->desc_min = jb->ndesc < k->desc_min ? jb->ndesc : k->desc_min;
        k->desc_max = jb->ndesc > k->desc_max ? jb->ndesc : k->desc_max;
        k->bytes_min = jb->bytes < k->bytes_min ? jb->bytes : k->bytes_min;
        k->bytes_max = jb->bytes > k->bytes_max ? jb->bytes : k->bytes_max;
        for (long i = 0; i < jb->ndesc; i++) {
            uint64_t o = jb->off[i] % k->region;
            if (o + jb->len[i] > k->region)
                o = k->region - jb->len[i];
            jb->off[i] = o;
        }
    }
    k->nworkers = nworkers;
    k->npoints = npoints;
    size_t n = (size_t)nworkers * (size_t)npoints;
    k->desc = xalloc(n * sizeof(struct hist));
    for (size_t i = 0; i < n; i++)
        hist_init(&k->desc[i]);
    k->late = xalloc_zero(n, sizeof(*k->late));
    k->queued = xalloc_zero(n, sizeof(*k->queued));
    k->measured = xalloc_zero(n, sizeof(*k->measured));
    k->measured_bytes = xalloc_zero(n, sizeof(*k->measured_bytes));
    return 0;
}

const struct kv_job *kv_plan_request(const struct kv_plan *k, int widx, int nworkers, uint64_t idx,
                                     uint64_t base, uint64_t *next, uint64_t *rng, uint64_t *due)
{
    if (k->p.arrival == KV_ARRIVAL_TRACE) {
        /* Records dealt round robin over the workers; the trace replays after its span. */
        uint64_t r = (uint64_t)widx + idx * (uint64_t)nworkers;
        const struct kv_job *jb = &k->jobs[r % (uint64_t)k->njobs];
        *due = base + jb->t_ns + r / (uint64_t)k->njobs * k->trace_span_ns;
        return jb;
    }
    if (idx == 0)
        *next = base;
    *due = *next;
    *next += kv_next_gap_ns(&k->p, nworkers, rng);
    return &k->jobs[0];
}

bool kv_plan_paced(const struct kv_plan *k)
{
    return k->p.arrival == KV_ARRIVAL_TRACE || k->p.rate_per_s > 0;
}

cJSON *kv_plan_figures(const struct kv_plan *k, const char *kind)
{
    cJSON *pf = cJSON_CreateArray();
    struct hist *m = xalloc(sizeof(*m));
    for (int p = 0; p < k->npoints; p++) {
        hist_init(m);
        uint64_t late = 0, queued = 0, reqs = 0, bytes = 0;
        for (int w = 0; w < k->nworkers; w++) {
            size_t slot = (size_t)w * (size_t)k->npoints + (size_t)p;
            hist_merge(m, &k->desc[slot]);
            late += k->late[slot];
            queued += k->queued[slot];
            reqs += k->measured[slot];
            bytes += k->measured_bytes[slot];
        }
        struct hist_stats st;
        hist_stats(m, &st);
        cJSON *o = cJSON_CreateObject();
        cJSON *kv = cJSON_AddObjectToObject(o, "kv");
        cJSON_AddNumberToObject(kv, "descriptors", (double)st.count);
        cJSON_AddNumberToObject(kv, "descriptor_unit_bytes", (double)k->unit);
        cJSON_AddNumberToObject(kv, "descriptors_per_request_min", (double)k->desc_min);
        cJSON_AddNumberToObject(kv, "descriptors_per_request_max", (double)k->desc_max);
        cJSON_AddNumberToObject(kv, "bytes_per_request_min", (double)k->bytes_min);
        cJSON_AddNumberToObject(kv, "bytes_per_request_max", (double)k->bytes_max);
        /* The requests the point's latency holds and their bytes: the point's ops and
         * payload (results.c takes them from here). */
        cJSON_AddNumberToObject(kv, "requests_measured", (double)reqs);
        cJSON_AddNumberToObject(kv, "bytes_measured", (double)bytes);
        cJSON_AddNumberToObject(kv, "requests_posted_over_1ms_late", (double)late);
        jsonutil_add_num_or_null(kv, "late_mean_wait_after_arrival_us", late > 0,
                                 late ? (double)queued / 1e3 / (double)late : 0);
        cJSON *d = cJSON_AddObjectToObject(kv, "per_descriptor");
        cJSON_AddStringToObject(d, "kind", kind);
        bool ok = st.count > 0;
        jsonutil_add_num_or_null(d, "p50_us", ok, st.p50 / 1e3);
        jsonutil_add_num_or_null(d, "p99_us", ok, st.p99 / 1e3);
        jsonutil_add_num_or_null(d, "p99.9_us", ok, st.p999 / 1e3);
        jsonutil_add_num_or_null(d, "max_us", ok, st.max / 1e3);
        cJSON_AddItemToArray(pf, o);
    }
    free(m);
    return pf;
}

cJSON *kv_plan_conditions(const struct kv_plan *k)
{
    cJSON *kv = kv_params_to_json(&k->p);
    cJSON_AddNumberToObject(kv, "region_bytes", (double)k->region);
    cJSON_AddNumberToObject(kv, "requests_prepared", k->njobs);
    cJSON_AddStringToObject(kv, "timed",
                            "per request: first descriptor posted to the notification received; "
                            "setup, connection and registration apart");
    return kv;
}
