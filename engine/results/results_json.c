/* results_json: reads and writes the results document (results_model.h). The writer
 * writes the keys in the order results_build always has, and only those present, so that a
 * document read back writes out byte for byte. */
#include "engine/results/results_causes_json.h"
#include "engine/results/results_field.h"
#include "engine/results/results_json.h"
#include "engine/results/results_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "engine/flow/mix.h"

/* ---- freeing and setting ---- */

static void str_free(struct results_str *f)
{
    free(f->s);
    f->s = NULL;
}

void results_str_set(struct results_str *f, const char *s)
{
    str_free(f);
    f->st = s ? RESULTS_SET : RESULTS_NULL;
    f->s = s ? xalloc_strdup(s) : NULL;
}

void results_num_set(struct results_num *f, bool valid, double v)
{
    f->st = valid ? RESULTS_SET : RESULTS_NULL;
    f->v = valid ? v : 0;
}

const struct results_kv *results_kvs_find(const struct results_kvs *k, const char *key)
{
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->v[i].key, key))
            return &k->v[i];
    return NULL;
}

static void kvs_free(struct results_kvs *k)
{
    for (int i = 0; i < k->n; i++) {
        free(k->v[i].key);
        str_free(&k->v[i].val);
    }
    free(k->v);
    memset(k, 0, sizeof(*k));
}

void results_ceiling_clear(struct results_ceiling *c)
{
    str_free(&c->path);
    str_free(&c->narrowest);
    for (int i = 0; i < c->nterms; i++) {
        struct results_ceil_term *t = &c->terms[i];
        str_free(&t->name);
        str_free(&t->kind);
        str_free(&t->unit);
        str_free(&t->detail);
    }
    free(c->terms);
    memset(c, 0, sizeof(*c));
}

static void point_free(struct results_point *p)
{
    str_free(&p->latency.kind);
    str_free(&p->latency.unit);
    free(p->histogram);
    str_free(&p->step_latency.kind);
    str_free(&p->step_latency.unit);
    free(p->step_histogram);
    cJSON_Delete(p->figures);
}

static void flow_free(struct results_flow *f)
{
    struct results_str *s[] = {&f->name,      &f->transport,    &f->op,        &f->role,
                               &f->direction, &f->latency_kind, &f->peer,      &f->status,
                               &f->error,     &f->timeline.t,   &f->class_name};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        str_free(s[i]);
    for (int i = 0; i < f->npoints; i++)
        point_free(&f->points[i]);
    free(f->points);
    free(f->timeline.t_s.v);
    free(f->timeline.goodput_gbps.v);
    free(f->timeline.wire_gbps.v);
    free(f->timeline.ops_per_s.v);
    results_ceiling_clear(&f->ceiling);
    cJSON_Delete(f->conditions);
    cJSON_Delete(f->qp_counters);
}

void results_run_free(struct results_run *r)
{
    if (!r)
        return;
    struct results_str *s[] = {&r->format,
                               &r->started_at,
                               &r->ended_at,
                               &r->host_local,
                               &r->reproducible,
                               &r->conditions.sim_note,
                               &r->conditions.sim_topology,
                               &r->summary.foreground};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        str_free(s[i]);
    for (int i = 0; i < r->npeers; i++)
        free(r->peers[i]);
    free(r->peers);
    kvs_free(&r->versions);
    kvs_free(&r->conditions.sysctls);
    for (int i = 0; i < r->conditions.nmtu; i++)
        free(r->conditions.mtu[i].netdev);
    free(r->conditions.mtu);
    cJSON_Delete(r->mix);
    for (int p = 0; p < r->nphases; p++) {
        struct results_phase *ph = &r->phases[p];
        str_free(&ph->name);
        cJSON_Delete(ph->counters);
        for (int i = 0; i < ph->nflows; i++)
            flow_free(&ph->flows[i]);
        free(ph->flows);
    }
    free(r->phases);
    for (int i = 0; i < r->summary.nphases; i++) {
        free(r->summary.phases[i].phase);
        str_free(&r->summary.phases[i].status);
    }
    free(r->summary.phases);
    results_scoreboard_free(&r->scoreboard);
    results_path_free(&r->path);
    results_causes_clear(&r->causes);
    results_ref_matches_clear(&r->references);
    for (int i = 0; i < r->nevents; i++)
        free(r->events[i]);
    free(r->events);
    cJSON_Delete(r->topology);
    memset(r, 0, sizeof(*r));
}

void results_scoreboard_free(struct results_scoreboard *b)
{
    str_free(&b->basis);
    for (int i = 0; i < b->nclasses; i++) {
        struct results_score_class *c = &b->classes[i];
        free(c->name);
        str_free(&c->latency_kind);
        str_free(&c->slo);
        str_free(&c->fairness_of);
    }
    free(b->classes);
    str_free(&b->step.basis);
    str_free(&b->step.budget_from);
    for (int i = 0; i < b->step.nterms; i++)
        free(b->step.terms[i].flow);
    free(b->step.terms);
    memset(b, 0, sizeof(*b));
}

void results_doc_free(struct results_doc *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nruns; i++)
        results_run_free(&d->runs[i]);
    free(d->runs);
    memset(d, 0, sizeof(*d));
}

/* ---- the writer ---- */

