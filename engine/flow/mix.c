/* mix: parse, validate, print and find traffic mixes. */
#include "engine/flow/mix.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/datadir.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

static const char *const op_names[] = {"pingpong", "stream", "rr", "collective", "copy", "kv"};
static const char *const role_names[] = {"foreground", "background"};
static const char *const dir_names[] = {"tx", "rx", "bidir"};

/* splitmix64: a small, fast, seedable generator for size draws. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t mix_sizes_draw(const struct mix_sizes *s, uint64_t *rng)
{
    if (s->kind != MIX_SIZE_DIST || s->n < 1)
        return s->bytes[0];
    double total = 0;
    for (int i = 0; i < s->n; i++)
        total += s->weight[i];
    double x = (double)(rng_next(rng) >> 11) / 9007199254740992.0 * total;
    for (int i = 0; i < s->n; i++) {
        if (x < s->weight[i])
            return s->bytes[i];
        x -= s->weight[i];
    }
    return s->bytes[s->n - 1];
}

uint64_t mix_sizes_largest(const struct mix_sizes *s)
{
    uint64_t m = s->bytes[0];
    for (int i = 1; i < s->n && s->kind != MIX_SIZE_FIXED; i++)
        m = s->bytes[i] > m ? s->bytes[i] : m;
    return m;
}

const char *mix_op_str(enum mix_op op)
{
    return (unsigned)op < MIX_OP_COUNT ? op_names[op] : "?";
}

const char *mix_dir_str(enum mix_dir d)
{
    return (unsigned)d <= MIX_DIR_BIDIR ? dir_names[d] : "?";
}

const char *mix_latency_kind_str(enum mix_latency_kind k)
{
    static const char *const names[] = {"half_round_trip", "round_trip", "per_operation",
                                        "per_request", "none"};
    return (unsigned)k <= MIX_LAT_NONE ? names[k] : "?";
}

enum mix_latency_kind mix_latency_kind_of(const struct mix_flow *f)
{
    /* RDMA verbs: READ is a round trip, "completion" times one WRITE from post to its
     * completion, and bandwidth runs record post-to-completion of signalled requests. */
    bool verbs = !strcmp(f->transport, "verbs");
    const char *verb = verbs ? jsonutil_str(f->params, "verb") : NULL;
    const char *lat = verbs ? jsonutil_str(f->params, "latency") : NULL;
    switch (f->op) {
    case MIX_OP_PINGPONG:
        if (verb && !strcmp(verb, "read"))
            return MIX_LAT_RTT;
        if (lat && !strcmp(lat, "completion"))
            return MIX_LAT_PER_OP;
        return MIX_LAT_HALF_RTT;
    case MIX_OP_STREAM:
        /* The simulator times each message from post to completion, as verbs does. */
        return verbs || !strcmp(f->transport, "sim") ? MIX_LAT_PER_OP : MIX_LAT_NONE;
    case MIX_OP_RR:
        return MIX_LAT_RTT;
    case MIX_OP_COLLECTIVE:
    case MIX_OP_COPY:
        return MIX_LAT_PER_OP;
    case MIX_OP_KV:
        return MIX_LAT_PER_REQUEST;
    default:
        return MIX_LAT_NONE;
    }
}

int mix_parse_bytes(const char *s, uint64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    char *end;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    double mult = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K':
            mult = 1024.0;
            break;
        case 'M':
            mult = 1024.0 * 1024;
            break;
        case 'G':
            mult = 1024.0 * 1024 * 1024;
            break;
        case 'B':
            mult = 1;
            end--; /* "B" alone */
            break;
        default:
            return -EINVAL;
        }
        end++;
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return -EINVAL;
    }
    double bytes = v * mult;
    if (!(bytes >= 1) || bytes > (double)MIX_MAX_BYTES || bytes != floor(bytes))
        return -EINVAL;
    *out = (uint64_t)bytes;
    return 0;
}

/* ---- parsing ---- */

/* The keys each object of a mix may hold (mix.h; docs/schema/mix.schema.json documents each,
 * and tests/schema checks that the two agree). */
const char *const mix_doc_keys[] = {
    "format",       "version", "name", "description", "lesson", "phases", "progress_deadline_s",
    "fail_bound_s", "flows",   NULL};
