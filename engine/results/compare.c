/* compare: two results documents side by side: the conditions that decide whether the
 * comparison is fair (compare_cond.c: each with its weight and why it matters), then every
 * flow and size point with p50/p99/p99.9 in microseconds, goodput in Gb/s and B/A ratios. */
#include "engine/results/compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/results/compare_cond.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"

#define NA COMPARE_COND_NA

static const char *const sev_names[] = {"same", "info", "caution", "unfair"};

const char *compare_severity_str(enum compare_severity s)
{
    return s >= COMPARE_SAME && s <= COMPARE_UNFAIR ? sev_names[s] : "?";
}

const char *compare_metric_str(int m)
{
    static const char *const names[] = {"p50 us", "p99 us", "p99.9 us", "Gb/s"};
    return m >= 0 && m < COMPARE_NMETRICS ? names[m] : "?";
}

static struct compare_row *add_row(struct compare_cond_builder *b)
{
    struct compare_result *r = b->r;
    if (r->nrows == b->rcap) {
        b->rcap = b->rcap ? 2 * b->rcap : 32;
        r->rows = xalloc_resize(r->rows, (size_t)b->rcap * sizeof(*r->rows));
    }
    struct compare_row *w = &r->rows[r->nrows++];
    memset(w, 0, sizeof(*w));
    return w;
}

/* ---- outcome ---- */

static void point_size_text(const struct results_point *pt, char *buf, size_t len)
{
    double s;
    if (results_num_get(&pt->size_bytes, &s))
        compare_cond_bytes_text(s, buf, len);
    else
        snprintf(buf, len, "mixed");
}

static void fill_side(const struct results_flow *fl, const struct results_point *pt, bool *valid,
                      double *v, bool *sim, char *status, size_t slen)
{
    bool lat = pt->latency_st == RESULTS_SET;
    valid[COMPARE_P50] = lat && results_num_get(&pt->latency.p50, &v[COMPARE_P50]);
    valid[COMPARE_P99] = lat && results_num_get(&pt->latency.p99, &v[COMPARE_P99]);
    valid[COMPARE_P999] = lat && results_num_get(&pt->latency.p999, &v[COMPARE_P999]);
    valid[COMPARE_GBPS] = results_point_goodput(fl, pt, &v[COMPARE_GBPS], sim);
    const char *s = results_str_get(&fl->status);
    snprintf(status, slen, "%s", s ? s : NA);
}

static int measured_points(const struct results_flow *fl, const struct results_point **out, int max)
{
    int n = 0;
    for (int k = 0; k < fl->npoints; k++)
        if (n < max && results_bool_true(&fl->points[k].measured))
            out[n++] = &fl->points[k];
    return n;
}

static bool same_size(const struct results_point *x, const struct results_point *y)
{
    double a, b;
    bool ha = results_num_get(&x->size_bytes, &a), hb = results_num_get(&y->size_bytes, &b);
    return ha == hb && (!ha || a == b);
}

#define MAX_POINTS 64