/* An object member that is absent, null, or the object the caller fills (returned). */
static cJSON *put_obj(cJSON *o, const char *k, enum results_state st)
{
    if (st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    return st == RESULTS_SET ? cJSON_AddObjectToObject(o, k) : NULL;
}

/* An array member that is absent, null, or the array the caller fills (returned). */
static cJSON *put_arr(cJSON *o, const char *k, enum results_state st)
{
    if (st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    return st == RESULTS_SET ? cJSON_AddArrayToObject(o, k) : NULL;
}

static void put_kvs(cJSON *o, const struct results_kvs *k)
{
    for (int i = 0; i < k->n; i++)
        results_field_put_str(o, k->v[i].key, &k->v[i].val);
}

static void put_series(cJSON *o, const char *k, const struct results_series *s)
{
    if (s->st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    if (s->st != RESULTS_SET)
        return;
    cJSON *a = cJSON_AddArrayToObject(o, k);
    for (int i = 0; i < s->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(s->v[i]));
}

/* "latency" (its statistics) and "histogram" into o. */
static void write_latency(cJSON *o, enum results_state st, const struct results_latency *s,
                          const struct hist *h)
{
    cJSON *l = put_obj(o, "latency", st);
    if (l) {
        results_field_put_str(l, "kind", &s->kind);
        results_field_put_str(l, "unit", &s->unit);
        results_field_put_num(l, "count", &s->count);
        results_field_put_num(l, "min", &s->min);
        results_field_put_num(l, "mean", &s->mean);
        results_field_put_num(l, "stdev", &s->stdev);
        results_field_put_num(l, "p50", &s->p50);
        results_field_put_num(l, "p90", &s->p90);
        results_field_put_num(l, "p99", &s->p99);
        results_field_put_num(l, "p99.9", &s->p999);
        results_field_put_num(l, "p99.99", &s->p9999);
        results_field_put_num(l, "max", &s->max);
    }
    if (h)
        cJSON_AddItemToObject(o, "histogram", hist_to_json(h));
}

static void write_point(cJSON *o, const struct results_point *p)
{
    results_field_put_num(o, "size_bytes", &p->size_bytes);
    results_field_put_bool(o, "measured", &p->measured);
    results_field_put_bool(o, "complete", &p->complete);
    results_field_put_num(o, "measure_s", &p->measure_s);
    results_field_put_num(o, "ops", &p->ops);
    results_field_put_num(o, "ops_per_s", &p->ops_per_s);
    results_field_put_num(o, "payload_bytes", &p->payload_bytes);
    results_field_put_num(o, "goodput_gbps", &p->goodput_gbps);
    results_field_put_num(o, "wire_bytes", &p->wire_bytes);
    results_field_put_num(o, "wire_gbps", &p->wire_gbps);
    cJSON *t = put_obj(o, "tcp", p->tcp_st);
    if (t) {
        results_field_put_num(t, "retrans_segments", &p->tcp.retrans_segments);
        results_field_put_num(t, "rtt_us", &p->tcp.rtt_us);
        results_field_put_num(t, "rttvar_us", &p->tcp.rttvar_us);
        results_field_put_num(t, "cwnd_bytes", &p->tcp.cwnd_bytes);
    }
    write_latency(o, p->latency_st, &p->latency, p->histogram);
    cJSON *st = put_obj(o, "step", p->step_st);
    if (st) {
        results_field_put_num(st, "operations", &p->step_ops);
        /* Its statistics are there whenever the step is (results.c). */
        cJSON_AddStringToObject(st, "basis",
                                "one decode step's share of this flow: \"operations\" "
                                "consecutive operations of one connection summed into one "
                                "sample, measured");
        write_latency(st, p->step_st, &p->step_latency, p->step_histogram);
    }
    const cJSON *fig;
    cJSON_ArrayForEach(fig, p->figures)
        cJSON_AddItemToObject(o, fig->string, cJSON_Duplicate(fig, 1));
}

static void write_flow(cJSON *o, const struct results_flow *f)
{
    results_field_put_str(o, "name", &f->name);
    results_field_put_str(o, "transport", &f->transport);
    results_field_put_str(o, "op", &f->op);
    results_field_put_str(o, "role", &f->role);
    results_field_put_str(o, "class", &f->class_name);
    results_field_put_str(o, "direction", &f->direction);
    results_field_put_str(o, "latency_kind", &f->latency_kind);
    results_field_put_str(o, "peer", &f->peer);
    results_field_put_num(o, "connections_asked", &f->connections_asked);
    results_field_put_num(o, "workers", &f->workers);
    results_field_put_str(o, "status", &f->status);
    results_field_put_str(o, "error", &f->error);
    results_field_put_num(o, "failed_at_s", &f->failed_at_s);
    results_field_put_num(o, "detected_after_last_progress_s", &f->detected_after_last_progress_s);
    results_field_put_num(o, "failed_at_run_s", &f->failed_at_run_s);
    results_field_put_num(o, "setup_s", &f->setup_s);
    results_field_put_num(o, "teardown_s", &f->teardown_s);
    cJSON *pts = put_arr(o, "points", f->points_st);
    if (pts) {
        for (int i = 0; i < f->npoints; i++) {
            cJSON *p = cJSON_CreateObject();
            write_point(p, &f->points[i]);
            cJSON_AddItemToArray(pts, p);
        }
    }
    cJSON *t = put_obj(o, "timeline", f->timeline_st);
    if (t) {
        results_field_put_str(t, "t", &f->timeline.t);
        put_series(t, "t_s", &f->timeline.t_s);
        put_series(t, "goodput_gbps", &f->timeline.goodput_gbps);
        put_series(t, "wire_gbps", &f->timeline.wire_gbps);
        put_series(t, "ops_per_s", &f->timeline.ops_per_s);
    }
    cJSON *c = put_obj(o, "ceiling", f->ceiling.st);
    if (c) {
        results_field_put_str(c, "path", &f->ceiling.path);
        results_field_put_num(c, "gbps", &f->ceiling.gbps);
        results_field_put_str(c, "narrowest", &f->ceiling.narrowest);
        cJSON *terms = put_arr(c, "terms", f->ceiling.terms_st);
        for (int i = 0; terms && i < f->ceiling.nterms; i++) {
            const struct results_ceil_term *e = &f->ceiling.terms[i];
            cJSON *j = cJSON_CreateObject();
            results_field_put_str(j, "name", &e->name);
            results_field_put_str(j, "kind", &e->kind);
            results_field_put_num(j, "value", &e->value);
            results_field_put_str(j, "unit", &e->unit);
            results_field_put_str(j, "detail", &e->detail);
            cJSON_AddItemToArray(terms, j);
        }
    }
    results_field_put_carried(o, "conditions", f->conditions);
    results_field_put_carried(o, "qp_counters", f->qp_counters);
}

static void write_conditions(cJSON *o, const struct results_run_cond *c)
{
    cJSON *s = put_obj(o, "sim", c->sim_st);
    if (s) {
        results_field_put_str(s, "note", &c->sim_note);
        results_field_put_str(s, "topology", &c->sim_topology);
    }
    put_kvs(o, &c->sysctls);
    cJSON *m = put_obj(o, "netdev_mtu", c->netdev_mtu_st);
    if (m) {
        for (int i = 0; i < c->nmtu; i++)
            cJSON_AddNumberToObject(m, c->mtu[i].netdev, c->mtu[i].mtu);
    }
}

static void write_summary(cJSON *o, const struct results_summary *s)
{
    results_field_put_str(o, "foreground", &s->foreground);
    for (int i = 0; i < s->nphases; i++) {
        const struct results_summary_phase *p = &s->phases[i];
        cJSON *e = cJSON_AddObjectToObject(o, p->phase);
        results_field_put_str(e, "status", &p->status);
        results_field_put_num(e, "p50", &p->p50);
        results_field_put_num(e, "p99", &p->p99);
        results_field_put_num(e, "p99.9", &p->p999);
        results_field_put_num(e, "max", &p->max);
        results_field_put_num(e, "goodput_gbps", &p->goodput_gbps);
    }
    results_field_put_num(o, "p99_loaded_over_quiet", &s->p99_loaded_over_quiet);
}

static void write_score_phase(cJSON *o, const char *k, const struct results_score_phase *p)
{
    cJSON *e = put_obj(o, k, p->st);
    if (!e)
        return;
    results_field_put_num(e, "samples", &p->samples);
    results_field_put_num(e, "p50_us", &p->p50_us);
    results_field_put_num(e, "p99_us", &p->p99_us);
    results_field_put_num(e, "p99.9_us", &p->p999_us);
    results_field_put_num(e, "within_slo", &p->within_slo);
    results_field_put_num(e, "fairness_jain", &p->fairness_jain);
}

static void write_step_phase(cJSON *o, const char *k, const struct results_score_step_phase *p)
{
    cJSON *e = put_obj(o, k, p->st);
    if (!e)
        return;
    results_field_put_num(e, "comm_p50_us", &p->comm_p50_us);
    results_field_put_num(e, "comm_p99_us", &p->comm_p99_us);
    results_field_put_num(e, "comm_p99_upper_us", &p->comm_p99_upper_us);
    results_field_put_num(e, "steps_measured", &p->steps_measured);
    results_field_put_num(e, "budget_share_p50", &p->budget_share_p50);
    results_field_put_num(e, "budget_share_p99", &p->budget_share_p99);
    results_field_put_num(e, "tokens_per_s_p50", &p->tokens_per_s_p50);
    results_field_put_num(e, "tokens_per_s_p99", &p->tokens_per_s_p99);
}

static void write_scoreboard(cJSON *o, const struct results_scoreboard *b)
{
    results_field_put_str(o, "basis", &b->basis);
    cJSON *a = cJSON_AddArrayToObject(o, "classes");
    for (int i = 0; i < b->nclasses; i++) {
        const struct results_score_class *c = &b->classes[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "class", c->name);
        results_field_put_num(e, "flows", &c->flows);
        results_field_put_str(e, "latency_kind", &c->latency_kind);
        results_field_put_str(e, "slo", &c->slo);
        results_field_put_num(e, "slo_bound_us", &c->slo_bound_us);
        results_field_put_bool(e, "slo_met", &c->slo_met);
        results_field_put_str(e, "fairness_of", &c->fairness_of);
        write_score_phase(e, "quiet", &c->quiet);
        write_score_phase(e, "loaded", &c->loaded);
        results_field_put_num(e, "p99_loaded_over_quiet", &c->p99_loaded_over_quiet);
        cJSON_AddItemToArray(a, e);
    }
    const struct results_score_step *st = &b->step;
    cJSON *s = put_obj(o, "step", st->st);
    if (!s)
        return;
    results_field_put_str(s, "basis", &st->basis);
    results_field_put_num(s, "budget_ms", &st->budget_ms);
    results_field_put_str(s, "budget_from", &st->budget_from);
    cJSON *t = cJSON_AddArrayToObject(s, "terms");
    for (int i = 0; i < st->nterms; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "flow", st->terms[i].flow);
        results_field_put_num(e, "per_step", &st->terms[i].per_step);
        cJSON_AddItemToArray(t, e);
    }
    write_step_phase(s, "quiet", &st->quiet);
    write_step_phase(s, "loaded", &st->loaded);
}

cJSON *results_json_write_run(const struct results_run *r)
{
    cJSON *doc = cJSON_CreateObject();
    results_field_put_str(doc, "format", &r->format);
    results_field_put_num(doc, "version", &r->version);
    results_field_put_str(doc, "started_at", &r->started_at);
    results_field_put_str(doc, "ended_at", &r->ended_at);
    results_field_put_num(doc, "duration_s", &r->duration_s);
    results_field_put_bool(doc, "interrupted", &r->interrupted);
    cJSON *h = put_obj(doc, "hosts", r->hosts_st);
    if (h) {
        results_field_put_str(h, "local", &r->host_local);
        cJSON *a = put_arr(h, "peers", r->peers_st);
        if (a) {
            for (int i = 0; i < r->npeers; i++)
                cJSON_AddItemToArray(a, cJSON_CreateString(r->peers[i]));
        }
    }
    cJSON *v = put_obj(doc, "versions", r->versions_st);
    if (v)
        put_kvs(v, &r->versions);
    cJSON *c = put_obj(doc, "conditions", r->conditions_st);
    if (c)
        write_conditions(c, &r->conditions);
    results_field_put_carried(doc, "mix", r->mix);
    cJSON *phases = put_arr(doc, "phases", r->phases_st);
    if (phases) {
        for (int p = 0; p < r->nphases; p++) {
            const struct results_phase *ph = &r->phases[p];
            cJSON *o = cJSON_CreateObject();
            results_field_put_str(o, "name", &ph->name);
            results_field_put_num(o, "duration_s", &ph->duration_s);
            if (ph->counters_st == RESULTS_SET)
                results_field_put_carried(o, "counters", ph->counters);
            else if (ph->counters_st == RESULTS_NULL)
                cJSON_AddNullToObject(o, "counters");
            cJSON *fl = put_arr(o, "flows", ph->flows_st);
            if (fl) {
                for (int i = 0; i < ph->nflows; i++) {
                    cJSON *f = cJSON_CreateObject();
                    write_flow(f, &ph->flows[i]);
                    cJSON_AddItemToArray(fl, f);
                }
            }
            cJSON_AddItemToArray(phases, o);
        }
    }
    cJSON *sum = put_obj(doc, "summary", r->summary.st);
    if (sum)
        write_summary(sum, &r->summary);
    cJSON *sb = put_obj(doc, "scoreboard", r->scoreboard.st);
    if (sb)
        write_scoreboard(sb, &r->scoreboard);
    cJSON *pa = put_obj(doc, "path", r->path.st);
    if (pa)
        results_path_write(pa, &r->path);
    results_causes_json_write(doc, &r->causes);
    results_refs_json_write(doc, &r->references);
    cJSON *ev = put_arr(doc, "events", r->events_st);
    if (ev) {
        for (int i = 0; i < r->nevents; i++)
            cJSON_AddItemToArray(ev, cJSON_CreateString(r->events[i]));
    }
    if (r->topology_st == RESULTS_SET)
        results_field_put_carried(doc, "topology", r->topology);
    else if (r->topology_st == RESULTS_NULL)
        cJSON_AddNullToObject(doc, "topology");
    results_field_put_str(doc, "reproducible", &r->reproducible);
    return doc;
}

cJSON *results_json_write(const struct results_doc *d)
{
    return d && d->nruns > 0 ? results_json_write_run(&d->runs[0]) : NULL;
}

/* ---- the reader ---- */

static cJSON *carry(const cJSON *v)
{
    return v ? cJSON_Duplicate(v, 1) : NULL;
}

/* Sizes are what compare pairs size points by and what the report and compare print as
 * bytes: a number from the file that is not a whole number of bytes a mix allows (1 B to
 * 16 GiB) is refused with its place and the range, before anything converts it. */
static void size_check(struct results_rd *r, const cJSON *v, const char *where)
{
    int64_t b;
    if (r->rc || !cJSON_IsNumber(v) ||
        jsonutil_whole(v->valuedouble, 1, (int64_t)MIX_MAX_BYTES, &b))
        return; /* absent, null, or a string with a unit ("64KiB") */
    r->rc = ft_err_set(r->err, -EBADMSG, "%s: %s = %.15g is out of range 1-%llu (bytes)", r->what,
                       where, v->valuedouble, (unsigned long long)MIX_MAX_BYTES);
}

static void check_mix_sizes(struct results_rd *r, const cJSON *mix)
{
    char where[128];
    int i = 0;
    const cJSON *fl;
    cJSON_ArrayForEach(fl, cJSON_GetObjectItemCaseSensitive(mix, "flows"))
    {
        static const char *const keys[] = {"size", "response_size"};
        for (int k = 0; k < 2; k++) {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(fl, keys[k]);
            snprintf(where, sizeof(where), "mix.flows[%d].%s", i, keys[k]);
            size_check(r, s, where);
            const cJSON *sw = cJSON_GetObjectItemCaseSensitive(s, "sweep");
            for (int e = 0; e < 2; e++) {
                const char *end = e ? "to" : "from";
                snprintf(where, sizeof(where), "mix.flows[%d].%s.sweep.%s", i, keys[k], end);
                size_check(r, cJSON_GetObjectItemCaseSensitive(sw, end), where);
            }
            const cJSON *pair;
            int d = 0;
            cJSON_ArrayForEach(pair, cJSON_GetObjectItemCaseSensitive(s, "dist"))
            {
                snprintf(where, sizeof(where), "mix.flows[%d].%s.dist[%d][0]", i, keys[k], d++);
                size_check(r, cJSON_GetArrayItem(pair, 0), where);
            }
        }
        i++;
    }
}

static void get_series(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                       struct results_series *s)
{
    const cJSON *v = results_field_member(o, k, &s->st);
    if (s->st != RESULTS_SET)
        return;
    if (!cJSON_IsArray(v)) {
        results_field_bad(r, where, k, "an array of numbers");
        return;
    }
    s->v = xalloc_zero((size_t)cJSON_GetArraySize(v) + 1, sizeof(double));
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsNumber(e)) {
            results_field_bad(r, where, k, "an array of numbers");
            return;
        }
        s->v[s->n++] = e->valuedouble;
    }
}