/* latency_kind is written by mix_to_json (derived from op and params) and read back as is. */
const char *const mix_flow_keys[] = {
    "name",      "transport", "op",           "role",          "direction",
    "local",     "peer",      "size",         "response_size", "concurrency",
    "rate_gbps", "warmup_s",  "duration_s",   "iterations",    "start_s",
    "seed",      "params",    "latency_kind", "class",         "per_step",
    "recover",   NULL};
const char *const mix_local_keys[] = {"ip", "netdev", "rdma", "gpu", NULL};
const char *const mix_size_keys[] = {"sweep", "dist", NULL};
const char *const mix_recover_keys[] = {"attempts", "backoff_ms", "deadline_s", "failover", NULL};

struct pctx {
    const char *what;
    struct ft_err *err;
    int rc;
};

static int perr(struct pctx *c, int flow, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(struct pctx *c, int flow, const char *field, const char *fmt, ...)
{
    if (c->rc)
        return c->rc;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (flow >= 0)
        c->rc = ft_err_set(c->err, -EINVAL, "%s: flows[%d].%s %s", c->what, flow, field, msg);
    else
        c->rc = ft_err_set(c->err, -EINVAL, "%s: %s %s", c->what, field, msg);
    return c->rc;
}

/* Every member of o (the document when fi < 0, else flows[fi] or its member field) must be
 * one the reader knows: a misspelled key would otherwise be ignored and its default used. */
static void check_keys(struct pctx *c, int fi, const char *field, const cJSON *o,
                       const char *const *known)
{
    if (c->rc)
        return;
    char where[600];
    if (fi < 0)
        snprintf(where, sizeof(where), "%s", c->what);
    else
        snprintf(where, sizeof(where), "%s: flows[%d]%s%s", c->what, fi, *field ? "." : "", field);
    c->rc = jsonutil_check_keys(o, known, where, c->err);
}

static int enum_of(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* A size: a number of bytes or a string with a unit ("64KiB"). */
static bool size_value(const cJSON *v, uint64_t *out)
{
    if (cJSON_IsNumber(v)) {
        if (v->valuedouble < 1 || v->valuedouble != floor(v->valuedouble) ||
            v->valuedouble > (double)MIX_MAX_BYTES)
            return false;
        *out = (uint64_t)v->valuedouble;
        return true;
    }
    return cJSON_IsString(v) && mix_parse_bytes(v->valuestring, out) == 0;
}

static void parse_sizes(struct pctx *c, int fi, const cJSON *v, struct mix_sizes *s)
{
    uint64_t b;
    if (size_value(v, &b)) {
        s->kind = MIX_SIZE_FIXED;
        s->n = 1;
        s->bytes[0] = b;
        return;
    }
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(v, "sweep");
    const cJSON *dist = cJSON_GetObjectItemCaseSensitive(v, "dist");
    check_keys(c, fi, "size", v, mix_size_keys);
    if (cJSON_IsObject(sw)) {
        /* Like perftest -a / nccl-tests -b -e -f: from, to, factor (default 2). */
        check_keys(c, fi, "size.sweep", sw, (const char *const[]){"from", "to", "factor", NULL});
        uint64_t from, to;
        double factor = 2;
        if (!size_value(cJSON_GetObjectItemCaseSensitive(sw, "from"), &from) ||
            !size_value(cJSON_GetObjectItemCaseSensitive(sw, "to"), &to) || to < from) {
            perr(c, fi, "size.sweep", "needs \"from\" <= \"to\", sizes like 16384 or \"16KiB\"");
            return;
        }
        jsonutil_num(sw, "factor", &factor);
        if (!(factor > 1.0)) {
            perr(c, fi, "size.sweep.factor", "must be greater than 1");
            return;
        }
        s->kind = MIX_SIZE_SWEEP;
        s->n = 0;
        s->sweep_to = to;
        s->sweep_factor = factor;
        for (double x = (double)from; x <= (double)to * 1.0000001; x *= factor) {
            if (s->n == MIX_MAX_SIZES) {
                perr(c, fi, "size.sweep", "has more than %d points", MIX_MAX_SIZES);
                return;
            }
            s->bytes[s->n++] = (uint64_t)llround(x);
        }
        return;
    }
    if (cJSON_IsArray(dist)) {
        s->kind = MIX_SIZE_DIST;
        s->n = 0;
        const cJSON *e;
        double total = 0;
        cJSON_ArrayForEach(e, dist)
        {
            if (s->n == MIX_MAX_SIZES || cJSON_GetArraySize(e) != 2 ||
                !size_value(cJSON_GetArrayItem(e, 0), &s->bytes[s->n]) ||
                !cJSON_IsNumber(cJSON_GetArrayItem(e, 1)) ||
                !(cJSON_GetArrayItem(e, 1)->valuedouble > 0)) {
                perr(c, fi, "size.dist", "must be a list of [size, weight] pairs with weight > 0");
                return;
            }
            s->weight[s->n] = cJSON_GetArrayItem(e, 1)->valuedouble;
            total += s->weight[s->n++];
        }
        if (s->n == 0 || !(total > 0))
            perr(c, fi, "size.dist", "is empty");
        return;
    }
    perr(c, fi, "size",
         "must be bytes (65536 or \"64KiB\"), {\"sweep\": {...}} or "
         "{\"dist\": [[size, weight], ...]}");
}

static double num_field(struct pctx *c, int fi, const cJSON *o, const char *key, double dflt,
                        double lo, double hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return dflt;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        perr(c, fi, key, "must be a number from %g to %g", lo, hi);
        return dflt;
    }
    return v->valuedouble;
}

static void str_field(struct pctx *c, int fi, const cJSON *o, const char *key, char *buf,
                      size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= len) {
        perr(c, fi, key, "must be a string shorter than %zu characters", len);
        return;
    }
    snprintf(buf, len, "%s", v->valuestring);
}

