/* results_sweep_json: reads and writes a rack sweep's document (results_sweep.h). The writer
 * writes the keys in one fixed order and only those present; a test's run goes through the
 * run document's own writer and reader (results_json.h), so a document read back writes out
 * byte for byte. */
#include "engine/results/results_sweep.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/results/results_field.h"
#include "engine/results/results_json.h"

/* ---- freeing ---- */

static void str_free(struct results_str *f)
{
    free(f->s);
    f->s = NULL;
}

static void strings_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void rank_free(struct results_sweep_rank *r)
{
    free(r->host);
    struct results_str *s[] = {&r->group, &r->address, &r->unlike, &r->status, &r->error};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        str_free(s[i]);
    cJSON_Delete(r->nics);
    cJSON_Delete(r->conditions);
    cJSON_Delete(r->topology);
}

static void test_free(struct results_sweep_test *t)
{
    free(t->pattern);
    free(t->role);
    free(t->status);
    str_free(&t->phase);
    str_free(&t->error);
    str_free(&t->transport);
    results_run_free(&t->run);
}

static void qty_free(struct results_sweep_qty *q)
{
    str_free(&q->unit);
    str_free(&q->kind);
}

static void verdict_free(struct results_sweep_verdict *v)
{
    free(v->kind);
    free(v->metric);
    free(v->state);
    free(v->message);
    str_free(&v->transport);
    str_free(&v->group_a);
    str_free(&v->group_b);
    qty_free(&v->observed);
    qty_free(&v->reference);
    qty_free(&v->ratio);
}

void results_sweep_free(struct results_sweep *s)
{
    if (!s)
        return;
    struct results_str *str[] = {&s->format,   &s->fabtop_version, &s->launcher, &s->started_at,
                                 &s->ended_at, &s->on_failure,     &s->status,   &s->summary};
    for (size_t i = 0; i < sizeof(str) / sizeof(str[0]); i++)
        str_free(str[i]);
    strings_free(s->patterns, s->npatterns);
    cJSON_Delete(s->mix);
    for (int i = 0; i < s->nranks; i++)
        rank_free(&s->ranks[i]);
    free(s->ranks);
    for (int i = 0; i < s->ntests; i++)
        test_free(&s->tests[i]);
    free(s->tests);
    for (int i = 0; i < s->npairs; i++) {
        str_free(&s->pairs[i].latency_kind);
        str_free(&s->pairs[i].path_class);
        str_free(&s->pairs[i].transport);
        str_free(&s->pairs[i].error);
    }
    free(s->pairs);
    for (int i = 0; i < s->nshares; i++) {
        free(s->shares[i].pattern);
        str_free(&s->shares[i].fair_kind);
    }
    free(s->shares);
    for (int i = 0; i < s->nverdicts; i++)
        verdict_free(&s->verdicts[i]);
    free(s->verdicts);
    strings_free(s->events, s->nevents);
    memset(s, 0, sizeof(*s));
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

bool results_sweep_median(double *v, int n, double *out)
{
    if (n <= 0)
        return false;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    *out = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return true;
}

bool results_sweep_is(const cJSON *j)
{
    const char *fmt = jsonutil_str(j, "format");
    return fmt && !strcmp(fmt, RESULTS_SWEEP_FORMAT);
}

/* ---- the writer ---- */

/* A required string: NULL is written as null. */
static void put_cstr(cJSON *o, const char *k, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, k, s);
    else
        cJSON_AddNullToObject(o, k);
}

/* An array member: null, absent, or the array the caller fills (returned). */
static cJSON *put_arr(cJSON *o, const char *k, enum results_state st, int n)
{
    if (st == RESULTS_NULL && n == 0) {
        cJSON_AddNullToObject(o, k);
        return NULL;
    }
    return st == RESULTS_SET || n > 0 ? cJSON_AddArrayToObject(o, k) : NULL;
}

static void put_strings(cJSON *o, const char *k, enum results_state st, char *const *v, int n)
{
    cJSON *a = put_arr(o, k, st, n);
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i] ? v[i] : ""));
}

