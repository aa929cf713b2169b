/* score: the scoreboard of a run in serving terms (score.h). */
#include "engine/results/score.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/suggest.h"
#include "common/xalloc.h"

static const struct {
    const char *name;
    double pct;
} slo_stats[] = {{"p50", 50},     {"p90", 90},       {"p99", 99},
                 {"p99.9", 99.9}, {"p99.99", 99.99}, {"max", 100}};
#define NSLO_STATS (int)(sizeof(slo_stats) / sizeof(slo_stats[0]))

/* "30ms", "80us", "500ns", "0.02s" -> microseconds; false when it is not a positive number
 * with one of those units. */
static bool parse_dur_us(const char *s, double *us)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || !isfinite(v))
        return false;
    static const struct {
        const char *u;
        double f;
    } units[] = {{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcmp(end, units[i].u)) {
            *us = v * units[i].f;
            return true;
        }
    return false;
}

static int slo_term(const char *s, struct score_opts *o, struct ft_err *err)
{
    if (!*s)
        return ft_err_set(err, -EINVAL,
                          "--slo: an empty term (give CLASS:STAT<BOUND, as "
                          "tp:p99<80us, separated by commas)");
    const char *colon = strchr(s, ':');
    if (!colon || colon == s)
        return ft_err_set(err, -EINVAL,
                          "--slo '%s': no CLASS: before the statistic (CLASS:STAT<BOUND, as "
                          "tp:p99<80us)",
                          s);
    size_t clen = (size_t)(colon - s);
    if (clen >= sizeof(o->slo[0].class_name))
        return ft_err_set(err, -EINVAL, "--slo '%s': the class is longer than %zu characters", s,
                          sizeof(o->slo[0].class_name) - 1);
    const char *lt = strchr(colon, '<');
    if (!lt)
        return ft_err_set(err, -EINVAL,
                          "--slo '%s': no '<' (an SLO is an upper bound: CLASS:STAT<BOUND)", s);
    char stat[16];
    snprintf(stat, sizeof(stat), "%.*s", (int)(lt - colon - 1), colon + 1);
    int found = -1;
    for (int i = 0; i < NSLO_STATS; i++)
        if (!strcmp(stat, slo_stats[i].name))
            found = i;
    if (found < 0) {
        const char *names[NSLO_STATS + 1];
        for (int i = 0; i < NSLO_STATS; i++)
            names[i] = slo_stats[i].name;
        names[NSLO_STATS] = NULL;
        const char *near = suggest_nearest(stat, names);
        char hint[48] = "";
        if (near)
            snprintf(hint, sizeof(hint), "did you mean '%s'? ", near);
        return ft_err_set(err, -EINVAL,
                          "--slo '%s': unknown statistic '%s' (%suse p50, p90, p99, p99.9, "
                          "p99.99 or max)",
                          s, stat, hint);
    }
    double us;
    const char *b = lt + 1;
    if (*b == '=')
        b++;
    if (!parse_dur_us(b, &us))
        return ft_err_set(err, -EINVAL,
                          "--slo '%s': the bound '%s' is not a positive time with its unit "
                          "(ns, us, ms or s: 80us, 30ms)",
                          s, b);
    for (int i = 0; i < o->nslo; i++)
        if (strlen(o->slo[i].class_name) == clen && !strncmp(o->slo[i].class_name, s, clen))
            return ft_err_set(err, -EINVAL, "--slo '%s': class %.*s has an SLO already (%s)", s,
                              (int)clen, s, o->slo[i].text);
    if (o->nslo >= SCORE_MAX_SLO)
        return ft_err_set(err, -EINVAL, "--slo '%s': more than %d terms", s, SCORE_MAX_SLO);
    struct score_slo *t = &o->slo[o->nslo++];
    memset(t, 0, sizeof(*t));
    snprintf(t->class_name, sizeof(t->class_name), "%.*s", (int)clen, s);
    snprintf(t->stat, sizeof(t->stat), "%s", slo_stats[found].name);
    t->pct = slo_stats[found].pct;
    t->bound_us = us;
    snprintf(t->text, sizeof(t->text), "%.63s", colon + 1);
    return 0;
}