static void outcome_flow(struct compare_cond_builder *b, const char *phase, const char *label,
                         const struct results_flow *fa, const struct results_flow *fb)
{
    const struct results_point *pa[MAX_POINTS], *pb[MAX_POINTS];
    int na = fa ? measured_points(fa, pa, MAX_POINTS) : 0;
    int nb = fb ? measured_points(fb, pb, MAX_POINTS) : 0;
    bool used_b[MAX_POINTS] = {false};
    const char *kind = results_str_get(&(fa ? fa : fb)->latency_kind);
    for (int i = 0; i < na; i++) {
        int k = -1;
        if (na == 1 && nb == 1)
            k = 0; /* one point each: put them side by side (sizes are compared above) */
        for (int j = 0; j < nb && k < 0; j++)
            if (!used_b[j] && same_size(pa[i], pb[j]))
                k = j;
        struct compare_row *w = add_row(b);
        snprintf(w->phase, sizeof(w->phase), "%s", phase);
        snprintf(w->flow, sizeof(w->flow), "%s", label);
        snprintf(w->latency_kind, sizeof(w->latency_kind), "%s", kind ? kind : NA);
        char x[24], y[24];
        point_size_text(pa[i], x, sizeof(x));
        w->in_a = true;
        fill_side(fa, pa[i], w->valid_a, w->a, &w->sim_a, w->status_a, sizeof(w->status_a));
        if (k >= 0) {
            used_b[k] = true;
            point_size_text(pb[k], y, sizeof(y));
            w->in_b = true;
            fill_side(fb, pb[k], w->valid_b, w->b, &w->sim_b, w->status_b, sizeof(w->status_b));
        }
        if (k >= 0 && strcmp(x, y))
            snprintf(w->point, sizeof(w->point), "%s|%s", x, y);
        else
            snprintf(w->point, sizeof(w->point), "%s", x);
    }
    for (int j = 0; j < nb; j++) {
        if (used_b[j])
            continue;
        struct compare_row *w = add_row(b);
        snprintf(w->phase, sizeof(w->phase), "%s", phase);
        snprintf(w->flow, sizeof(w->flow), "%s", label);
        snprintf(w->latency_kind, sizeof(w->latency_kind), "%s", kind ? kind : NA);
        point_size_text(pb[j], w->point, sizeof(w->point));
        w->in_b = true;
        fill_side(fb, pb[j], w->valid_b, w->b, &w->sim_b, w->status_b, sizeof(w->status_b));
    }
}

static void outcome(struct compare_cond_builder *b, const struct results_run *A,
                    const struct results_run *B, const struct compare_cond_pair *pairs, int np)
{
    for (int pass = 0; pass < 2; pass++)
        for (int p = 0; p < (pass ? B : A)->nphases; p++) {
            const char *name = results_str_get(&(pass ? B : A)->phases[p].name);
            if (!name || (pass && compare_cond_phase(A, name)))
                continue;
            for (int i = 0; i < np; i++) {
                char label[64];
                compare_cond_pair_label(&pairs[i], label, sizeof(label));
                const struct results_flow *fa =
                    pairs[i].a ? compare_cond_flow(A, name, jsonutil_str(pairs[i].a, "name"))
                               : NULL;
                const struct results_flow *fb =
                    pairs[i].b ? compare_cond_flow(B, name, jsonutil_str(pairs[i].b, "name"))
                               : NULL;
                if (fa || fb)
                    outcome_flow(b, name, label, fa, fb);
            }
        }
}

enum compare_change compare_change_of(bool lower_is_better, double ratio)
{
    if (!(ratio > 0) || isinf(ratio))
        return COMPARE_CHANGE_NONE;
    /* As "how many times worse": > 1 is worse whichever way the metric points. */
    double worse = lower_is_better ? ratio : 1.0 / ratio;
    double same = 1.0 + COMPARE_CHANGE_SAME_PCT / 100.0;
    if (worse >= COMPARE_CHANGE_MUCH)
        return COMPARE_CHANGE_MUCH_WORSE;
    if (worse >= same)
        return COMPARE_CHANGE_WORSE;
    if (worse <= 1.0 / same)
        return COMPARE_CHANGE_BETTER;
    return COMPARE_CHANGE_NONE;
}

bool compare_metric_lower_better(int m)
{
    return m != COMPARE_GBPS;
}

const char *compare_change_str(enum compare_change c)
{
    static const char *const w[] = {"", "better", "worse", "much worse"};
    return (unsigned)c < sizeof(w) / sizeof(w[0]) ? w[c] : "";
}

bool compare_ratio(const struct compare_row *r, int m, double *ratio)
{
    if (m < 0 || m >= COMPARE_NMETRICS || !r->in_a || !r->in_b || !r->valid_a[m] ||
        !r->valid_b[m] || r->a[m] <= 0 || (m == COMPARE_GBPS && r->sim_a != r->sim_b))
        return false;
    *ratio = r->b[m] / r->a[m];
    return true;
}