static void put_qty(cJSON *o, const char *k, const struct results_sweep_qty *q)
{
    if (q->st == RESULTS_NULL) {
        cJSON_AddNullToObject(o, k);
        return;
    }
    if (q->st != RESULTS_SET && !q->value.st && !q->unit.st && !q->kind.st)
        return;
    cJSON *e = cJSON_AddObjectToObject(o, k);
    results_field_put_num(e, "value", &q->value);
    results_field_put_str(e, "unit", &q->unit);
    results_field_put_str(e, "kind", &q->kind);
}

static cJSON *write_rank(const struct results_sweep_rank *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", r->rank);
    put_cstr(o, "host", r->host);
    results_field_put_str(o, "group", &r->group);
    results_field_put_num(o, "local_rank", &r->local_rank);
    results_field_put_num(o, "rail", &r->rail);
    results_field_put_str(o, "address", &r->address);
    results_field_put_num(o, "gpus", &r->gpus);
    results_field_put_carried(o, "nics", r->nics);
    results_field_put_str(o, "unlike", &r->unlike);
    results_field_put_str(o, "status", &r->status);
    results_field_put_str(o, "error", &r->error);
    results_field_put_carried(o, "conditions", r->conditions);
    results_field_put_carried(o, "topology", r->topology);
    return o;
}

static cJSON *write_pair(const struct results_sweep_pair *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "a", p->a);
    cJSON_AddNumberToObject(o, "b", p->b);
    cJSON_AddNumberToObject(o, "rail", p->rail);
    results_field_put_str(o, "transport", &p->transport);
    results_field_put_str(o, "latency_kind", &p->latency_kind);
    results_field_put_num(o, "lat_p50_us", &p->lat_p50_us);
    results_field_put_num(o, "lat_p99_us", &p->lat_p99_us);
    results_field_put_num(o, "lat_p999_us", &p->lat_p999_us);
    results_field_put_num(o, "bw_ab_gbps", &p->bw_ab_gbps);
    results_field_put_num(o, "bw_ba_gbps", &p->bw_ba_gbps);
    results_field_put_bool(o, "failed", &p->failed);
    results_field_put_str(o, "error", &p->error);
    results_field_put_bool(o, "unlike", &p->unlike);
    results_field_put_str(o, "path_class", &p->path_class);
    return o;
}

static cJSON *write_share(const struct results_sweep_share *h)
{
    cJSON *o = cJSON_CreateObject();
    put_cstr(o, "pattern", h->pattern);
    cJSON_AddNumberToObject(o, "round", h->round);
    cJSON_AddNumberToObject(o, "src", h->src);
    cJSON_AddNumberToObject(o, "dst", h->dst);
    results_field_put_num(o, "gbps", &h->gbps);
    results_field_put_num(o, "fair_gbps", &h->fair_gbps);
    results_field_put_num(o, "share", &h->share);
    results_field_put_str(o, "fair_kind", &h->fair_kind);
    return o;
}

static cJSON *write_verdict(const struct results_sweep_verdict *v)
{
    cJSON *o = cJSON_CreateObject();
    put_cstr(o, "kind", v->kind);
    put_cstr(o, "metric", v->metric);
    put_cstr(o, "state", v->state);
    results_field_put_num(o, "rank", &v->rank);
    results_field_put_num(o, "peer", &v->peer);
    results_field_put_num(o, "rail", &v->rail);
    results_field_put_str(o, "transport", &v->transport);
    results_field_put_str(o, "group_a", &v->group_a);
    results_field_put_str(o, "group_b", &v->group_b);
    put_qty(o, "observed", &v->observed);
    put_qty(o, "reference", &v->reference);
    put_qty(o, "ratio", &v->ratio);
    results_field_put_num(o, "n_slow", &v->n_slow);
    results_field_put_num(o, "n_pairs", &v->n_pairs);
    put_cstr(o, "message", v->message);
    return o;
}

static cJSON *write_test(const struct results_sweep_test *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "round", t->round);
    cJSON_AddNumberToObject(o, "step", t->step);
    put_cstr(o, "pattern", t->pattern);
    put_cstr(o, "role", t->role);
    results_field_put_str(o, "phase", &t->phase);
    results_field_put_num(o, "subject", &t->subject);
    cJSON_AddNumberToObject(o, "src", t->src);
    cJSON_AddNumberToObject(o, "dst", t->dst);
    cJSON_AddNumberToObject(o, "rail", t->rail);
    results_field_put_str(o, "transport", &t->transport);
    put_cstr(o, "status", t->status);
    results_field_put_str(o, "error", &t->error);
    results_field_put_num(o, "started_s", &t->started_s);
    if (t->run_st == RESULTS_NULL)
        cJSON_AddNullToObject(o, "run");
    else if (t->run_st == RESULTS_SET)
        cJSON_AddItemToObject(o, "run", results_json_write_run(&t->run));
    return o;
}