/* A kv flow's trace named by a relative path is read beside the mix file (a preset's
 * traces/FILE), when it is there; the path is made that file's, so the mix saved again finds
 * it from anywhere. Anything else is left to the reader (engine/flow/kv.c). */
static void resolve_trace(const char *what, cJSON *params)
{
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(params, "arrival");
    cJSON *tr = cJSON_GetObjectItemCaseSensitive(arr, "trace");
    const char *slash = strrchr(what, '/');
    if (!cJSON_IsString(tr) || tr->valuestring[0] == '/' || !slash)
        return;
    char path[1024];
    int n = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - what), what, tr->valuestring);
    struct stat st;
    if (n > 0 && (size_t)n < sizeof(path) && n < 256 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        cJSON_ReplaceItemInObjectCaseSensitive(arr, "trace", cJSON_CreateString(path));
}

/* A number of the recovery policy, named "recover.KEY" in messages. */
static double recover_num(struct pctx *c, int fi, const cJSON *o, const char *key, double dflt,
                          double lo, double hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return dflt;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        char field[48];
        snprintf(field, sizeof(field), "recover.%s", key);
        perr(c, fi, field, "must be a number from %g to %g", lo, hi);
        return dflt;
    }
    return v->valuedouble;
}

/* "recover": {"attempts": N, "backoff_ms": [MIN, MAX], "deadline_s": S, "failover": [..]} */
static void parse_recover(struct pctx *c, int fi, const cJSON *o, struct mix_recover *r)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "recover");
    if (!v || cJSON_IsNull(v))
        return;
    if (!cJSON_IsObject(v)) {
        perr(c, fi, "recover", "must be an object with attempts, backoff_ms and deadline_s");
        return;
    }
    check_keys(c, fi, "recover", v, mix_recover_keys);
    r->set = true;
    r->attempts = (int)recover_num(c, fi, v, "attempts", 5, 1, 1000);
    r->deadline_s = recover_num(c, fi, v, "deadline_s", 10, 0.1, 3600);
    r->backoff_min_ms = 50;
    r->backoff_max_ms = 1000;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(v, "backoff_ms");
    if (b && !cJSON_IsNull(b)) {
        const cJSON *lo = cJSON_GetArrayItem(b, 0), *hi = cJSON_GetArrayItem(b, 1);
        if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) != 2 || !cJSON_IsNumber(lo) ||
            !cJSON_IsNumber(hi) || !(lo->valuedouble >= 0) ||
            !(hi->valuedouble >= lo->valuedouble) || hi->valuedouble > 600000) {
            perr(c, fi, "recover.backoff_ms",
                 "must be [MIN, MAX] in ms, 0 <= MIN <= MAX <= 600000");
            return;
        }
        r->backoff_min_ms = lo->valuedouble;
        r->backoff_max_ms = hi->valuedouble;
    }
    const cJSON *fo = cJSON_GetObjectItemCaseSensitive(v, "failover");
    if (fo && !cJSON_IsNull(fo)) {
        if (!cJSON_IsArray(fo) || cJSON_GetArraySize(fo) > MIX_MAX_FAILOVER) {
            perr(c, fi, "recover.failover", "must be a list of at most %d agents, HOST[:PORT]",
                 MIX_MAX_FAILOVER);
            return;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, fo)
        {
            if (!cJSON_IsString(e) || !e->valuestring[0] ||
                strlen(e->valuestring) >= sizeof(r->failover[0]) ||
                strpbrk(e->valuestring, " \t\r\n")) {
                perr(c, fi, "recover.failover",
                     "entries must be HOST[:PORT] (%zu characters at most)",
                     sizeof(r->failover[0]) - 1);
                return;
            }
            snprintf(r->failover[r->nfailover++], sizeof(r->failover[0]), "%s", e->valuestring);
        }
    }
}