/* o's "latency" and "histogram" (where: o's place, for the messages). */
static void read_latency(struct results_rd *r, const cJSON *o, const char *where,
                         enum results_state *st, struct results_latency *s, struct hist **hp)
{
    char sub[160];
    snprintf(sub, sizeof(sub), "%s.latency", where);
    const cJSON *l = results_field_obj(r, o, where, "latency", st);
    results_field_get_str(r, l, sub, "kind", &s->kind);
    results_field_get_str(r, l, sub, "unit", &s->unit);
    results_field_get_num(r, l, sub, "count", &s->count);
    results_field_get_num(r, l, sub, "min", &s->min);
    results_field_get_num(r, l, sub, "mean", &s->mean);
    results_field_get_num(r, l, sub, "stdev", &s->stdev);
    results_field_get_num(r, l, sub, "p50", &s->p50);
    results_field_get_num(r, l, sub, "p90", &s->p90);
    results_field_get_num(r, l, sub, "p99", &s->p99);
    results_field_get_num(r, l, sub, "p99.9", &s->p999);
    results_field_get_num(r, l, sub, "p99.99", &s->p9999);
    results_field_get_num(r, l, sub, "max", &s->max);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "histogram");
    if (h) {
        *hp = xalloc(sizeof(**hp));
        if (hist_from_json(h, *hp) < 0) {
            free(*hp);
            *hp = NULL;
            results_field_bad(r, where, "histogram",
                              "a histogram that adds up (count, buckets, min, max)");
        }
    }
}