cJSON *results_sweep_write(const struct results_sweep *s)
{
    if (!s)
        return NULL;
    cJSON *doc = cJSON_CreateObject();
    results_field_put_str(doc, "format", &s->format);
    results_field_put_num(doc, "version", &s->version);
    results_field_put_str(doc, "fabtop_version", &s->fabtop_version);
    results_field_put_str(doc, "launcher", &s->launcher);
    results_field_put_str(doc, "started_at", &s->started_at);
    results_field_put_str(doc, "ended_at", &s->ended_at);
    results_field_put_num(doc, "duration_s", &s->duration_s);
    results_field_put_bool(doc, "interrupted", &s->interrupted);
    put_strings(doc, "patterns", s->patterns_st, s->patterns, s->npatterns);
    results_field_put_num(doc, "test_duration_s", &s->test_duration_s);
    results_field_put_str(doc, "on_failure", &s->on_failure);
    results_field_put_str(doc, "status", &s->status);
    results_field_put_num(doc, "rounds_planned", &s->rounds_planned);
    results_field_put_num(doc, "rounds_done", &s->rounds_done);
    results_field_put_str(doc, "summary", &s->summary);
    results_field_put_carried(doc, "mix", s->mix);
    cJSON *a = put_arr(doc, "ranks", s->ranks_st, s->nranks);
    for (int i = 0; a && i < s->nranks; i++)
        cJSON_AddItemToArray(a, write_rank(&s->ranks[i]));
    a = put_arr(doc, "pairs", s->pairs_st, s->npairs);
    for (int i = 0; a && i < s->npairs; i++)
        cJSON_AddItemToArray(a, write_pair(&s->pairs[i]));
    a = put_arr(doc, "shares", s->shares_st, s->nshares);
    for (int i = 0; a && i < s->nshares; i++)
        cJSON_AddItemToArray(a, write_share(&s->shares[i]));
    a = put_arr(doc, "verdicts", s->verdicts_st, s->nverdicts);
    for (int i = 0; a && i < s->nverdicts; i++)
        cJSON_AddItemToArray(a, write_verdict(&s->verdicts[i]));
    put_strings(doc, "events", s->events_st, s->events, s->nevents);
    a = put_arr(doc, "tests", s->tests_st, s->ntests);
    for (int i = 0; a && i < s->ntests; i++)
        cJSON_AddItemToArray(a, write_test(&s->tests[i]));
    return doc;
}

/* ---- the reader ---- */

/* A required string key: a string, or null (NULL). */
static char *get_cstr(struct results_rd *r, const cJSON *o, const char *where, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsString(v))
        return xalloc_strdup(v->valuestring);
    if (!cJSON_IsNull(v))
        results_field_bad(r, where, k, "a string or null");
    return NULL;
}

/* A required whole number in lo..INT_MAX. */
static int get_int(struct results_rd *r, const cJSON *o, const char *where, const char *k, int lo)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    int64_t x = 0;
    if (r->rc)
        return 0;
    if (!cJSON_IsNumber(v)) {
        results_field_bad(r, where, k, "a whole number");
        return 0;
    }
    if (!jsonutil_whole(v->valuedouble, lo, INT_MAX, &x)) {
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: %s.%s = %.15g is out of range %d-%d", r->what,
                           where, k, v->valuedouble, lo, INT_MAX);
        return 0;
    }
    return (int)x;
}

/* A required index into ranks[]. */
static int get_rank(struct results_rd *r, const cJSON *o, const char *where, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    int64_t x = 0;
    if (r->rc)
        return 0;
    if (!cJSON_IsNumber(v)) {
        results_field_bad(r, where, k, "a rank (a whole number)");
        return 0;
    }
    if (!jsonutil_whole(v->valuedouble, 0, (int64_t)r->nranks - 1, &x))
        r->rc =
            ft_err_set(r->err, -EBADMSG, "%s: %s.%s = %.15g is no rank in ranks[] (%d %s)", r->what,
                       where, k, v->valuedouble, r->nranks, r->nranks == 1 ? "rank" : "ranks");
    return (int)x;
}