/* ---- the whole comparison ---- */

static void label_of(const struct results_run *doc, char *buf, size_t len)
{
    const char *mix = jsonutil_str(doc->mix, "name");
    const char *at = results_str_get(&doc->started_at);
    const char *host = results_str_get(&doc->host_local);
    snprintf(buf, len, "%s, %s, host %s", mix ? mix : "?", at ? at : "?", host ? host : "?");
}

static void verdict(struct compare_result *r)
{
    enum compare_severity w = r->worst;
    if (w <= COMPARE_INFO) {
        snprintf(r->verdict, sizeof(r->verdict),
                 "Comparable: every condition that changes the numbers is the same%s.",
                 r->ndiff[COMPARE_INFO] ? " (informational differences only)" : "");
        return;
    }
    struct strbuf sb;
    strbuf_init(&sb);
    int listed = 0;
    bool more = false;
    for (int i = 0; i < r->nconds; i++) {
        const struct compare_cond *c = &r->conds[i];
        if (c->severity != w)
            continue;
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = r->conds[k].severity == w && !strcmp(r->conds[k].field, c->field);
        if (dup)
            continue;
        if (listed == 4) {
            more = true;
            break;
        }
        strbuf_printf(&sb, "%s%s", listed ? ", " : "", c->field);
        listed++;
    }
    bool one = r->ndiff[w] == 1;
    if (w == COMPARE_UNFAIR)
        snprintf(r->verdict, sizeof(r->verdict),
                 "Not like for like: %d condition%s that change%s the numbers by %s (%s%s).",
                 r->ndiff[w], one ? " differs" : "s differ", one ? "s" : "",
                 one ? "itself" : "themselves", sb.s, more ? ", ..." : "");
    else
        snprintf(r->verdict, sizeof(r->verdict),
                 "Comparable with care: %d condition%s that may change the numbers (%s%s).",
                 r->ndiff[w], one ? " differs" : "s differ", sb.s, more ? ", ..." : "");
    strbuf_free(&sb);
}

/* ---- classes (the scoreboards) ---- */

static const struct results_score_phase *class_figures(const struct results_score_class *c)
{
    return c->loaded.st == RESULTS_SET ? &c->loaded : &c->quiet;
}

static void class_side(const struct results_score_class *c, bool *have_p99, double *p99,
                       bool *have_within, double *within, int *met)
{
    const struct results_score_phase *f = class_figures(c);
    *have_p99 = f->st == RESULTS_SET && results_num_get(&f->p99_us, p99);
    *have_within = f->st == RESULTS_SET && results_num_get(&f->within_slo, within);
    *met = c->slo_met.st == RESULTS_SET ? c->slo_met.v : -1;
}

static struct compare_class *class_find(struct compare_result *r, const char *name)
{
    for (int i = 0; i < r->nclasses; i++)
        if (!strcmp(r->classes[i].name, name))
            return &r->classes[i];
    return NULL;
}