static void parse_flow(struct pctx *c, int fi, const cJSON *o, struct mix_flow *f)
{
    memset(f, 0, sizeof(*f));
    f->local_gpu = -1;
    f->concurrency = 1;
    f->warmup_s = 0.5;
    snprintf(f->transport, sizeof(f->transport), "tcp");
    snprintf(f->peer, sizeof(f->peer), "loopback");
    snprintf(f->name, sizeof(f->name), "flow%d", fi);
    if (!cJSON_IsObject(o)) {
        perr(c, fi, "", "must be an object");
        return;
    }
    check_keys(c, fi, "", o, mix_flow_keys);
    str_field(c, fi, o, "name", f->name, sizeof(f->name));
    str_field(c, fi, o, "transport", f->transport, sizeof(f->transport));
    str_field(c, fi, o, "class", f->class_name, sizeof(f->class_name));
    /* --slo names it as CLASS:STAT<BOUND: no ':', ',', '<' or spaces in it. */
    if (f->class_name[0] &&
        strspn(f->class_name,
               "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
            strlen(f->class_name))
        perr(c, fi, "class", "must be letters, digits, '_', '-' or '.' (\"%s\")", f->class_name);
    f->per_step = num_field(c, fi, o, "per_step", 0, 0, 1e9);
    int e = enum_of(jsonutil_str(o, "op"), op_names, MIX_OP_COUNT);
    if (e < 0)
        perr(c, fi, "op", "must be one of pingpong, stream, rr, collective, copy, kv");
    f->op = e < 0 ? MIX_OP_PINGPONG : (enum mix_op)e;
    const char *role = jsonutil_str(o, "role");
    e = role ? enum_of(role, role_names, 2) : 0;
    if (e < 0)
        perr(c, fi, "role", "must be foreground or background");
    f->role = e < 0 ? MIX_ROLE_FOREGROUND : (enum mix_role)e;
    const char *dir = jsonutil_str(o, "direction");
    e = dir ? enum_of(dir, dir_names, 3) : 0;
    if (e < 0)
        perr(c, fi, "direction", "must be tx, rx or bidir");
    f->dir = e < 0 ? MIX_DIR_TX : (enum mix_dir)e;
    const cJSON *local = cJSON_GetObjectItemCaseSensitive(o, "local");
    if (local && !cJSON_IsNull(local)) {
        if (!cJSON_IsObject(local)) {
            perr(c, fi, "local", "must be an object with ip, netdev, rdma or gpu");
        } else {
            check_keys(c, fi, "local", local, mix_local_keys);
            str_field(c, fi, local, "ip", f->local_ip, sizeof(f->local_ip));
            str_field(c, fi, local, "netdev", f->local_netdev, sizeof(f->local_netdev));
            str_field(c, fi, local, "rdma", f->local_rdma, sizeof(f->local_rdma));
            f->local_gpu = (int)num_field(c, fi, local, "gpu", -1, -1, 1023);
        }
    }
    str_field(c, fi, o, "peer", f->peer, sizeof(f->peer));
    if (!f->peer[0])
        snprintf(f->peer, sizeof(f->peer), "loopback");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");
    if (!size)
        perr(c, fi, "size", "is required");
    else
        parse_sizes(c, fi, size, &f->size);
    const cJSON *resp = cJSON_GetObjectItemCaseSensitive(o, "response_size");
    if (resp && !size_value(resp, &f->size.response_bytes))
        perr(c, fi, "response_size", "must be bytes (4096 or \"4KiB\")");
    f->concurrency = (int)num_field(c, fi, o, "concurrency", 1, 1, 1024);
    f->rate_gbps = num_field(c, fi, o, "rate_gbps", 0, 0, 1e6);
    f->warmup_s = num_field(c, fi, o, "warmup_s", 0.5, 0, 3600);
    f->duration_s = num_field(c, fi, o, "duration_s", 0, 0, 86400);
    f->iterations = (uint64_t)num_field(c, fi, o, "iterations", 0, 0, 1e12);
    f->start_s = num_field(c, fi, o, "start_s", 0, 0, 3600);
    f->seed = (uint64_t)num_field(c, fi, o, "seed", 1, 0, 9e15);
    if (f->role == MIX_ROLE_FOREGROUND && f->duration_s == 0 && f->iterations == 0)
        f->duration_s = 5;
    if (f->op == MIX_OP_KV && f->dir != MIX_DIR_TX)
        perr(c, fi, "direction",
             "is not taken by a kv flow: params.engine says which side moves the data (vllm "
             "pulls, sglang and trtllm push)");
    if (f->op == MIX_OP_KV && f->rate_gbps > 0)
        perr(c, fi, "rate_gbps",
             "is not taken by a kv flow: requests arrive by params.arrival (rate_per_s, a "
             "trace)");
    if (f->op == MIX_OP_PINGPONG && f->concurrency != 1)
        perr(c, fi, "concurrency", "must be 1 for pingpong (one message in flight); use rr");
    parse_recover(c, fi, o, &f->recover);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(o, "params");
    if (params && !cJSON_IsNull(params)) {
        if (!cJSON_IsObject(params))
            perr(c, fi, "params", "must be an object");
        else
            f->params = cJSON_Duplicate(params, 1);
        if (f->params && f->op == MIX_OP_KV)
            resolve_trace(c->what, f->params);
        /* The keys each transport reads are checked above the transports: xport_check_params
         * (engine/xport/xport.h), from runner_validate. */
    }
}

int mix_from_json(const cJSON *doc, const char *what, struct mix *m, struct ft_err *err)
{
    struct pctx c = {.what = what, .err = err};
    memset(m, 0, sizeof(*m));
    snprintf(m->source, sizeof(m->source), "%s", what);
    const char *fmt = jsonutil_str(doc, "format");
    if (!cJSON_IsObject(doc) || (fmt && strcmp(fmt, MIX_FORMAT)))
        return ft_err_set(err, -EINVAL,
                          "%s: not a fabtop mix (expected \"format\": \"%s\"); see the presets "
                          "in engine/mixes/ for the layout",
                          what, MIX_FORMAT);
    int64_t ver = MIX_VERSION;
    jsonutil_int(doc, "version", &ver);
    if (ver != MIX_VERSION)
        return ft_err_set(err, -EPROTO, "%s: mix version %lld, this fabtop reads version %d", what,
                          (long long)ver, MIX_VERSION);
    check_keys(&c, -1, "", doc, mix_doc_keys);
    str_field(&c, -1, doc, "name", m->name, sizeof(m->name));
    str_field(&c, -1, doc, "description", m->description, sizeof(m->description));
    str_field(&c, -1, doc, "lesson", m->lesson, sizeof(m->lesson));
    const cJSON *phases = cJSON_GetObjectItemCaseSensitive(doc, "phases");
    if (phases) {
        const cJSON *p0 = cJSON_GetArrayItem(phases, 0), *p1 = cJSON_GetArrayItem(phases, 1);
        if (cJSON_GetArraySize(phases) == 2 && cJSON_IsString(p0) && cJSON_IsString(p1) &&
            !strcmp(p0->valuestring, "quiet") && !strcmp(p1->valuestring, "loaded"))
            m->quiet_then_loaded = true;
        else if (!(cJSON_GetArraySize(phases) == 1 && cJSON_IsString(p0) &&
                   !strcmp(p0->valuestring, "loaded")))
            perr(&c, -1, "phases", "must be [\"quiet\", \"loaded\"] or [\"loaded\"]");
    }
    m->progress_deadline_s = num_field(&c, -1, doc, "progress_deadline_s", 2.0, 0.05, 3600);
    m->fail_bound_s = num_field(&c, -1, doc, "fail_bound_s", 2.0, 0.05, 3600);
    const cJSON *flows = cJSON_GetObjectItemCaseSensitive(doc, "flows");
    if (!cJSON_IsArray(flows) || cJSON_GetArraySize(flows) == 0)
        perr(&c, -1, "flows", "must be a non-empty array");
    else if (cJSON_GetArraySize(flows) > MIX_MAX_FLOWS)
        perr(&c, -1, "flows", "has more than %d entries", MIX_MAX_FLOWS);
    const cJSON *fo;
    int i = 0;
    if (!c.rc)
        cJSON_ArrayForEach(fo, flows)
        {
            parse_flow(&c, i, fo, &m->flows[i]);
            i++;
            m->nflows = i;
            if (c.rc)
                break;
        }
    for (int a = 0; !c.rc && a < m->nflows; a++)
        for (int b = a + 1; b < m->nflows; b++)
            if (!strcmp(m->flows[a].name, m->flows[b].name))
                perr(&c, b, "name", "\"%s\" is used twice", m->flows[b].name);
    if (!c.rc && mix_foreground(m) < 0)
        perr(&c, -1, "flows", "need at least one flow with \"role\": \"foreground\"");
    if (c.rc) {
        mix_free(m);
        return c.rc;
    }
    return 0;
}

int mix_load_file(const char *path, struct mix *m, struct ft_err *err)
{
    cJSON *doc;
    int rc = jsonutil_load(path, &doc, err);
    if (rc < 0)
        return rc;
    rc = mix_from_json(doc, path, m, err);
    cJSON_Delete(doc);
    return rc;
}

/* Directories searched for presets, most personal first. */
static int preset_dirs(char dirs[DATADIR_MAX][DATADIR_LEN])
{
    return datadir_search("mixes", FABTOP_MIX_SOURCE_DIR, dirs);
}

int mix_load(const char *name_or_path, struct mix *m, struct ft_err *err)
{
    /* Whatever exists (and is not a directory) is a file, whatever its name ("mymix",
     * "garbage.bin"); a path from / or . and NAME.json are files even when missing; anything
     * else is a preset ("api", "sim/incast-pfc" in a subfolder). */
    struct stat st;
    if ((stat(name_or_path, &st) == 0 && !S_ISDIR(st.st_mode)) || name_or_path[0] == '/' ||
        name_or_path[0] == '.' || strstr(name_or_path, ".json"))
        return mix_load_file(name_or_path, m, err);
    char dirs[DATADIR_MAX][DATADIR_LEN];
    int n = preset_dirs(dirs);
    for (int i = 0; i < n; i++) {
        char path[700];
        snprintf(path, sizeof(path), "%s/%s.json", dirs[i], name_or_path);
        if (fsutil_exists("/", path))
            return mix_load_file(path, m, err);
    }
    struct strbuf sb;
    strbuf_init(&sb);
    char **names = mix_list_presets();
    for (char **p = names; p && *p; p++)
        strbuf_printf(&sb, "%s%s", p == names ? "" : ", ", *p);
    int rc = ft_err_set(err, -ENOENT, "mix '%s': no such preset or file (presets: %s)",
                        name_or_path, sb.len ? sb.s : "none found");
    mix_free_names(names);
    strbuf_free(&sb);
    return rc;
}

/* Add NAME.json entries of dir/sub (sub "" for the top level) as "NAME" or "sub/NAME". */
static void add_presets(const char *dir, const char *sub, char ***out, int *count)
{
    char path[700], prefix[80];
    snprintf(path, sizeof(path), "%s%s%s", dir, sub[0] ? "/" : "", sub);
    snprintf(prefix, sizeof(prefix), "%s%s", sub, sub[0] ? "/" : "");
    fsutil_add_json_names(path, prefix, out, count);
}

char **mix_list_presets(void)
{
    char dirs[DATADIR_MAX][DATADIR_LEN];
    int n = preset_dirs(dirs), count = 0;
    char **out = xalloc_zero(1, sizeof(char *));
    /* The top level first, then one level of subfolders ("sim/incast-pfc"); deeper folders
     * (sim/topologies) hold other documents. */
    for (int i = 0; i < n; i++)
        add_presets(dirs[i], "", &out, &count);
    for (int i = 0; i < n; i++) {
        char **subs;
        int k = fsutil_list("/", dirs[i], &subs);
        for (int j = 0; j < k; j++)
            if (!strchr(subs[j], '.'))
                add_presets(dirs[i], subs[j], &out, &count);
        if (k >= 0)
            fsutil_free_list(subs);
    }
    return out;
}

void mix_free_names(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}

/* ---- printing ---- */

static cJSON *size_json(uint64_t b)
{
    return cJSON_CreateNumber((double)b);
}

cJSON *mix_to_json(const struct mix *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", MIX_FORMAT);
    cJSON_AddNumberToObject(o, "version", MIX_VERSION);
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "description", m->description);
    if (m->lesson[0])
        cJSON_AddStringToObject(o, "lesson", m->lesson);
    cJSON *ph = cJSON_AddArrayToObject(o, "phases");
    if (m->quiet_then_loaded)
        cJSON_AddItemToArray(ph, cJSON_CreateString("quiet"));
    cJSON_AddItemToArray(ph, cJSON_CreateString("loaded"));
    cJSON_AddNumberToObject(o, "progress_deadline_s", m->progress_deadline_s);
    cJSON_AddNumberToObject(o, "fail_bound_s", m->fail_bound_s);
    cJSON *fa = cJSON_AddArrayToObject(o, "flows");
    for (int i = 0; i < m->nflows; i++) {
        const struct mix_flow *f = &m->flows[i];
        cJSON *fo = cJSON_CreateObject();
        cJSON_AddStringToObject(fo, "name", f->name);
        cJSON_AddStringToObject(fo, "role", role_names[f->role]);
        if (f->class_name[0])
            cJSON_AddStringToObject(fo, "class", f->class_name);
        if (f->per_step > 0)
            cJSON_AddNumberToObject(fo, "per_step", f->per_step);
        cJSON_AddStringToObject(fo, "transport", f->transport);
        cJSON_AddStringToObject(fo, "op", op_names[f->op]);
        cJSON_AddStringToObject(fo, "direction", dir_names[f->dir]);
        cJSON_AddStringToObject(fo, "latency_kind", mix_latency_kind_str(mix_latency_kind_of(f)));
        cJSON *lo = cJSON_AddObjectToObject(fo, "local");
        cJSON_AddStringToObject(lo, "ip", f->local_ip);
        cJSON_AddStringToObject(lo, "netdev", f->local_netdev);
        cJSON_AddStringToObject(lo, "rdma", f->local_rdma);
        if (f->local_gpu >= 0)
            cJSON_AddNumberToObject(lo, "gpu", f->local_gpu);
        else
            cJSON_AddNullToObject(lo, "gpu");
        cJSON_AddStringToObject(fo, "peer", f->peer);
        const struct mix_sizes *s = &f->size;
        if (s->kind == MIX_SIZE_FIXED) {
            cJSON_AddItemToObject(fo, "size", size_json(s->bytes[0]));
        } else if (s->kind == MIX_SIZE_SWEEP) {
            cJSON *so = cJSON_AddObjectToObject(fo, "size");
            cJSON *sw = cJSON_AddObjectToObject(so, "sweep");
            cJSON_AddItemToObject(sw, "from", size_json(s->bytes[0]));
            cJSON_AddItemToObject(sw, "to", size_json(s->sweep_to));
            cJSON_AddNumberToObject(sw, "factor", s->sweep_factor);
        } else {
            cJSON *so = cJSON_AddObjectToObject(fo, "size");
            cJSON *d = cJSON_AddArrayToObject(so, "dist");
            for (int k = 0; k < s->n; k++) {
                cJSON *pair = cJSON_CreateArray();
                cJSON_AddItemToArray(pair, size_json(s->bytes[k]));
                cJSON_AddItemToArray(pair, cJSON_CreateNumber(s->weight[k]));
                cJSON_AddItemToArray(d, pair);
            }
        }
        if (s->response_bytes)
            cJSON_AddItemToObject(fo, "response_size", size_json(s->response_bytes));
        cJSON_AddNumberToObject(fo, "concurrency", f->concurrency);
        cJSON_AddNumberToObject(fo, "rate_gbps", f->rate_gbps);
        cJSON_AddNumberToObject(fo, "warmup_s", f->warmup_s);
        cJSON_AddNumberToObject(fo, "duration_s", f->duration_s);
        cJSON_AddNumberToObject(fo, "iterations", (double)f->iterations);
        cJSON_AddNumberToObject(fo, "start_s", f->start_s);
        cJSON_AddNumberToObject(fo, "seed", (double)f->seed);
        if (f->params)
            cJSON_AddItemToObject(fo, "params", cJSON_Duplicate(f->params, 1));
        if (f->recover.set) {
            cJSON *ro = cJSON_AddObjectToObject(fo, "recover");
            cJSON_AddNumberToObject(ro, "attempts", f->recover.attempts);
            cJSON *b = cJSON_AddArrayToObject(ro, "backoff_ms");
            cJSON_AddItemToArray(b, cJSON_CreateNumber(f->recover.backoff_min_ms));
            cJSON_AddItemToArray(b, cJSON_CreateNumber(f->recover.backoff_max_ms));
            cJSON_AddNumberToObject(ro, "deadline_s", f->recover.deadline_s);
            if (f->recover.nfailover) {
                cJSON *fl = cJSON_AddArrayToObject(ro, "failover");
                for (int k = 0; k < f->recover.nfailover; k++)
                    cJSON_AddItemToArray(fl, cJSON_CreateString(f->recover.failover[k]));
            }
        }
        cJSON_AddItemToArray(fa, fo);
    }
    return o;
}