/* An optional rank index (a results_num): absent, null, or an index into ranks[]. */
static void get_opt_rank(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                         struct results_num *f)
{
    results_field_get_num(r, o, where, k, f);
    if (f->st == RESULTS_SET)
        f->v = get_rank(r, o, where, k);
}

/* An optional whole number >= 0 (a rail). */
static void get_opt_nonneg(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                           struct results_num *f)
{
    results_field_get_num(r, o, where, k, f);
    if (f->st == RESULTS_SET && !r->rc)
        f->v = get_int(r, o, where, k, 0);
}

/* A carried member (a copy, in the order read): absent, null, or of the type check wants. */
static cJSON *get_carried(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                          cJSON_bool (*check)(const cJSON *), const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        return NULL;
    if (!cJSON_IsNull(v) && !check(v)) {
        results_field_bad(r, where, k, want);
        return NULL;
    }
    return cJSON_Duplicate(v, 1);
}

static char **get_strings(struct results_rd *r, const cJSON *o, const char *k,
                          enum results_state *st, int *n)
{
    const cJSON *a = results_field_arr(r, o, "", k, st);
    char **v = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(char *));
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsString(e)) {
            results_field_bad(r, "", k, "an array of strings");
            break;
        }
        v[(*n)++] = xalloc_strdup(e->valuestring);
    }
    return v;
}

/* An optional transport: absent, null, or one fabtop sweep runs. */
static void get_transport(struct results_rd *r, const cJSON *o, const char *where,
                          struct results_str *t)
{
    results_field_get_str(r, o, where, "transport", t);
    const char *v = results_str_get(t);
    if (!r->rc && v && strcmp(v, "tcp") && strcmp(v, "verbs") && strcmp(v, "nccl"))
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: %s.transport = \"%s\": want tcp, verbs or nccl",
                           r->what, where, v);
}

const char *results_sweep_transport(const struct results_str *t)
{
    const char *v = results_str_get(t);
    return v ? v : "tcp";
}

static void read_rank(struct results_rd *r, const cJSON *o, const char *where,
                      struct results_sweep_rank *k)
{
    k->rank = get_int(r, o, where, "rank", 0);
    k->host = get_cstr(r, o, where, "host");
    results_field_get_str(r, o, where, "group", &k->group);
    results_field_get_num(r, o, where, "local_rank", &k->local_rank);
    get_opt_nonneg(r, o, where, "rail", &k->rail);
    results_field_get_str(r, o, where, "address", &k->address);
    results_field_get_num(r, o, where, "gpus", &k->gpus);
    k->nics = get_carried(r, o, where, "nics", cJSON_IsArray, "an array or null");
    results_field_get_str(r, o, where, "unlike", &k->unlike);
    results_field_get_str(r, o, where, "status", &k->status);
    results_field_get_str(r, o, where, "error", &k->error);
    k->conditions = get_carried(r, o, where, "conditions", cJSON_IsObject, "an object or null");
    k->topology = get_carried(r, o, where, "topology", cJSON_IsObject, "an object or null");
}

static void read_pair(struct results_rd *r, const cJSON *o, const char *where,
                      struct results_sweep_pair *p)
{
    p->a = get_rank(r, o, where, "a");
    p->b = get_rank(r, o, where, "b");
    p->rail = get_int(r, o, where, "rail", 0);
    get_transport(r, o, where, &p->transport);
    results_field_get_str(r, o, where, "latency_kind", &p->latency_kind);
    results_field_get_num(r, o, where, "lat_p50_us", &p->lat_p50_us);
    results_field_get_num(r, o, where, "lat_p99_us", &p->lat_p99_us);
    results_field_get_num(r, o, where, "lat_p999_us", &p->lat_p999_us);
    results_field_get_num(r, o, where, "bw_ab_gbps", &p->bw_ab_gbps);
    results_field_get_num(r, o, where, "bw_ba_gbps", &p->bw_ba_gbps);
    results_field_get_bool(r, o, where, "failed", &p->failed);
    results_field_get_str(r, o, where, "error", &p->error);
    results_field_get_bool(r, o, where, "unlike", &p->unlike);
    results_field_get_str(r, o, where, "path_class", &p->path_class);
}