static void read_point(struct results_rd *r, const cJSON *o, const char *where,
                       struct results_point *p)
{
    char sub[160];
    if (!cJSON_IsObject(o)) {
        results_field_bad(r, where, NULL, "an object");
        return;
    }
    snprintf(sub, sizeof(sub), "%s.size_bytes", where);
    size_check(r, cJSON_GetObjectItemCaseSensitive(o, "size_bytes"), sub);
    results_field_get_num(r, o, where, "size_bytes", &p->size_bytes);
    results_field_get_bool(r, o, where, "measured", &p->measured);
    results_field_get_bool(r, o, where, "complete", &p->complete);
    results_field_get_num(r, o, where, "measure_s", &p->measure_s);
    results_field_get_num(r, o, where, "ops", &p->ops);
    results_field_get_num(r, o, where, "ops_per_s", &p->ops_per_s);
    results_field_get_num(r, o, where, "payload_bytes", &p->payload_bytes);
    results_field_get_num(r, o, where, "goodput_gbps", &p->goodput_gbps);
    results_field_get_num(r, o, where, "wire_bytes", &p->wire_bytes);
    results_field_get_num(r, o, where, "wire_gbps", &p->wire_gbps);
    snprintf(sub, sizeof(sub), "%s.tcp", where);
    const cJSON *t = results_field_obj(r, o, where, "tcp", &p->tcp_st);
    results_field_get_num(r, t, sub, "retrans_segments", &p->tcp.retrans_segments);
    results_field_get_num(r, t, sub, "rtt_us", &p->tcp.rtt_us);
    results_field_get_num(r, t, sub, "rttvar_us", &p->tcp.rttvar_us);
    results_field_get_num(r, t, sub, "cwnd_bytes", &p->tcp.cwnd_bytes);
    read_latency(r, o, where, &p->latency_st, &p->latency, &p->histogram);
    snprintf(sub, sizeof(sub), "%s.step", where);
    const cJSON *st = results_field_obj(r, o, where, "step", &p->step_st);
    if (st) {
        results_field_get_num(r, st, sub, "operations", &p->step_ops);
        enum results_state lst = RESULTS_ABSENT;
        read_latency(r, st, sub, &lst, &p->step_latency, &p->step_histogram);
    }
    /* The members after the histogram that no other key names: the transport's own figures
     * (conditions.point_figures when the run was built). */
    static const char *const known[] = {
        "size_bytes", "measured",      "complete",     "measure_s",  "ops",
        "ops_per_s",  "payload_bytes", "goodput_gbps", "wire_bytes", "wire_gbps",
        "tcp",        "latency",       "histogram",    "step",       NULL};
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        bool k = false;
        for (const char *const *n = known; *n && !k; n++)
            k = !strcmp(m->string, *n);
        if (k)
            continue;
        if (!p->figures)
            p->figures = cJSON_CreateObject();
        cJSON_AddItemToObject(p->figures, m->string, cJSON_Duplicate(m, 1));
    }
}