int score_slo_parse(const char *s, struct score_opts *o, struct ft_err *err)
{
    char buf[1024];
    if (strlen(s) >= sizeof(buf))
        return ft_err_set(err, -EINVAL, "--slo: longer than %zu characters", sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", s);
    char *p = buf;
    /* strtok would skip empty terms: walk the commas by hand. */
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        int rc = slo_term(p, o, err);
        if (rc < 0)
            return rc;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int score_slo_check_mix(const struct score_opts *o, const struct mix *m, struct ft_err *err)
{
    for (int i = 0; i < o->nslo; i++) {
        bool have = false;
        for (int k = 0; k < m->nflows && !have; k++)
            have = !strcmp(m->flows[k].class_name, o->slo[i].class_name);
        if (!have)
            return ft_err_set(err, -EINVAL,
                              "--slo '%s:%s': no flow of mix %s has class %s (a flow's \"class\" "
                              "in the mix)",
                              o->slo[i].class_name, o->slo[i].text, m->name, o->slo[i].class_name);
    }
    return 0;
}

int score_set_step_budget(struct score_opts *o, const char *dur, struct ft_err *err)
{
    double us;
    if (!parse_dur_us(dur, &us))
        return ft_err_set(err, -EINVAL,
                          "--step-budget '%s': not a positive time with its unit (ns, us, ms or "
                          "s: 25ms)",
                          dur);
    o->step_budget_ms = us / 1e3;
    snprintf(o->budget_from, sizeof(o->budget_from), "--step-budget %.32s", dur);
    return 0;
}

int score_set_target_tps(struct score_opts *o, const char *tps, struct ft_err *err)
{
    char *end;
    double v = strtod(tps, &end);
    if (end == tps || *end || !(v > 0) || !isfinite(v) || v > 1e9)
        return ft_err_set(err, -EINVAL,
                          "--target-tps '%s': not a positive number of tokens per second (of "
                          "one sequence: 40)",
                          tps);
    o->step_budget_ms = 1e3 / v;
    snprintf(o->budget_from, sizeof(o->budget_from), "--target-tps %.32s", tps);
    return 0;
}

double score_jain(const double *x, int n)
{
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    if (n <= 0 || !(s2 > 0))
        return NAN;
    return s * s / (n * s2);
}

double score_hist_within(const struct hist *h, double bound_us)
{
    uint64_t count = atomic_load(&h->count);
    if (!count)
        return NAN;
    double bound_ns = bound_us * 1e3;
    if ((double)atomic_load(&h->max) <= bound_ns)
        return 1;
    if ((double)atomic_load(&h->min) > bound_ns)
        return 0;
    uint64_t in = 0;
    for (int b = 0; b < HIST_NBUCKETS; b++) {
        if ((double)hist_bucket_high(b) > bound_ns)
            break;
        in += atomic_load(&h->b[b]);
    }
    return (double)in / (double)count;
}

void score_step(double comm_us, double budget_ms, double *share, double *tokens_per_s)
{
    *share = budget_ms > 0 && comm_us >= 0 ? comm_us / (budget_ms * 1e3) : NAN;
    *tokens_per_s = comm_us > 0 ? 1e6 / comm_us : NAN;
}

/* ---- building ---- */

static void num(struct results_num *f, double v)
{
    results_num_set(f, isfinite(v), isfinite(v) ? v : 0);
    if (!isfinite(v))
        f->st = RESULTS_NULL;
}

static const struct results_phase *phase_named(const struct results_run *run, const char *name)
{
    for (int p = 0; p < run->nphases; p++)
        if (run->phases[p].name.st == RESULTS_SET && !strcasecmp(run->phases[p].name.s, name))
            return &run->phases[p];
    return NULL;
}

static const struct mix_flow *mix_flow_named(const struct mix *m, const char *name)
{
    for (int i = 0; name && i < m->nflows; i++)
        if (!strcmp(m->flows[i].name, name))
            return &m->flows[i];
    return NULL;
}

/* A flow's histogram over all its measured points, of its operations or (step) of its
 * measured decode steps, the points' "step" (false when it has no samples). */
static bool flow_hist(const struct results_flow *f, bool step, struct hist *out)
{
    hist_init(out);
    for (int k = 0; k < f->npoints; k++) {
        const struct hist *h = step ? f->points[k].step_histogram : f->points[k].histogram;
        if (h)
            hist_merge(out, h);
    }
    return atomic_load(&out->count) > 0;
}

/* A flow's op rate (ops/s) or goodput (Gb/s) over its measured points; NaN when unknown. */
static double flow_rate(const struct results_flow *f, bool goodput)
{
    double amount = 0, secs = 0;
    for (int k = 0; k < f->npoints; k++) {
        const struct results_point *p = &f->points[k];
        double s, a;
        if (!results_num_get(&p->measure_s, &s) ||
            !results_num_get(goodput ? &p->payload_bytes : &p->ops, &a))
            continue;
        secs += s;
        amount += goodput ? a * 8 / 1e9 : a;
    }
    return secs > 0 ? amount / secs : NAN;
}

static void class_phase(struct results_score_class *c, const struct results_phase *ph,
                        const struct mix *m, const struct score_slo *slo, bool goodput,
                        struct results_score_phase *o, struct hist *merged, struct hist *tmp)
{
    if (!ph)
        return;
    double rates[MIX_MAX_FLOWS];
    int n = 0, nflows = 0;
    hist_init(merged);
    for (int i = 0; i < ph->nflows; i++) {
        const struct results_flow *f = &ph->flows[i];
        const struct mix_flow *mf = mix_flow_named(m, results_str_get(&f->name));
        if (!mf || strcmp(mf->class_name, c->name))
            continue;
        nflows++;
        if (flow_hist(f, false, tmp))
            hist_merge(merged, tmp);
        double r = flow_rate(f, goodput);
        if (isfinite(r) && n < MIX_MAX_FLOWS)
            rates[n++] = r;
    }
    if (!nflows)
        return;
    o->st = RESULTS_SET;
    uint64_t count = atomic_load(&merged->count);
    num(&o->samples, count ? (double)count : NAN);
    num(&o->p50_us, hist_percentile(merged, 50) / 1e3);
    num(&o->p99_us, hist_percentile(merged, 99) / 1e3);
    num(&o->p999_us, hist_percentile(merged, 99.9) / 1e3);
    if (slo)
        num(&o->within_slo, score_hist_within(merged, slo->bound_us));
    num(&o->fairness_jain, score_jain(rates, n));
    if (slo && o == &c->loaded) {
        double v = hist_percentile(merged, slo->pct) / 1e3;
        c->slo_met = (struct results_bool){isfinite(v) ? RESULTS_SET : RESULTS_NULL,
                                           isfinite(v) && v <= slo->bound_us};
    }
}

/* A step's communication as a distribution: the probability of each histogram bucket (hist.h's
 * geometry, values at bucket midpoints) and of overflow (at or past HIST_RANGE_END). */
struct step_dist {
    double w[HIST_NBUCKETS];
    double over;
};

static double mid_ns(int b)
{
    return ((double)hist_bucket_low(b) + (double)hist_bucket_high(b)) / 2;
}

/* Add probability w at value v (ns) to d. */
static void dist_put(struct step_dist *d, double v, double w)
{
    int b = v < (double)HIST_RANGE_END ? hist_bucket_of((uint64_t)llround(v)) : -ERANGE;
    if (b < 0)
        d->over += w;
    else
        d->w[b] += w;
}

/* A term's samples as a distribution: its histogram, each value scaled (per_step x an
 * operation's latency, for a term without whole steps; else 1). */
static void dist_of_hist(struct step_dist *d, const struct hist *h, double scale)
{
    memset(d, 0, sizeof(*d));
    double n = (double)atomic_load(&h->count);
    for (int b = 0; b < HIST_NBUCKETS; b++) {
        uint64_t c = atomic_load(&h->b[b]);
        if (c)
            dist_put(d, scale * mid_ns(b), (double)c / n);
    }
    d->over += (double)atomic_load(&h->overflow) / n;
}

/* acc = the distribution of (acc + t), the two independent: every pair of buckets (tmp: the
 * caller's scratch). What was overflow on either side stays overflow. */
static void dist_add(struct step_dist *acc, const struct step_dist *t, struct step_dist *tmp)
{
    /* The non-empty buckets of each side, with their midpoints and weights. */
    double *m = xalloc(4 * HIST_NBUCKETS * sizeof(double));
    double *ma = m, *wa = m + HIST_NBUCKETS, *mt = m + 2 * HIST_NBUCKETS,
           *wt = m + 3 * HIST_NBUCKETS;
    int na = 0, nt = 0;
    for (int b = 0; b < HIST_NBUCKETS; b++) {
        if (acc->w[b] > 0) {
            ma[na] = mid_ns(b);
            wa[na++] = acc->w[b];
        }
        if (t->w[b] > 0) {
            mt[nt] = mid_ns(b);
            wt[nt++] = t->w[b];
        }
    }
    memset(tmp, 0, sizeof(*tmp));
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nt; j++)
            dist_put(tmp, ma[i] + mt[j], wa[i] * wt[j]);
    tmp->over += acc->over + t->over - acc->over * t->over; /* either one overflowed */
    memcpy(acc, tmp, sizeof(*acc));
    free(m);
}

/* The nearest-rank percentile p of d, ns (NaN past the buckets). */
static double dist_percentile(const struct step_dist *d, double p)
{
    double want = p / 100, cum = 0;
    for (int b = 0; b < HIST_NBUCKETS; b++) {
        cum += d->w[b];
        if (d->w[b] > 0 && cum >= want - 1e-12)
            return mid_ns(b);
    }
    return NAN;
}

static void step_phase(const struct results_run *run, const struct results_phase *ph,
                       const struct mix *m, double budget_ms, struct results_score_step_phase *o,
                       struct hist *h)
{
    (void)run;
    if (!ph)
        return;
    double c50 = 0, c99 = 0, fewest = 0;
    bool any = false, all = true;
    /* The terms run one after another on the step's critical path: the step's time is their
     * sum. Its percentiles come from the terms' distributions summed as independent
     * (convolved); each term at its own p99, summed, is the upper figure. */
    struct step_dist *acc = xalloc(sizeof(*acc)), *t = xalloc(sizeof(*t)),
                     *tmp = xalloc(sizeof(*tmp));
    int nterms = 0;
    for (int i = 0; i < m->nflows; i++) {
        if (!(m->flows[i].per_step > 0))
            continue;
        const struct results_flow *f = NULL;
        for (int k = 0; k < ph->nflows && !f; k++)
            if (ph->flows[k].name.st == RESULTS_SET &&
                !strcmp(ph->flows[k].name.s, m->flows[i].name))
                f = &ph->flows[k];
        if (!f)
            continue; /* not in this phase (quiet: the foreground alone) */
        any = true;
        double scale = 1;
        if (flow_hist(f, true, h)) { /* whole steps, measured */
            double n = (double)atomic_load(&h->count);
            fewest = fewest > 0 && fewest < n ? fewest : n;
        } else if (flow_hist(f, false, h)) {
            scale = m->flows[i].per_step;
        } else {
            all = false;
            continue;
        }
        c50 += scale * hist_percentile(h, 50) / 1e3;
        c99 += scale * hist_percentile(h, 99) / 1e3;
        dist_of_hist(nterms++ ? t : acc, h, scale);
        if (nterms > 1)
            dist_add(acc, t, tmp);
    }
    double u99 = c99;
    if (nterms > 1) {
        c50 = dist_percentile(acc, 50) / 1e3;
        c99 = dist_percentile(acc, 99) / 1e3;
    }
    free(acc);
    free(t);
    free(tmp);
    if (!any)
        return;
    o->st = RESULTS_SET;
    double share, tps;
    /* A term without samples leaves the step unknown, not shorter. */
    if (!all)
        c50 = c99 = u99 = NAN;
    num(&o->comm_p50_us, c50);
    num(&o->comm_p99_us, c99);
    num(&o->comm_p99_upper_us, u99);
    if (fewest > 0)
        results_num_set(&o->steps_measured, true, fewest);
    score_step(c50, budget_ms, &share, &tps);
    num(&o->budget_share_p50, share);
    num(&o->tokens_per_s_p50, tps);
    score_step(c99, budget_ms, &share, &tps);
    num(&o->budget_share_p99, share);
    num(&o->tokens_per_s_p99, tps);
}

void score_build(struct results_run *run, const struct mix *m, const struct score_opts *o)
{
    static const struct score_opts none = {0};
    if (!o)
        o = &none;
    struct results_scoreboard *b = &run->scoreboard;
    results_scoreboard_free(b);
    bool steps = false;
    int ncls = 0;
    const char *cls[MIX_MAX_FLOWS];
    for (int i = 0; i < m->nflows; i++) {
        steps |= m->flows[i].per_step > 0;
        const char *c = m->flows[i].class_name;
        bool seen = !*c;
        for (int k = 0; k < ncls && !seen; k++)
            seen = !strcmp(cls[k], c);
        if (!seen)
            cls[ncls++] = c;
    }
    if (!ncls && !steps)
        return;
    b->st = RESULTS_SET;
    results_str_set(&b->basis,
                    "per flow class (the mix's \"class\"): the latency of all its flows' "
                    "operations merged, in microseconds of its latency kind, nearest rank; "
                    "within_slo: the share of its operations at or under the --slo bound "
                    "(histogram buckets wholly under it); fairness_jain: Jain's index "
                    "(sum x)^2 / (n sum x^2) over its flows' fairness_of (1: equal, 1/n: one "
                    "flow has all); p99_loaded_over_quiet: isolation, the loaded p99 over the "
                    "quiet one (a class that runs in the quiet phase: the foreground's)");
    const struct results_phase *quiet = phase_named(run, "quiet"),
                               *loaded = phase_named(run, "loaded");
    struct hist *merged = xalloc(sizeof(*merged)), *tmp = xalloc(sizeof(*tmp));
    b->classes = xalloc_zero((size_t)ncls + 1, sizeof(*b->classes));
    for (int k = 0; k < ncls; k++) {
        struct results_score_class *c = &b->classes[b->nclasses++];
        c->name = xalloc_strdup(cls[k]);
        int n = 0;
        bool goodput = true;
        const char *kind = NULL;
        bool one_kind = true;
        for (int i = 0; i < m->nflows; i++) {
            const struct mix_flow *f = &m->flows[i];
            if (strcmp(f->class_name, cls[k]))
                continue;
            n++;
            goodput &= f->op == MIX_OP_STREAM;
            const char *kk = mix_latency_kind_str(mix_latency_kind_of(f));
            if (kind && strcmp(kind, kk))
                one_kind = false;
            kind = kind ? kind : kk;
        }
        results_num_set(&c->flows, true, n);
        results_str_set(&c->latency_kind, one_kind ? kind : "mixed");
        const struct score_slo *slo = NULL;
        for (int i = 0; i < o->nslo; i++)
            if (!strcmp(o->slo[i].class_name, cls[k]))
                slo = &o->slo[i];
        if (slo) {
            results_str_set(&c->slo, slo->text);
            results_num_set(&c->slo_bound_us, true, slo->bound_us);
        }
        results_str_set(&c->fairness_of, goodput ? "goodput_gbps" : "ops_per_s");
        class_phase(c, quiet, m, slo, goodput, &c->quiet, merged, tmp);
        class_phase(c, loaded, m, slo, goodput, &c->loaded, merged, tmp);
        double q, l;
        if (results_num_get(&c->quiet.p99_us, &q) && results_num_get(&c->loaded.p99_us, &l) &&
            q > 0)
            results_num_set(&c->p99_loaded_over_quiet, true, l / q);
    }
    if (steps) {
        struct results_score_step *s = &b->step;
        s->st = RESULTS_SET;
        results_str_set(
            &s->basis, "one decode step's communication on the critical path: the sum of its "
                       "terms' step times, at p50 (comm_p50_us) and p99 (comm_p99_us). A term's "
                       "step time is measured: per_step consecutive operations of one connection "
                       "summed into one sample (the flow's points' \"step\"); a term without whole "
                       "steps counts per_step x its operations' latency. With one term (a dense "
                       "model without PP) these are the step's own percentiles; with several, the "
                       "percentiles of the terms' measured distributions summed as independent "
                       "(convolved, histogram buckets at their midpoints), and comm_p99_upper_us "
                       "each term at its own p99, summed: the bound if their tails always met; "
                       "budget_share: comm over the step budget; tokens_per_s: "
                       "1 / comm, the most tokens per second one sequence decodes (one token "
                       "per step) were communication all a step did");
        if (o->step_budget_ms > 0) {
            results_num_set(&s->budget_ms, true, o->step_budget_ms);
            results_str_set(&s->budget_from, o->budget_from);
        } else {
            s->budget_ms.st = RESULTS_NULL;
        }
        s->terms = xalloc_zero((size_t)m->nflows + 1, sizeof(*s->terms));
        for (int i = 0; i < m->nflows; i++)
            if (m->flows[i].per_step > 0) {
                struct results_score_term *t = &s->terms[s->nterms++];
                t->flow = xalloc_strdup(m->flows[i].name);
                results_num_set(&t->per_step, true, m->flows[i].per_step);
            }
        step_phase(run, quiet, m, o->step_budget_ms, &s->quiet, merged);
        step_phase(run, loaded, m, o->step_budget_ms, &s->loaded, merged);
    }
    free(merged);
    free(tmp);
}
