/* results_drill_json: the fabtop-drill document's one reader and one writer: every key is
 * spelled once, in the tables below, in the order the writer writes them. */
#include "engine/results/results_drill.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/results/results_field.h"

enum fk { F_NUM, F_STR, F_BOOL };
struct fd {
    const char *key;
    enum fk kind;
    size_t off;
};

#define N(s, k)                                                                                    \
    {                                                                                              \
#k, F_NUM, offsetof(struct s, k)                                                           \
    }
#define S(s, k)                                                                                    \
    {                                                                                              \
#k, F_STR, offsetof(struct s, k)                                                           \
    }
#define B(s, k)                                                                                    \
    {                                                                                              \
#k, F_BOOL, offsetof(struct s, k)                                                          \
    }
#define NF(t) (sizeof(t) / sizeof(t[0]))

static const struct fd head_f[] = {
    S(results_drill_doc, fabtop),    S(results_drill_doc, mix),
    S(results_drill_doc, peer),      S(results_drill_doc, data_peer),
    S(results_drill_doc, transport), N(results_drill_doc, fail_bound_s)};
static const struct fd fault_f[] = {S(results_drill_doc, kind),   S(results_drill_doc, netns),
                                    S(results_drill_doc, device), N(results_drill_doc, at_s),
                                    N(results_drill_doc, for_s),  N(results_drill_doc, repeat)};
static const struct fd flow_f[] = {S(results_drill_flow, name),
                                   S(results_drill_flow, op),
                                   N(results_drill_flow, connections),
                                   N(results_drill_flow, quiet_p99_us),
                                   N(results_drill_flow, detected_at_s),
                                   S(results_drill_flow, detection),
                                   N(results_drill_flow, recovered_at_s),
                                   N(results_drill_flow, returned_at_s),
                                   N(results_drill_flow, detect_s),
                                   N(results_drill_flow, detect_bound_s),
                                   B(results_drill_flow, detect_ok),
                                   N(results_drill_flow, recover_s),
                                   N(results_drill_flow, recover_deadline_s),
                                   B(results_drill_flow, recover_ok),
                                   B(results_drill_flow, recovered),
                                   N(results_drill_flow, reconnects),
                                   N(results_drill_flow, failovers),
                                   S(results_drill_flow, recovered_on),
                                   N(results_drill_flow, ranks_before),
                                   N(results_drill_flow, ranks_after),
                                   S(results_drill_flow, rebuilt)};
static const struct fd req_f[] = {
    N(results_drill_flow, issued),    N(results_drill_flow, completed),
    N(results_drill_flow, late),      N(results_drill_flow, failed),
    N(results_drill_flow, abandoned), N(results_drill_flow, hanging)};
static const struct fd seen_f[] = {S(results_drill_flow, queue_pair),
                                   {"text", F_STR, offsetof(struct results_drill_flow, seen_text)},
                                   N(results_drill_flow, counters_window_s)};
static const struct fd ctr_f[] = {S(results_drill_counter, object), S(results_drill_counter, name),
                                  N(results_drill_counter, delta)};
static const struct fd rep_f[] = {N(results_drill_rep, index), N(results_drill_rep, injected_at_s)};
static const struct fd load_f[] = {
    S(results_drill_load, name),        S(results_drill_load, direction),
    N(results_drill_load, connections), N(results_drill_load, before_gbps),
    N(results_drill_load, during_gbps), N(results_drill_load, after_gbps),
    N(results_drill_load, reconnects)};
static const struct fd agent_f[] = {N(results_drill_rep, answered),
                                    N(results_drill_rep, client_completed),
                                    B(results_drill_rep, agree)};
static const struct fd stat_f[] = {N(results_drill_stat, min_s), N(results_drill_stat, p50_s),
                                   N(results_drill_stat, max_s), N(results_drill_stat, n)};
static const struct fd sum_f[] = {N(results_drill_doc, drills)};
static const struct fd sum2_f[] = {N(results_drill_doc, broke_bound),
                                   N(results_drill_doc, never_recovered),
                                   N(results_drill_doc, agent_disagrees)};
static const struct fd proc_f[] = {
    N(results_drill_doc, fds_before), N(results_drill_doc, fds_after),
    N(results_drill_doc, threads_before), N(results_drill_doc, threads_after)};

void results_drill_num(struct results_num *f, double v)
{
    f->st = RESULTS_SET;
    f->v = v;
}

void results_drill_null(struct results_num *f)
{
    f->st = RESULTS_NULL;
}