void mix_free(struct mix *m)
{
    for (int i = 0; i < m->nflows; i++) {
        cJSON_Delete(m->flows[i].params);
        m->flows[i].params = NULL;
    }
}

int mix_set_library(struct mix *m, const char *transport, const char *path)
{
    if (strlen(path) >= sizeof(m->flows[0].library))
        return -ENAMETOOLONG;
    for (int i = 0; i < m->nflows; i++)
        if (!strcmp(m->flows[i].transport, transport))
            snprintf(m->flows[i].library, sizeof(m->flows[i].library), "%s", path);
    return 0;
}

void mix_copy(struct mix *dst, const struct mix *src)
{
    *dst = *src;
    for (int i = 0; i < dst->nflows; i++)
        dst->flows[i].params =
            src->flows[i].params ? cJSON_Duplicate(src->flows[i].params, 1) : NULL;
}

bool mix_all_simulated(const struct mix *m)
{
    bool all = m->nflows > 0;
    for (int i = 0; i < m->nflows; i++)
        all &= !strcmp(m->flows[i].transport, "sim");
    return all;
}

int mix_foreground(const struct mix *m)
{
    for (int i = 0; i < m->nflows; i++)
        if (m->flows[i].role == MIX_ROLE_FOREGROUND)
            return i;
    return -1;
}

void mix_set_size(struct mix *m, uint64_t bytes)
{
    int fg = mix_foreground(m);
    if (fg < 0)
        return;
    struct mix_sizes *s = &m->flows[fg].size;
    s->kind = MIX_SIZE_FIXED;
    s->n = 1;
    s->bytes[0] = bytes;
}

void mix_set_duration(struct mix *m, double sec)
{
    for (int i = 0; i < m->nflows; i++)
        if (m->flows[i].role == MIX_ROLE_FOREGROUND || m->flows[i].duration_s > 0) {
            m->flows[i].duration_s = sec;
            m->flows[i].iterations = 0;
        }
}