static void classes(struct compare_result *r, const struct results_run *a,
                    const struct results_run *b)
{
    const struct results_scoreboard *sa = &a->scoreboard, *sb = &b->scoreboard;
    int cap = sa->nclasses + sb->nclasses;
    if (!cap)
        return;
    r->classes = xalloc_zero((size_t)cap, sizeof(*r->classes));
    for (int side = 0; side < 2; side++) {
        const struct results_scoreboard *s = side ? sb : sa;
        for (int i = 0; i < s->nclasses; i++) {
            const struct results_score_class *c = &s->classes[i];
            struct compare_class *w = class_find(r, c->name);
            if (!w) {
                w = &r->classes[r->nclasses++];
                snprintf(w->name, sizeof(w->name), "%s", c->name);
                w->met_a = w->met_b = -1;
            }
            const char *slo = results_str_get(&c->slo);
            if (slo)
                snprintf(w->slo, sizeof(w->slo), "%s", slo);
            if (side) {
                w->in_b = true;
                class_side(c, &w->have_p99_b, &w->p99_b, &w->have_within_b, &w->within_b,
                           &w->met_b);
            } else {
                w->in_a = true;
                class_side(c, &w->have_p99_a, &w->p99_a, &w->have_within_a, &w->within_a,
                           &w->met_a);
            }
        }
    }
    struct strbuf all;
    strbuf_init(&all);
    int nworse = 0;
    for (int i = 0; i < r->nclasses; i++) {
        struct compare_class *w = &r->classes[i];
        if (!w->in_a || !w->in_b)
            continue;
        struct strbuf why;
        strbuf_init(&why);
        if (w->have_p99_a && w->have_p99_b && w->p99_a > 0 &&
            w->p99_b > COMPARE_CLASS_P99_WORSE * w->p99_a)
            strbuf_printf(&why, "p99 x%.2f, %.4g -> %.4g us", w->p99_b / w->p99_a, w->p99_a,
                          w->p99_b);
        if (w->have_within_a && w->have_within_b &&
            w->within_b < w->within_a - COMPARE_CLASS_SLO_WORSE)
            strbuf_printf(&why, "%swithin SLO %.1f%% -> %.1f%%", why.len ? "; " : "",
                          w->within_a * 100, w->within_b * 100);
        if (w->met_a == 1 && w->met_b == 0)
            strbuf_printf(&why, "%sSLO %s met in A, not in B", why.len ? "; " : "", w->slo);
        if (why.len) {
            w->worse = true;
            snprintf(w->why, sizeof(w->why), "%s", why.s);
            strbuf_printf(&all, "%sclass %s (%s)", nworse++ ? ", " : "", w->name, why.s);
        }
        strbuf_free(&why);
    }
    if (nworse)
        snprintf(r->worse, sizeof(r->worse), "Worse in B: %s.", all.s);
    strbuf_free(&all);
}

static bool is_results(const cJSON *d)
{
    const char *f = jsonutil_str(d, "format");
    return cJSON_IsObject(d) && f && !strcmp(f, RESULTS_FORMAT);
}

void compare_runs(const struct results_run *a, const struct results_run *b,
                  struct compare_result *out)
{
    memset(out, 0, sizeof(*out));
    struct compare_cond_builder bl = {.r = out};
    label_of(a, out->label_a, sizeof(out->label_a));
    label_of(b, out->label_b, sizeof(out->label_b));
    struct compare_cond_pair pairs[2 * 64];
    int np = compare_cond_pair_flows(a, b, pairs, (int)(sizeof(pairs) / sizeof(pairs[0])));
    compare_cond_all(&bl, a, b, pairs, np);
    outcome(&bl, a, b, pairs, np);
    verdict(out);
    classes(out, a, b);
}

int compare_results(const cJSON *a, const cJSON *b, struct compare_result *out, struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!is_results(a) || !is_results(b))
        return ft_err_set(err, -EINVAL, "compare: %s is not a fabtop results document",
                          is_results(a) ? "the second" : "the first");
    struct results_doc da, db;
    int rc = results_json_read(a, "the first results document", &da, err);
    if (rc < 0)
        return rc;
    rc = results_json_read(b, "the second results document", &db, err);
    if (rc == 0)
        compare_runs(&da.runs[0], &db.runs[0], out);
    results_doc_free(&da);
    results_doc_free(&db);
    return rc;
}

void compare_free(struct compare_result *r)
{
    free(r->conds);
    free(r->rows);
    free(r->classes);
    memset(r, 0, sizeof(*r));
}