static void put(cJSON *o, const void *base, const struct fd *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const void *p = (const char *)base + t[i].off;
        if (t[i].kind == F_NUM)
            results_field_put_num(o, t[i].key, p);
        else if (t[i].kind == F_STR)
            results_field_put_str(o, t[i].key, p);
        else
            results_field_put_bool(o, t[i].key, p);
    }
}

static void get(struct results_rd *r, const cJSON *o, const char *where, void *base,
                const struct fd *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *p = (char *)base + t[i].off;
        if (t[i].kind == F_NUM)
            results_field_get_num(r, o, where, t[i].key, p);
        else if (t[i].kind == F_STR)
            results_field_get_str(r, o, where, t[i].key, p);
        else
            results_field_get_bool(r, o, where, t[i].key, p);
    }
}

static cJSON *put_sub(cJSON *o, const char *k, enum results_state st)
{
    if (st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    return st == RESULTS_SET ? cJSON_AddObjectToObject(o, k) : NULL;
}

static void put_strs(cJSON *o, const char *k, const struct results_str *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, k);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, v[i].st == RESULTS_SET ? cJSON_CreateString(v[i].s)
                                                       : cJSON_CreateNull());
}

/* "seen_by": could, did, queue_pair, text, counters_window_s, counters. */
static void put_seen(cJSON *fo, const struct results_drill_flow *fl)
{
    cJSON *so = put_sub(fo, "seen_by", fl->seen_st);
    if (!so)
        return;
    put_strs(so, "could", fl->could, fl->ncould);
    put_strs(so, "did", fl->did, fl->ndid);
    put(so, fl, seen_f, NF(seen_f));
    if (fl->counters_st == RESULTS_NULL)
        cJSON_AddNullToObject(so, "counters");
    if (fl->counters_st != RESULTS_SET)
        return;
    cJSON *ca = cJSON_AddArrayToObject(so, "counters");
    for (int i = 0; i < fl->ncounters; i++) {
        cJSON *co = cJSON_CreateObject();
        put(co, &fl->counters[i], ctr_f, NF(ctr_f));
        cJSON_AddItemToArray(ca, co);
    }
}

cJSON *results_drill_write(const struct results_drill_doc *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", RESULTS_DRILL_FORMAT);
    cJSON_AddNumberToObject(o, "version", RESULTS_DRILL_VERSION);
    put(o, d, head_f, NF(head_f));
    cJSON *f = put_sub(o, "fault", d->fault_st);
    if (f)
        put(f, d, fault_f, NF(fault_f));
    results_field_put_bool(o, "complete", &d->complete);
    cJSON *reps = cJSON_AddArrayToObject(o, "repetitions");
    for (int i = 0; i < d->nreps; i++) {
        const struct results_drill_rep *r = &d->reps[i];
        cJSON *ro = cJSON_CreateObject();
        put(ro, r, rep_f, NF(rep_f));
        cJSON *fa = cJSON_AddArrayToObject(ro, "flows");
        for (int k = 0; k < r->nflows; k++) {
            const struct results_drill_flow *fl = &r->flows[k];
            cJSON *fo = cJSON_CreateObject();
            put(fo, fl, flow_f, NF(flow_f));
            cJSON *rq = put_sub(fo, "requests", fl->requests_st);
            if (rq)
                put(rq, fl, req_f, NF(req_f));
            put_seen(fo, fl);
            cJSON_AddItemToArray(fa, fo);
        }
        if (r->load_st == RESULTS_SET) {
            cJSON *la = cJSON_AddArrayToObject(ro, "load");
            for (int k = 0; k < r->nload; k++) {
                cJSON *lo = cJSON_CreateObject();
                put(lo, &r->load[k], load_f, NF(load_f));
                cJSON_AddItemToArray(la, lo);
            }
        }
        cJSON *ag = put_sub(ro, "agent", r->agent_st);
        if (ag)
            put(ag, r, agent_f, NF(agent_f));
        cJSON_AddItemToArray(reps, ro);
    }
    cJSON *s = put_sub(o, "summary", d->summary_st);
    if (s) {
        put(s, d, sum_f, NF(sum_f));
        const struct results_drill_stat *st[2] = {&d->detect, &d->recover};
        const char *nm[2] = {"detect", "recover"};
        for (int i = 0; i < 2; i++) {
            cJSON *x = put_sub(s, nm[i], st[i]->st);
            if (x)
                put(x, st[i], stat_f, NF(stat_f));
        }
        put(s, d, sum2_f, NF(sum2_f));
    }
    cJSON *p = put_sub(o, "process", d->process_st);
    if (p)
        put(p, d, proc_f, NF(proc_f));
    return o;
}