static void read_ceiling(struct results_rd *r, const cJSON *o, const char *where,
                         struct results_ceiling *c)
{
    char sub[160], term[200];
    snprintf(sub, sizeof(sub), "%s.ceiling", where);
    const cJSON *j = results_field_obj(r, o, where, "ceiling", &c->st);
    results_field_get_str(r, j, sub, "path", &c->path);
    results_field_get_num(r, j, sub, "gbps", &c->gbps);
    results_field_get_str(r, j, sub, "narrowest", &c->narrowest);
    const cJSON *terms = results_field_arr(r, j, sub, "terms", &c->terms_st);
    c->terms = xalloc_zero((size_t)cJSON_GetArraySize(terms) + 1, sizeof(*c->terms));
    const cJSON *e;
    cJSON_ArrayForEach(e, terms)
    {
        snprintf(term, sizeof(term), "%s.terms[%d]", sub, c->nterms);
        struct results_ceil_term *t = &c->terms[c->nterms++];
        if (!cJSON_IsObject(e)) {
            results_field_bad(r, term, NULL, "an object");
            continue;
        }
        results_field_get_str(r, e, term, "name", &t->name);
        results_field_get_str(r, e, term, "kind", &t->kind);
        results_field_get_num(r, e, term, "value", &t->value);
        results_field_get_str(r, e, term, "unit", &t->unit);
        results_field_get_str(r, e, term, "detail", &t->detail);
    }
}

static void read_flow(struct results_rd *r, const cJSON *o, const char *where,
                      struct results_flow *f)
{
    char sub[160];
    if (!cJSON_IsObject(o)) {
        results_field_bad(r, where, NULL, "an object");
        return;
    }
    results_field_get_str(r, o, where, "name", &f->name);
    results_field_get_str(r, o, where, "transport", &f->transport);
    results_field_get_str(r, o, where, "op", &f->op);
    results_field_get_str(r, o, where, "role", &f->role);
    results_field_get_str(r, o, where, "class", &f->class_name);
    results_field_get_str(r, o, where, "direction", &f->direction);
    results_field_get_str(r, o, where, "latency_kind", &f->latency_kind);
    results_field_get_str(r, o, where, "peer", &f->peer);
    results_field_get_num(r, o, where, "connections_asked", &f->connections_asked);
    results_field_get_num(r, o, where, "workers", &f->workers);
    results_field_get_str(r, o, where, "status", &f->status);
    results_field_get_str(r, o, where, "error", &f->error);
    results_field_get_num(r, o, where, "failed_at_s", &f->failed_at_s);
    results_field_get_num(r, o, where, "detected_after_last_progress_s",
                          &f->detected_after_last_progress_s);
    results_field_get_num(r, o, where, "failed_at_run_s", &f->failed_at_run_s);
    results_field_get_num(r, o, where, "setup_s", &f->setup_s);
    results_field_get_num(r, o, where, "teardown_s", &f->teardown_s);
    const cJSON *pts = results_field_arr(r, o, where, "points", &f->points_st);
    f->points = xalloc_zero((size_t)cJSON_GetArraySize(pts) + 1, sizeof(*f->points));
    const cJSON *pt;
    cJSON_ArrayForEach(pt, pts)
    {
        snprintf(sub, sizeof(sub), "%s.points[%d]", where, f->npoints);
        read_point(r, pt, sub, &f->points[f->npoints++]);
    }
    snprintf(sub, sizeof(sub), "%s.timeline", where);
    const cJSON *t = results_field_obj(r, o, where, "timeline", &f->timeline_st);
    results_field_get_str(r, t, sub, "t", &f->timeline.t);
    get_series(r, t, sub, "t_s", &f->timeline.t_s);
    get_series(r, t, sub, "goodput_gbps", &f->timeline.goodput_gbps);
    get_series(r, t, sub, "wire_gbps", &f->timeline.wire_gbps);
    get_series(r, t, sub, "ops_per_s", &f->timeline.ops_per_s);
    read_ceiling(r, o, where, &f->ceiling);
    enum results_state st;
    const cJSON *c = results_field_obj(r, o, where, "conditions", &st);
    if (st == RESULTS_NULL)
        results_field_bad(r, where, "conditions", "an object");
    f->conditions = carry(c);
    results_json_flow_cond(f->conditions, &f->cond);
    f->qp_counters = carry(cJSON_GetObjectItemCaseSensitive(o, "qp_counters"));
}