static cJSON *side_json(const struct compare_row *w, bool b)
{
    if (b ? !w->in_b : !w->in_a)
        return cJSON_CreateNull();
    const bool *valid = b ? w->valid_b : w->valid_a;
    const double *v = b ? w->b : w->a;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", b ? w->status_b : w->status_a);
    jsonutil_add_num_or_null(o, "p50_us", valid[COMPARE_P50], v[COMPARE_P50]);
    jsonutil_add_num_or_null(o, "p99_us", valid[COMPARE_P99], v[COMPARE_P99]);
    jsonutil_add_num_or_null(o, "p99.9_us", valid[COMPARE_P999], v[COMPARE_P999]);
    jsonutil_add_num_or_null(o, "goodput_gbps", valid[COMPARE_GBPS], v[COMPARE_GBPS]);
    if (b ? w->sim_b : w->sim_a)
        cJSON_AddStringToObject(o, "goodput_time", "simulated");
    return o;
}

cJSON *compare_to_json(const struct compare_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "fabtop-compare");
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "a", r->label_a);
    cJSON_AddStringToObject(doc, "b", r->label_b);
    cJSON_AddStringToObject(doc, "verdict", r->verdict);
    cJSON_AddStringToObject(doc, "worst", compare_severity_str(r->worst));
    cJSON *d = cJSON_AddObjectToObject(doc, "differences");
    for (int s = COMPARE_INFO; s <= COMPARE_UNFAIR; s++)
        cJSON_AddNumberToObject(d, compare_severity_str((enum compare_severity)s), r->ndiff[s]);
    cJSON *ca = cJSON_AddArrayToObject(doc, "conditions");
    for (int i = 0; i < r->nconds; i++) {
        const struct compare_cond *c = &r->conds[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", c->group);
        cJSON_AddStringToObject(o, "field", c->field);
        cJSON_AddStringToObject(o, "a", c->a);
        cJSON_AddStringToObject(o, "b", c->b);
        cJSON_AddBoolToObject(o, "same", c->same);
        cJSON_AddStringToObject(o, "severity", compare_severity_str(c->severity));
        cJSON_AddStringToObject(o, "weight", compare_severity_str(c->weight));
        cJSON_AddStringToObject(o, "why", c->why ? c->why : "");
        cJSON_AddItemToArray(ca, o);
    }
    cJSON *oa = cJSON_AddArrayToObject(doc, "outcome");
    cJSON_AddStringToObject(doc, "outcome_units",
                            "latency in microseconds of the flow's latency_kind; goodput in Gb/s "
                            "(10^9 bit/s); ratios are B over A");
    static const char *const rkeys[] = {"p50", "p99", "p99.9", "goodput"};
    for (int i = 0; i < r->nrows; i++) {
        const struct compare_row *w = &r->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "phase", w->phase);
        cJSON_AddStringToObject(o, "flow", w->flow);
        cJSON_AddStringToObject(o, "point", w->point);
        cJSON_AddStringToObject(o, "latency_kind", w->latency_kind);
        cJSON_AddItemToObject(o, "a", side_json(w, false));
        cJSON_AddItemToObject(o, "b", side_json(w, true));
        cJSON *ro = cJSON_AddObjectToObject(o, "ratio_b_over_a");
        for (int m = 0; m < COMPARE_NMETRICS; m++) {
            double x;
            bool ok = compare_ratio(w, m, &x);
            jsonutil_add_num_or_null(ro, rkeys[m], ok, ok ? x : 0);
        }
        cJSON_AddItemToArray(oa, o);
    }
    if (r->nclasses) {
        cJSON_AddStringToObject(doc, "classes_units",
                                "p99 in microseconds of the class's latency kind, the loaded "
                                "phase (else quiet); within_slo a share 0-1");
        cJSON *ka = cJSON_AddArrayToObject(doc, "classes");
        for (int i = 0; i < r->nclasses; i++) {
            const struct compare_class *w = &r->classes[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "class", w->name);
            if (w->slo[0])
                cJSON_AddStringToObject(o, "slo", w->slo);
            for (int side = 0; side < 2; side++) {
                bool in = side ? w->in_b : w->in_a;
                cJSON *e = in ? cJSON_CreateObject() : cJSON_CreateNull();
                if (in) {
                    jsonutil_add_num_or_null(e, "p99_us", side ? w->have_p99_b : w->have_p99_a,
                                             side ? w->p99_b : w->p99_a);
                    jsonutil_add_num_or_null(e, "within_slo",
                                             side ? w->have_within_b : w->have_within_a,
                                             side ? w->within_b : w->within_a);
                    int met = side ? w->met_b : w->met_a;
                    if (met < 0)
                        cJSON_AddNullToObject(e, "slo_met");
                    else
                        cJSON_AddBoolToObject(e, "slo_met", met);
                }
                cJSON_AddItemToObject(o, side ? "b" : "a", e);
            }
            cJSON_AddBoolToObject(o, "worse", w->worse);
            if (w->worse)
                cJSON_AddStringToObject(o, "why", w->why);
            cJSON_AddItemToArray(ka, o);
        }
        cJSON_AddStringToObject(doc, "worse", r->worse);
    }
    return doc;
}

