/* rack_expect: --expect on a sweep's pairs and ranks (rack_expect.h). */
#include "engine/rack/rack_expect.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/sweep/sweep_stats.h"

int rack_expect_parse(const char *s, struct thresholds *e, struct ft_err *err)
{
    int rc = thresholds_parse(s, e, err);
    if (rc < 0)
        return rc;
    for (int i = 0; i < e->n; i++) {
        const struct thresholds_term *t = &e->t[i];
        bool stat_ok =
            t->stat == EXP_P50 || t->stat == EXP_P99 || t->stat == EXP_P999 || t->stat == EXP_GBPS;
        bool who_ok = !t->flow[0] || !strcmp(t->flow, "pair") || !strcmp(t->flow, "rank");
        if (!stat_ok || !who_ok || t->phase[0])
            return ft_err_set(err, -EINVAL,
                              "--expect '%s': a sweep judges pair.STAT or rank.STAT, STAT one of "
                              "p50, p99, p99.9 (latency, us) or gbps (bandwidth, Gb/s)",
                              t->text);
    }
    return 0;
}

static const char *stat_name(enum thresholds_stat s)
{
    return s == EXP_P50 ? "p50" : s == EXP_P99 ? "p99" : s == EXP_P999 ? "p99.9" : "gbps";
}

/* A pair's figure for stat: latency in us, bandwidth in Gb/s (dir 0 a->b, 1 b->a). */
static bool pair_value(const struct results_sweep_pair *p, enum thresholds_stat s, int dir,
                       double *v)
{
    switch (s) {
    case EXP_P50:
        return results_num_get(&p->lat_p50_us, v);
    case EXP_P99:
        return results_num_get(&p->lat_p99_us, v);
    case EXP_P999:
        return results_num_get(&p->lat_p999_us, v);
    default:
        return results_num_get(dir ? &p->bw_ba_gbps : &p->bw_ab_gbps, v);
    }
}

struct out {
    char *buf;
    size_t len, used;
    int n;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
    o->n++;
    if (o->used + 1 >= o->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->used = o->used + (size_t)k < o->len ? o->used + (size_t)k : o->len - 1;
}

static bool passes(const struct thresholds_term *t, double v)
{
    return t->less ? v < t->value : v > t->value;
}

static void fmt_value(const struct thresholds_term *t, double v, char *b, size_t n)
{
    if (t->stat == EXP_GBPS)
        snprintf(b, n, "%.4g Gb/s", v);
    else
        snprintf(b, n, "%.4g us", v);
}

static const char *host(const struct results_sweep *d, int r)
{
    return r >= 0 && r < d->nranks && d->ranks[r].host ? d->ranks[r].host : "?";
}

static void check_pairs(const struct thresholds_term *t, const struct results_sweep *d,
                        struct out *o)
{
    for (int i = 0; i < d->npairs; i++) {
        const struct results_sweep_pair *p = &d->pairs[i];
        if (results_bool_true(&p->failed)) {
            say(o, "%s <-> %s: failed (%s), expected %s\n", host(d, p->a), host(d, p->b),
                results_str_get(&p->error) ? results_str_get(&p->error) : "no reason", t->text);
            continue;
        }
        for (int dir = 0; dir < (t->stat == EXP_GBPS ? 2 : 1); dir++) {
            double v;
            char b[32];
            if (!pair_value(p, t->stat, dir, &v)) {
                say(o, "%s <-> %s: %s not measured, expected %s\n", host(d, p->a), host(d, p->b),
                    stat_name(t->stat), t->text);
                continue;
            }
            if (passes(t, v))
                continue;
            fmt_value(t, v, b, sizeof(b));
            say(o, "%s <-> %s: %s%s %s, expected %s %g (%s)\n", host(d, p->a), host(d, p->b),
                stat_name(t->stat), t->stat == EXP_GBPS ? (dir ? " b->a" : " a->b") : "", b,
                t->less ? "<" : ">", t->value, t->text);
        }
    }
}

static void check_ranks(const struct thresholds_term *t, const struct results_sweep *d,
                        struct out *o)
{
    double *x = xalloc(sizeof(double) * (2 * (size_t)d->npairs + 1));
    for (int r = 0; r < d->nranks; r++) {
        const char *st = results_str_get(&d->ranks[r].status);
        if (st && !strcmp(st, "failed")) {
            say(o, "%s: failed (%s), expected %s\n", host(d, r),
                results_str_get(&d->ranks[r].error) ? results_str_get(&d->ranks[r].error) : "",
                t->text);
            continue;
        }
        size_t n = 0;
        for (int i = 0; i < d->npairs; i++) {
            const struct results_sweep_pair *p = &d->pairs[i];
            if ((p->a != r && p->b != r) || results_bool_true(&p->failed))
                continue;
            for (int dir = 0; dir < (t->stat == EXP_GBPS ? 2 : 1); dir++)
                if (pair_value(p, t->stat, dir, &x[n]))
                    n++;
        }
        if (!n)
            continue; /* a rank in no pair (another pattern only) */
        double m = sweep_stats_median(x, n);
        char b[32];
        if (passes(t, m))
            continue;
        fmt_value(t, m, b, sizeof(b));
        say(o, "%s: median %s %s over its pairs, expected %s %g (%s)\n", host(d, r),
            stat_name(t->stat), b, t->less ? "<" : ">", t->value, t->text);
    }
    free(x);
}

int rack_expect_check(const struct thresholds *e, const struct results_sweep *doc, char *report,
                      size_t len)
{
    struct out o = {report, len, strlen(report), 0};
    for (int i = 0; i < e->n; i++) {
        if (!strcmp(e->t[i].flow, "rank"))
            check_ranks(&e->t[i], doc, &o);
        else
            check_pairs(&e->t[i], doc, &o);
    }
    return o.n;
}