static void read_share(struct results_rd *r, const cJSON *o, const char *where,
                       struct results_sweep_share *h)
{
    h->pattern = get_cstr(r, o, where, "pattern");
    h->round = get_int(r, o, where, "round", 0);
    h->src = get_rank(r, o, where, "src");
    h->dst = get_rank(r, o, where, "dst");
    results_field_get_num(r, o, where, "gbps", &h->gbps);
    results_field_get_num(r, o, where, "fair_gbps", &h->fair_gbps);
    results_field_get_num(r, o, where, "share", &h->share);
    results_field_get_str(r, o, where, "fair_kind", &h->fair_kind);
}

static void read_qty(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                     struct results_sweep_qty *q)
{
    const cJSON *v = results_field_member(o, k, &q->st);
    if (q->st != RESULTS_SET)
        return;
    if (!cJSON_IsObject(v)) {
        results_field_bad(r, where, k, "an object or null");
        return;
    }
    char sub[128];
    snprintf(sub, sizeof(sub), "%s.%s", where, k);
    results_field_get_num(r, v, sub, "value", &q->value);
    results_field_get_str(r, v, sub, "unit", &q->unit);
    results_field_get_str(r, v, sub, "kind", &q->kind);
}

static void read_verdict(struct results_rd *r, const cJSON *o, const char *where,
                         struct results_sweep_verdict *v)
{
    v->kind = get_cstr(r, o, where, "kind");
    v->metric = get_cstr(r, o, where, "metric");
    v->state = get_cstr(r, o, where, "state");
    get_opt_rank(r, o, where, "rank", &v->rank);
    get_opt_rank(r, o, where, "peer", &v->peer);
    get_opt_nonneg(r, o, where, "rail", &v->rail);
    get_transport(r, o, where, &v->transport);
    results_field_get_str(r, o, where, "group_a", &v->group_a);
    results_field_get_str(r, o, where, "group_b", &v->group_b);
    read_qty(r, o, where, "observed", &v->observed);
    read_qty(r, o, where, "reference", &v->reference);
    read_qty(r, o, where, "ratio", &v->ratio);
    results_field_get_num(r, o, where, "n_slow", &v->n_slow);
    results_field_get_num(r, o, where, "n_pairs", &v->n_pairs);
    v->message = get_cstr(r, o, where, "message");
}

static void read_test(struct results_rd *r, const cJSON *o, const char *where,
                      struct results_sweep_test *t)
{
    t->round = get_int(r, o, where, "round", 0);
    t->step = get_int(r, o, where, "step", 0);
    t->pattern = get_cstr(r, o, where, "pattern");
    t->role = get_cstr(r, o, where, "role");
    results_field_get_str(r, o, where, "phase", &t->phase);
    results_field_get_num(r, o, where, "subject", &t->subject);
    t->src = get_rank(r, o, where, "src");
    t->dst = get_rank(r, o, where, "dst");
    t->rail = get_int(r, o, where, "rail", 0);
    get_transport(r, o, where, &t->transport);
    t->status = get_cstr(r, o, where, "status");
    results_field_get_str(r, o, where, "error", &t->error);
    results_field_get_num(r, o, where, "started_s", &t->started_s);
    const cJSON *run = results_field_member(o, "run", &t->run_st);
    if (r->rc || t->run_st != RESULTS_SET)
        return;
    char what[320];
    snprintf(what, sizeof(what), "%s: %s.run", r->what, where);
    r->rc = results_json_read_run(run, what, &t->run, r->err);
    if (r->rc)
        t->run_st = RESULTS_ABSENT;
}

/* Each entry of the array k through fn, as an object named "k[i]". */
#define READ_ARRAY(r, j, k, st, n, v, fn)                                                          \
    do {                                                                                           \
        const cJSON *a_ = results_field_arr(r, j, "", k, &(st));                                   \
        (v) = xalloc_zero((size_t)cJSON_GetArraySize(a_) + 1, sizeof(*(v)));                       \
        const cJSON *e_;                                                                           \
        cJSON_ArrayForEach(e_, a_)                                                                 \
        {                                                                                          \
            char w_[64];                                                                           \
            snprintf(w_, sizeof(w_), "%s[%d]", k, (n));                                            \
            if ((r)->rc)                                                                           \
                break;                                                                             \
            if (!cJSON_IsObject(e_)) {                                                             \
                results_field_bad(r, w_, NULL, "an object");                                       \
                break;                                                                             \
            }                                                                                      \
            fn(r, e_, w_, &(v)[(n)++]);                                                            \
        }                                                                                          \
    } while (0)