static void read_kvs(struct results_rd *r, const cJSON *o, const char *where, struct results_kvs *k,
                     const char *const *only)
{
    k->v = xalloc_zero((size_t)cJSON_GetArraySize(o) + 1, sizeof(*k->v));
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        bool take = !only;
        for (const char *const *n = only; n && *n && !take; n++)
            take = !strcmp(m->string, *n);
        if (!take)
            continue;
        struct results_kv *e = &k->v[k->n++];
        e->key = xalloc_strdup(m->string);
        results_field_get_str(r, o, where, m->string, &e->val);
    }
}

static void read_conditions(struct results_rd *r, const cJSON *o, struct results_run_cond *c)
{
    const cJSON *s = results_field_obj(r, o, "conditions", "sim", &c->sim_st);
    results_field_get_str(r, s, "conditions.sim", "note", &c->sim_note);
    results_field_get_str(r, s, "conditions.sim", "topology", &c->sim_topology);
    static const char *const sysctls[] = {
        "tcp_congestion_control", "tcp_ecn", "tcp_rmem", "tcp_wmem", "rmem_max", "wmem_max", NULL};
    read_kvs(r, o, "conditions", &c->sysctls, sysctls);
    const cJSON *m = results_field_obj(r, o, "conditions", "netdev_mtu", &c->netdev_mtu_st);
    c->mtu = xalloc_zero((size_t)cJSON_GetArraySize(m) + 1, sizeof(*c->mtu));
    const cJSON *e;
    cJSON_ArrayForEach(e, m)
    {
        if (!cJSON_IsNumber(e)) {
            results_field_bad(r, "conditions.netdev_mtu", e->string, "a number");
            continue;
        }
        c->mtu[c->nmtu].netdev = xalloc_strdup(e->string);
        c->mtu[c->nmtu++].mtu = e->valuedouble;
    }
}

static void read_summary(struct results_rd *r, const cJSON *o, struct results_summary *s)
{
    results_field_get_str(r, o, "summary", "foreground", &s->foreground);
    results_field_get_num(r, o, "summary", "p99_loaded_over_quiet", &s->p99_loaded_over_quiet);
    s->phases = xalloc_zero((size_t)cJSON_GetArraySize(o) + 1, sizeof(*s->phases));
    const cJSON *e;
    cJSON_ArrayForEach(e, o)
    {
        if (!cJSON_IsObject(e))
            continue; /* foreground, p99_loaded_over_quiet */
        char where[96];
        snprintf(where, sizeof(where), "summary.%s", e->string);
        struct results_summary_phase *p = &s->phases[s->nphases++];
        p->phase = xalloc_strdup(e->string);
        results_field_get_str(r, e, where, "status", &p->status);
        results_field_get_num(r, e, where, "p50", &p->p50);
        results_field_get_num(r, e, where, "p99", &p->p99);
        results_field_get_num(r, e, where, "p99.9", &p->p999);
        results_field_get_num(r, e, where, "max", &p->max);
        results_field_get_num(r, e, where, "goodput_gbps", &p->goodput_gbps);
    }
}

static void read_score_phase(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                             struct results_score_phase *p)
{
    char sub[128];
    snprintf(sub, sizeof(sub), "%s.%s", where, k);
    const cJSON *e = results_field_obj(r, o, where, k, &p->st);
    results_field_get_num(r, e, sub, "samples", &p->samples);
    results_field_get_num(r, e, sub, "p50_us", &p->p50_us);
    results_field_get_num(r, e, sub, "p99_us", &p->p99_us);
    results_field_get_num(r, e, sub, "p99.9_us", &p->p999_us);
    results_field_get_num(r, e, sub, "within_slo", &p->within_slo);
    results_field_get_num(r, e, sub, "fairness_jain", &p->fairness_jain);
}

static void read_step_phase(struct results_rd *r, const cJSON *o, const char *k,
                            struct results_score_step_phase *p)
{
    char sub[64];
    snprintf(sub, sizeof(sub), "scoreboard.step.%s", k);
    const cJSON *e = results_field_obj(r, o, "scoreboard.step", k, &p->st);
    results_field_get_num(r, e, sub, "comm_p50_us", &p->comm_p50_us);
    results_field_get_num(r, e, sub, "comm_p99_us", &p->comm_p99_us);
    results_field_get_num(r, e, sub, "comm_p99_upper_us", &p->comm_p99_upper_us);
    results_field_get_num(r, e, sub, "steps_measured", &p->steps_measured);
    results_field_get_num(r, e, sub, "budget_share_p50", &p->budget_share_p50);
    results_field_get_num(r, e, sub, "budget_share_p99", &p->budget_share_p99);
    results_field_get_num(r, e, sub, "tokens_per_s_p50", &p->tokens_per_s_p50);
    results_field_get_num(r, e, sub, "tokens_per_s_p99", &p->tokens_per_s_p99);
}