/* ---- brief ---- */

void compare_run_brief(const struct results_run *doc, struct compare_brief *out)
{
    memset(out, 0, sizeof(*out));
    const char *at = results_str_get(&doc->started_at);
    snprintf(out->started_at, sizeof(out->started_at), "%s", at ? at : "");
    jsonutil_strcpy(doc->mix, "name", out->mix, sizeof(out->mix));
    if (doc->npeers)
        compare_cond_peer_text(doc->peers[0], out->peer, sizeof(out->peer));
    bool failed = false;
    for (int p = 0; p < doc->nphases; p++)
        for (int i = 0; i < doc->phases[p].nflows; i++) {
            const char *s = results_str_get(&doc->phases[p].flows[i].status);
            failed |= s && strcmp(s, "ok");
        }
    snprintf(out->status, sizeof(out->status), "%s",
             results_bool_true(&doc->interrupted) ? "interrupted"
             : failed                             ? "failed"
                                                  : "ok");
    const char *fg = results_str_get(&doc->summary.foreground);
    snprintf(out->foreground, sizeof(out->foreground), "%s", fg ? fg : "");
    if (!doc->nphases)
        return;
    const struct results_phase *last_phase = &doc->phases[doc->nphases - 1];
    const char *pn = results_str_get(&last_phase->name);
    snprintf(out->phase, sizeof(out->phase), "%s", pn ? pn : "");
    const struct results_flow *fl = NULL;
    for (int i = 0; i < last_phase->nflows; i++) {
        const struct results_flow *f = &last_phase->flows[i];
        const char *n = results_str_get(&f->name);
        if (out->foreground[0] ? (n && !strcmp(n, out->foreground))
                               : (!fl && compare_cond_is_fg(f)))
            fl = f;
    }
    if (!fl)
        return;
    if (!out->foreground[0]) {
        const char *n = results_str_get(&fl->name);
        snprintf(out->foreground, sizeof(out->foreground), "%s", n ? n : "");
    }
    const struct results_point *pts[MAX_POINTS];
    int n = measured_points(fl, pts, MAX_POINTS);
    if (n == 0)
        return;
    const struct results_point *last = pts[n - 1];
    bool lat = last->latency_st == RESULTS_SET;
    out->have_p50 = lat && results_num_get(&last->latency.p50, &out->p50_us);
    out->have_p99 = lat && results_num_get(&last->latency.p99, &out->p99_us);
    out->have_gbps = results_point_goodput(fl, last, &out->gbps, &out->gbps_simulated);
}

void compare_brief(const cJSON *doc, struct compare_brief *out)
{
    struct results_doc d;
    memset(out, 0, sizeof(*out));
    if (results_json_read(doc, "results", &d, NULL) < 0)
        return;
    compare_run_brief(&d.runs[0], out);
    results_doc_free(&d);
}