/* Format and version first: a document of another kind is named as such. */
#define NOT_SWEEP "not a fabtop sweep document (expected \"format\": \"%s\", version %d)"
static void read_header(struct results_rd *r, const cJSON *j)
{
    const char *fmt = jsonutil_str(j, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    int64_t v = 0;
    if (fmt && strcmp(fmt, RESULTS_SWEEP_FORMAT))
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: " NOT_SWEEP "; format is \"%.64s\"", r->what,
                           RESULTS_SWEEP_FORMAT, RESULTS_SWEEP_VERSION, fmt);
    else if (!fmt || !cJSON_IsNumber(ver))
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: " NOT_SWEEP "%s", r->what, RESULTS_SWEEP_FORMAT,
                           RESULTS_SWEEP_VERSION,
                           !fmt ? "; no \"format\"" : "; \"version\" is not a number");
    else if (!jsonutil_whole(ver->valuedouble, 1, INT_MAX, &v))
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: " NOT_SWEEP "; version %.15g is no version",
                           r->what, RESULTS_SWEEP_FORMAT, RESULTS_SWEEP_VERSION, ver->valuedouble);
    else if (v > RESULTS_SWEEP_VERSION)
        r->rc = ft_err_set(r->err, -EBADMSG,
                           "%s: " NOT_SWEEP "; version %lld is newer than this fabtop reads (%d)",
                           r->what, RESULTS_SWEEP_FORMAT, RESULTS_SWEEP_VERSION, (long long)v,
                           RESULTS_SWEEP_VERSION);
}

static void read_sweep(struct results_rd *r, const cJSON *j, struct results_sweep *s)
{
    results_field_get_str(r, j, "", "format", &s->format);
    results_field_get_num(r, j, "", "version", &s->version);
    results_field_get_str(r, j, "", "fabtop_version", &s->fabtop_version);
    results_field_get_str(r, j, "", "launcher", &s->launcher);
    results_field_get_str(r, j, "", "started_at", &s->started_at);
    results_field_get_str(r, j, "", "ended_at", &s->ended_at);
    results_field_get_num(r, j, "", "duration_s", &s->duration_s);
    results_field_get_bool(r, j, "", "interrupted", &s->interrupted);
    s->patterns = get_strings(r, j, "patterns", &s->patterns_st, &s->npatterns);
    results_field_get_num(r, j, "", "test_duration_s", &s->test_duration_s);
    results_field_get_str(r, j, "", "on_failure", &s->on_failure);
    results_field_get_str(r, j, "", "status", &s->status);
    results_field_get_num(r, j, "", "rounds_planned", &s->rounds_planned);
    results_field_get_num(r, j, "", "rounds_done", &s->rounds_done);
    results_field_get_str(r, j, "", "summary", &s->summary);
    s->mix = get_carried(r, j, "", "mix", cJSON_IsObject, "an object or null");
    READ_ARRAY(r, j, "ranks", s->ranks_st, s->nranks, s->ranks, read_rank);
    r->nranks = s->nranks;
    READ_ARRAY(r, j, "pairs", s->pairs_st, s->npairs, s->pairs, read_pair);
    READ_ARRAY(r, j, "shares", s->shares_st, s->nshares, s->shares, read_share);
    READ_ARRAY(r, j, "verdicts", s->verdicts_st, s->nverdicts, s->verdicts, read_verdict);
    s->events = get_strings(r, j, "events", &s->events_st, &s->nevents);
    READ_ARRAY(r, j, "tests", s->tests_st, s->ntests, s->tests, read_test);
}

int results_sweep_read(const cJSON *j, const char *what, struct results_sweep *s,
                       struct ft_err *err)
{
    memset(s, 0, sizeof(*s));
    struct results_rd r = {.what = what, .err = err};
    if (!cJSON_IsObject(j)) {
        results_field_bad(&r, "", NULL, "a sweep document (an object)");
        return r.rc;
    }
    read_header(&r, j);
    if (!r.rc)
        read_sweep(&r, j, s);
    if (r.rc)
        results_sweep_free(s);
    return r.rc;
}