static void read_scoreboard(struct results_rd *r, const cJSON *o, struct results_scoreboard *b)
{
    results_field_get_str(r, o, "scoreboard", "basis", &b->basis);
    enum results_state st;
    const cJSON *a = results_field_arr(r, o, "scoreboard", "classes", &st);
    if (st != RESULTS_SET)
        results_field_bad(r, "scoreboard", "classes", "an array");
    b->classes = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(*b->classes));
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        char where[64];
        snprintf(where, sizeof(where), "scoreboard.classes[%d]", b->nclasses);
        struct results_score_class *c = &b->classes[b->nclasses++];
        const char *name = cJSON_IsObject(e) ? jsonutil_str(e, "class") : NULL;
        if (!name) {
            results_field_bad(r, where, "class", "a string");
            continue;
        }
        c->name = xalloc_strdup(name);
        results_field_get_num(r, e, where, "flows", &c->flows);
        results_field_get_str(r, e, where, "latency_kind", &c->latency_kind);
        results_field_get_str(r, e, where, "slo", &c->slo);
        results_field_get_num(r, e, where, "slo_bound_us", &c->slo_bound_us);
        results_field_get_bool(r, e, where, "slo_met", &c->slo_met);
        results_field_get_str(r, e, where, "fairness_of", &c->fairness_of);
        read_score_phase(r, e, where, "quiet", &c->quiet);
        read_score_phase(r, e, where, "loaded", &c->loaded);
        results_field_get_num(r, e, where, "p99_loaded_over_quiet", &c->p99_loaded_over_quiet);
    }
    struct results_score_step *s = &b->step;
    const cJSON *so = results_field_obj(r, o, "scoreboard", "step", &s->st);
    if (!so)
        return;
    results_field_get_str(r, so, "scoreboard.step", "basis", &s->basis);
    results_field_get_num(r, so, "scoreboard.step", "budget_ms", &s->budget_ms);
    results_field_get_str(r, so, "scoreboard.step", "budget_from", &s->budget_from);
    const cJSON *t = results_field_arr(r, so, "scoreboard.step", "terms", &st);
    if (st != RESULTS_SET)
        results_field_bad(r, "scoreboard.step", "terms", "an array");
    s->terms = xalloc_zero((size_t)cJSON_GetArraySize(t) + 1, sizeof(*s->terms));
    cJSON_ArrayForEach(e, t)
    {
        char where[64];
        snprintf(where, sizeof(where), "scoreboard.step.terms[%d]", s->nterms);
        const char *flow = cJSON_IsObject(e) ? jsonutil_str(e, "flow") : NULL;
        if (!flow) {
            results_field_bad(r, where, "flow", "a string");
            continue;
        }
        struct results_score_term *te = &s->terms[s->nterms++];
        te->flow = xalloc_strdup(flow);
        results_field_get_num(r, e, where, "per_step", &te->per_step);
    }
    read_step_phase(r, so, "quiet", &s->quiet);
    read_step_phase(r, so, "loaded", &s->loaded);
}

static char **read_strings(struct results_rd *r, const cJSON *a, const char *where, int *n)
{
    char **v = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(char *));
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsString(e)) {
            results_field_bad(r, where, NULL, "an array of strings");
            break;
        }
        v[(*n)++] = xalloc_strdup(e->valuestring);
    }
    return v;
}

static void read_phases(struct results_rd *r, const cJSON *a, struct results_run *run)
{
    run->phases = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(*run->phases));
    const cJSON *o;
    cJSON_ArrayForEach(o, a)
    {
        char where[64], sub[96];
        snprintf(where, sizeof(where), "phases[%d]", run->nphases);
        struct results_phase *ph = &run->phases[run->nphases++];
        if (!cJSON_IsObject(o)) {
            results_field_bad(r, where, NULL, "an object");
            continue;
        }
        results_field_get_str(r, o, where, "name", &ph->name);
        results_field_get_num(r, o, where, "duration_s", &ph->duration_s);
        const cJSON *c = results_field_member(o, "counters", &ph->counters_st);
        ph->counters = ph->counters_st == RESULTS_SET ? carry(c) : NULL;
        const cJSON *fl = results_field_arr(r, o, where, "flows", &ph->flows_st);
        ph->flows = xalloc_zero((size_t)cJSON_GetArraySize(fl) + 1, sizeof(*ph->flows));
        const cJSON *f;
        cJSON_ArrayForEach(f, fl)
        {
            snprintf(sub, sizeof(sub), "%s.flows[%d]", where, ph->nflows);
            read_flow(r, f, sub, &ph->flows[ph->nflows++]);
        }
    }
}

/* Format and version first: a document of another kind is named as such, before any of
 * its fields is read as results. The message keeps the words the results list shows before
 * the field that decided ("...; format is ..."). */
#define NOT_RESULTS "not a fabtop results file (expected \"format\": \"%s\", version %d)"
static void read_header(struct results_rd *r, const cJSON *j)
{
    const char *fmt = jsonutil_str(j, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    int64_t v = 0;
    if (fmt && strcmp(fmt, RESULTS_FORMAT))
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: " NOT_RESULTS "; format is \"%.64s\"%s", r->what,
                           RESULTS_FORMAT, RESULTS_VERSION, fmt,
                           !strcmp(fmt, "fabtop-topology")
                               ? ": this is a topology snapshot: open it with --input"
                               : "");
    else if (!fmt || !cJSON_IsNumber(ver))
        r->rc =
            ft_err_set(r->err, -EBADMSG, "%s: " NOT_RESULTS "%s", r->what, RESULTS_FORMAT,
                       RESULTS_VERSION, !fmt ? "; no \"format\"" : "; \"version\" is not a number");
    else if (!jsonutil_whole(ver->valuedouble, 1, INT_MAX, &v))
        r->rc = ft_err_set(r->err, -EBADMSG, "%s: " NOT_RESULTS "; version %.15g is no version",
                           r->what, RESULTS_FORMAT, RESULTS_VERSION, ver->valuedouble);
    else if (v > RESULTS_VERSION)
        r->rc = ft_err_set(r->err, -EBADMSG,
                           "%s: " NOT_RESULTS "; version %lld is newer than this fabtop reads (%d)",
                           r->what, RESULTS_FORMAT, RESULTS_VERSION, (long long)v, RESULTS_VERSION);
}