/* An array of strings (or nulls) k of o: 0 members when it is not there. */
static struct results_str *get_strs(struct results_rd *r, const cJSON *o, const char *where,
                                    const char *k, int *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, k);
    *n = 0;
    if (!a)
        return NULL;
    if (!cJSON_IsArray(a)) {
        results_field_bad(r, where, k, "an array");
        return NULL;
    }
    int m = cJSON_GetArraySize(a);
    struct results_str *v = m ? xalloc_zero((size_t)m, sizeof(*v)) : NULL;
    *n = m;
    for (int i = 0; i < m; i++) {
        const cJSON *x = cJSON_GetArrayItem(a, i);
        if (cJSON_IsString(x)) {
            v[i].st = RESULTS_SET;
            v[i].s = xalloc_strdup(x->valuestring);
        } else if (cJSON_IsNull(x)) {
            v[i].st = RESULTS_NULL;
        } else {
            results_field_bad(r, where, k, "an array of strings");
        }
    }
    return v;
}

static void get_seen(struct results_rd *r, const cJSON *fo, const char *where,
                     struct results_drill_flow *fl)
{
    const cJSON *so = results_field_obj(r, fo, where, "seen_by", &fl->seen_st);
    if (!so)
        return;
    char w[128];
    snprintf(w, sizeof(w), "%s.seen_by", where);
    fl->could = get_strs(r, so, w, "could", &fl->ncould);
    fl->did = get_strs(r, so, w, "did", &fl->ndid);
    get(r, so, w, fl, seen_f, NF(seen_f));
    const cJSON *ca = results_field_arr(r, so, w, "counters", &fl->counters_st);
    int n = ca ? cJSON_GetArraySize(ca) : 0;
    fl->counters = n ? xalloc_zero((size_t)n, sizeof(*fl->counters)) : NULL;
    fl->ncounters = n;
    for (int i = 0; i < n && !r->rc; i++) {
        char w2[160];
        snprintf(w2, sizeof(w2), "%s.counters[%d]", w, i);
        const cJSON *co = cJSON_GetArrayItem(ca, i);
        if (!cJSON_IsObject(co)) {
            results_field_bad(r, w2, NULL, "an object");
            return;
        }
        get(r, co, w2, &fl->counters[i], ctr_f, NF(ctr_f));
    }
}