static void read_run(struct results_rd *r, const cJSON *j, struct results_run *run)
{
    results_field_get_str(r, j, "", "format", &run->format);
    results_field_get_num(r, j, "", "version", &run->version);
    results_field_get_str(r, j, "", "started_at", &run->started_at);
    results_field_get_str(r, j, "", "ended_at", &run->ended_at);
    results_field_get_num(r, j, "", "duration_s", &run->duration_s);
    results_field_get_bool(r, j, "", "interrupted", &run->interrupted);
    const cJSON *h = results_field_obj(r, j, "", "hosts", &run->hosts_st);
    results_field_get_str(r, h, "hosts", "local", &run->host_local);
    const cJSON *peers = results_field_arr(r, h, "hosts", "peers", &run->peers_st);
    run->peers = read_strings(r, peers, "hosts.peers", &run->npeers);
    const cJSON *v = results_field_obj(r, j, "", "versions", &run->versions_st);
    read_kvs(r, v, "versions", &run->versions, NULL);
    const cJSON *c = results_field_obj(r, j, "", "conditions", &run->conditions_st);
    read_conditions(r, c, &run->conditions);
    const cJSON *mix = cJSON_GetObjectItemCaseSensitive(j, "mix");
    check_mix_sizes(r, mix);
    run->mix = carry(mix);
    read_phases(r, results_field_arr(r, j, "", "phases", &run->phases_st), run);
    const cJSON *s = results_field_obj(r, j, "", "summary", &run->summary.st);
    if (s)
        read_summary(r, s, &run->summary);
    const cJSON *sb = results_field_obj(r, j, "", "scoreboard", &run->scoreboard.st);
    if (sb)
        read_scoreboard(r, sb, &run->scoreboard);
    const cJSON *pa = results_field_obj(r, j, "", "path", &run->path.st);
    if (pa)
        results_path_read(r, pa, &run->path);
    results_causes_json_read(r, j, &run->causes);
    results_refs_json_read(r, j, &run->references);
    const cJSON *ev = results_field_arr(r, j, "", "events", &run->events_st);
    run->events = read_strings(r, ev, "events", &run->nevents);
    const cJSON *t = results_field_member(j, "topology", &run->topology_st);
    run->topology = run->topology_st == RESULTS_SET ? carry(t) : NULL;
    results_field_get_str(r, j, "", "reproducible", &run->reproducible);
}

int results_json_read_run(const cJSON *j, const char *what, struct results_run *run,
                          struct ft_err *err)
{
    memset(run, 0, sizeof(*run));
    struct results_rd r = {.what = what, .err = err};
    if (!cJSON_IsObject(j))
        results_field_bad(&r, "", NULL, "a results object");
    else
        read_run(&r, j, run);
    if (r.rc)
        results_run_free(run);
    return r.rc;
}

int results_json_read(const cJSON *j, const char *what, struct results_doc *d, struct ft_err *err)
{
    memset(d, 0, sizeof(*d));
    struct results_rd r = {.what = what, .err = err};
    read_header(&r, j);
    if (r.rc)
        return r.rc;
    struct results_run *run = xalloc_zero(1, sizeof(*run));
    int rc = results_json_read_run(j, what, run, err);
    if (rc < 0) {
        free(run);
        return rc;
    }
    d->runs = run;
    d->nruns = 1;
    return 0;
}

/* ---- a flow's conditions (the transports write them: engine/xport/) ---- */

static bool cond_int(const cJSON *c, const char *k, int64_t lo, int64_t hi, int *out)
{
    int64_t v;
    if (!jsonutil_int_in(c, k, lo, hi, &v))
        return false;
    *out = (int)v;
    return true;
}

void results_json_flow_cond(const cJSON *c, struct results_flow_cond *o)
{
    memset(o, 0, sizeof(*o));
    o->dcb_pfc = -1;
    if (!c)
        return;
    o->rdma_device = jsonutil_str(c, "rdma_device");
    o->link_layer = jsonutil_str(c, "link_layer");
    o->gid_type = jsonutil_str(c, "gid_type");
    o->gid = jsonutil_str(c, "gid");
    o->connection = jsonutil_str(c, "connection");
    o->memory = jsonutil_str(c, "memory");
    o->have_port = cond_int(c, "port", 0, 255, &o->port);
    o->have_lid = cond_int(c, "lid", 0, 0xffff, &o->lid);
    o->have_sl = cond_int(c, "sl", 0, 15, &o->sl);
    o->have_gid_index = cond_int(c, "gid_index", 0, INT_MAX, &o->gid_index);
    o->have_path_mtu = cond_int(c, "path_mtu", 0, INT_MAX, &o->path_mtu);
    o->have_dscp = cond_int(c, "dscp", 0, 63, &o->dscp);
    o->have_tc = cond_int(c, "traffic_class", 0, 255, &o->traffic_class);
    o->have_queue_pairs = cond_int(c, "queue_pairs", 0, INT_MAX, &o->queue_pairs);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "dcb");
    o->dcb = d != NULL;
    o->have_dcb_priority = cond_int(d, "priority", 0, 7, &o->dcb_priority);
    const cJSON *pfc = cJSON_GetObjectItemCaseSensitive(d, "pfc_enabled");
    o->dcb_pfc = cJSON_IsBool(pfc) ? cJSON_IsTrue(pfc) : -1;
    o->dcb_unavailable = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "available"));
    o->tcp_cc = jsonutil_str(c, "congestion_control");
    o->have_mss = cond_int(c, "mss_bytes", 0, INT_MAX, &o->mss_bytes);
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(c, "sim");
    o->sim_topology = jsonutil_str(sim, "topology");
    o->have_sim_goodput = jsonutil_num(cJSON_GetObjectItemCaseSensitive(sim, "results"),
                                       "goodput_gbps", &o->sim_goodput_gbps);
}