int results_drill_read(const cJSON *doc, const char *what, struct results_drill_doc *out,
                       struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    struct results_rd r = {.what = what, .err = err};
    const char *fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "format"));
    if (!cJSON_IsObject(doc) || !fmt || strcmp(fmt, RESULTS_DRILL_FORMAT))
        return ft_err_set(err, -EBADMSG, "%s: not a fabtop drill document (\"format\": \"%s\")",
                          what, RESULTS_DRILL_FORMAT);
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != RESULTS_DRILL_VERSION)
        return ft_err_set(err, -EPROTO, "%s: drill document version %g, this fabtop reads %d", what,
                          cJSON_IsNumber(ver) ? ver->valuedouble : 0.0, RESULTS_DRILL_VERSION);
    get(&r, doc, "", out, head_f, NF(head_f));
    const cJSON *f = results_field_obj(&r, doc, "", "fault", &out->fault_st);
    if (f)
        get(&r, f, "fault", out, fault_f, NF(fault_f));
    results_field_get_bool(&r, doc, "", "complete", &out->complete);
    const cJSON *reps = cJSON_GetObjectItemCaseSensitive(doc, "repetitions");
    if (reps && !cJSON_IsArray(reps))
        results_field_bad(&r, "", "repetitions", "an array");
    int nr = cJSON_IsArray(reps) ? cJSON_GetArraySize(reps) : 0;
    out->reps = nr ? xalloc_zero((size_t)nr, sizeof(*out->reps)) : NULL;
    out->nreps = nr;
    for (int i = 0; i < nr && !r.rc; i++) {
        struct results_drill_rep *rp = &out->reps[i];
        const cJSON *ro = cJSON_GetArrayItem(reps, i);
        char where[64];
        snprintf(where, sizeof(where), "repetitions[%d]", i);
        if (!cJSON_IsObject(ro)) {
            results_field_bad(&r, where, NULL, "an object");
            break;
        }
        get(&r, ro, where, rp, rep_f, NF(rep_f));
        const cJSON *fa = cJSON_GetObjectItemCaseSensitive(ro, "flows");
        int nf = cJSON_IsArray(fa) ? cJSON_GetArraySize(fa) : 0;
        rp->flows = nf ? xalloc_zero((size_t)nf, sizeof(*rp->flows)) : NULL;
        rp->nflows = nf;
        for (int k = 0; k < nf && !r.rc; k++) {
            char w2[96];
            snprintf(w2, sizeof(w2), "%s.flows[%d]", where, k);
            const cJSON *fo = cJSON_GetArrayItem(fa, k);
            if (!cJSON_IsObject(fo)) {
                results_field_bad(&r, w2, NULL, "an object");
                break;
            }
            get(&r, fo, w2, &rp->flows[k], flow_f, NF(flow_f));
            const cJSON *rq = results_field_obj(&r, fo, w2, "requests", &rp->flows[k].requests_st);
            if (rq)
                get(&r, rq, w2, &rp->flows[k], req_f, NF(req_f));
            get_seen(&r, fo, w2, &rp->flows[k]);
        }
        const cJSON *la = cJSON_GetObjectItemCaseSensitive(ro, "load");
        if (la && !cJSON_IsArray(la))
            results_field_bad(&r, where, "load", "an array");
        int nl = cJSON_IsArray(la) ? cJSON_GetArraySize(la) : 0;
        rp->load_st = cJSON_IsArray(la) ? RESULTS_SET : RESULTS_ABSENT;
        rp->load = nl ? xalloc_zero((size_t)nl, sizeof(*rp->load)) : NULL;
        rp->nload = nl;
        for (int k = 0; k < nl && !r.rc; k++) {
            char w2[96];
            snprintf(w2, sizeof(w2), "%s.load[%d]", where, k);
            const cJSON *lo = cJSON_GetArrayItem(la, k);
            if (!cJSON_IsObject(lo)) {
                results_field_bad(&r, w2, NULL, "an object");
                break;
            }
            get(&r, lo, w2, &rp->load[k], load_f, NF(load_f));
        }
        const cJSON *ag = results_field_obj(&r, ro, where, "agent", &rp->agent_st);
        if (ag)
            get(&r, ag, where, rp, agent_f, NF(agent_f));
    }
    const cJSON *s = results_field_obj(&r, doc, "", "summary", &out->summary_st);
    if (s) {
        get(&r, s, "summary", out, sum_f, NF(sum_f));
        struct results_drill_stat *st[2] = {&out->detect, &out->recover};
        const char *nm[2] = {"detect", "recover"};
        for (int i = 0; i < 2; i++) {
            const cJSON *x = results_field_obj(&r, s, "summary", nm[i], &st[i]->st);
            if (x)
                get(&r, x, nm[i], st[i], stat_f, NF(stat_f));
        }
        get(&r, s, "summary", out, sum2_f, NF(sum2_f));
    }
    const cJSON *p = results_field_obj(&r, doc, "", "process", &out->process_st);
    if (p)
        get(&r, p, "process", out, proc_f, NF(proc_f));
    if (r.rc)
        results_drill_free(out);
    return r.rc;
}

static void free_strs(void *base, const struct fd *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].kind == F_STR) {
            struct results_str *s = (struct results_str *)((char *)base + t[i].off);
            free(s->s);
            s->s = NULL;
        }
}

void results_drill_free(struct results_drill_doc *d)
{
    free_strs(d, head_f, NF(head_f));
    free_strs(d, fault_f, NF(fault_f));
    for (int i = 0; i < d->nreps; i++) {
        for (int k = 0; k < d->reps[i].nflows; k++) {
            struct results_drill_flow *fl = &d->reps[i].flows[k];
            free_strs(fl, flow_f, NF(flow_f));
            free_strs(fl, seen_f, NF(seen_f));
            for (int j = 0; j < fl->ncould; j++)
                free(fl->could[j].s);
            free(fl->could);
            for (int j = 0; j < fl->ndid; j++)
                free(fl->did[j].s);
            free(fl->did);
            for (int j = 0; j < fl->ncounters; j++)
                free_strs(&fl->counters[j], ctr_f, NF(ctr_f));
            free(fl->counters);
        }
        free(d->reps[i].flows);
        for (int k = 0; k < d->reps[i].nload; k++)
            free_strs(&d->reps[i].load[k], load_f, NF(load_f));
        free(d->reps[i].load);
    }
    free(d->reps);
    memset(d, 0, sizeof(*d));
}
