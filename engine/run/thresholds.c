/* thresholds: parse threshold expressions and check them against results. */
#include "engine/run/thresholds.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/results/results_json.h"
#include "common/suggest.h"
#include "engine/flow/mix.h"
#include "engine/results/results.h"
#include "engine/xport/xport.h"

static const struct {
    const char *name;
    enum thresholds_stat stat;
    bool latency;
} stats[] = {
    {"min", EXP_MIN, true},      {"mean", EXP_MEAN, true},
    {"p50", EXP_P50, true},      {"p90", EXP_P90, true},
    {"p99", EXP_P99, true},      {"p99.9", EXP_P999, true},
    {"p99.99", EXP_P9999, true}, {"max", EXP_MAX_LAT, true},
    {"gbps", EXP_GBPS, false},   {"wire_gbps", EXP_WIRE_GBPS, false},
    {"ops", EXP_OPS, false},     {"retrans", EXP_RETRANS, false},
};
#define NSTATS (int)(sizeof(stats) / sizeof(stats[0]))

static int parse_term(const char *s, struct thresholds_term *t, struct ft_err *err)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->text, sizeof(t->text), "%s", s);
    const char *op = strpbrk(s, "<>");
    if (!op)
        return ft_err_set(err, -EINVAL, "--expect '%s': no '<' or '>'", s);
    t->less = *op == '<';
    /* Left side: [flow.][phase.]stat; stats may contain dots (p99.9), so match the longest
     * known statistic at the end. */
    char left[96];
    snprintf(left, sizeof(left), "%.*s", (int)(op - s), s);
    int found = -1;
    size_t flen = 0;
    for (int i = 0; i < NSTATS; i++) {
        size_t n = strlen(stats[i].name), l = strlen(left);
        if (l >= n && !strcmp(left + l - n, stats[i].name) && (l == n || left[l - n - 1] == '.') &&
            n > flen) {
            found = i;
            flen = n;
        }
    }
    if (found < 0) {
        /* The nearest statistic to the whole left side or to what follows one of its dots
         * ("probe.quiet.gpbs"). */
        const char *names[NSTATS + 1], *near = NULL;
        for (int i = 0; i < NSTATS; i++)
            names[i] = stats[i].name;
        names[NSTATS] = NULL;
        for (const char *p = left; p && !near; p = strchr(p, '.') ? strchr(p, '.') + 1 : NULL)
            near = suggest_nearest(p, names);
        char hint[48] = "";
        if (near)
            snprintf(hint, sizeof(hint), "did you mean '%s'? ", near);
        return ft_err_set(err, -EINVAL,
                          "--expect '%s': unknown statistic (%suse min, mean, p50, p90, p99, "
                          "p99.9, p99.99, max, gbps, wire_gbps, ops, retrans)",
                          s, hint);
    }
    t->stat = stats[found].stat;
    size_t l = strlen(left);
    if (l > flen) {
        left[l - flen - 1] = '\0'; /* "flow.phase" or "flow" or "phase" */
        char *dot = strrchr(left, '.');
        const char *last = dot ? dot + 1 : left;
        if (!strcmp(last, "quiet") || !strcmp(last, "loaded")) {
            snprintf(t->phase, sizeof(t->phase), "%s", last);
            if (dot)
                *dot = '\0';
            else
                left[0] = '\0';
        }
        snprintf(t->flow, sizeof(t->flow), "%s", left);
    }
    /* Right side: number with an optional unit. */
    char *end;
    double v = strtod(op + 1, &end);
    if (end == op + 1)
        return ft_err_set(err, -EINVAL, "--expect '%s': no number after '%c'", s, *op);
    /* Every statistic is a count, a rate or a latency: finite and never below 0. A threshold
     * that no result can meet would only ever report a violation. */
    if (!isfinite(v))
        return ft_err_set(err, -EINVAL, "--expect '%s': the threshold must be a finite number", s);
    if (v < 0)
        return ft_err_set(err, -EINVAL,
                          "--expect '%s': a negative threshold; %s is never below 0 (give 0 or "
                          "more)",
                          s, stats[found].name);
    if (t->less && v == 0)
        return ft_err_set(err, -EINVAL,
                          "--expect '%s': %s is never below 0, so this can never pass (give a "
                          "threshold above 0)",
                          s, stats[found].name);
    while (isspace((unsigned char)*end))
        end++;
    if (stats[found].latency) {
        if (!*end || !strcmp(end, "us"))
            t->value = v;
        else if (!strcmp(end, "ns"))
            t->value = v / 1e3;
        else if (!strcmp(end, "ms"))
            t->value = v * 1e3;
        else if (!strcmp(end, "s"))
            t->value = v * 1e6;
        else
            return ft_err_set(err, -EINVAL, "--expect '%s': latency unit must be ns, us, ms or s",
                              s);
    } else {
        if (*end && !((t->stat == EXP_GBPS || t->stat == EXP_WIRE_GBPS) && !strcmp(end, "Gb/s")))
            return ft_err_set(err, -EINVAL, "--expect '%s': unexpected unit '%s'", s, end);
        t->value = v;
    }
    return 0;
}

int thresholds_parse(const char *s, struct thresholds *e, struct ft_err *err)
{
    memset(e, 0, sizeof(*e));
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        if (!*tok)
            continue;
        if (e->n == THRESHOLDS_MAX)
            return ft_err_set(err, -E2BIG, "--expect: at most %d terms", THRESHOLDS_MAX);
        int rc = parse_term(tok, &e->t[e->n], err);
        if (rc < 0)
            return rc;
        e->n++;
    }
    if (e->n == 0)
        return ft_err_set(err, -EINVAL, "--expect: no terms (example: 'p99<50us,gbps>9')");
    return 0;
}

int thresholds_check_mix(const struct thresholds *e, const struct mix *m, struct ft_err *err)
{
    for (int i = 0; i < e->n; i++) {
        const struct thresholds_term *t = &e->t[i];
        int k = 0;
        while (stats[k].stat != t->stat)
            k++;
        bool quiet = !strcmp(t->phase, "quiet");
        if (quiet && !m->quiet_then_loaded)
            return ft_err_set(err, -EINVAL,
                              "--expect '%s': mix %s has no quiet phase (it runs loaded only)",
                              t->text, m->name);
        const struct mix_flow *f = NULL;
        const char *names[MIX_MAX_FLOWS + 1];
        for (int j = 0; j < m->nflows; j++) {
            names[j] = m->flows[j].name;
            if (t->flow[0] ? !strcmp(t->flow, m->flows[j].name)
                           : m->flows[j].role == MIX_ROLE_FOREGROUND && !f)
                f = &m->flows[j];
        }
        names[m->nflows] = NULL;
        if (!f) {
            const char *near = suggest_nearest(t->flow, names);
            char hint[64] = "";
            if (near)
                snprintf(hint, sizeof(hint), " (did you mean '%s'?)", near);
            return ft_err_set(err, -EINVAL, "--expect '%s': mix %s has no flow '%s'%s", t->text,
                              m->name, t->flow, hint);
        }
        if (quiet && f->role == MIX_ROLE_BACKGROUND)
            return ft_err_set(err, -EINVAL,
                              "--expect '%s': %s is a background flow; it runs in the loaded "
                              "phase only",
                              t->text, f->name);
        if (stats[k].latency && mix_latency_kind_of(f) == MIX_LAT_NONE)
            return ft_err_set(err, -EINVAL,
                              "--expect '%s': flow %s (%s %s) records no latency; test its "
                              "gbps or ops",
                              t->text, f->name, f->transport, mix_op_str(f->op));
        const struct xport_ops *xp = xport_find(f->transport);
        if ((t->stat == EXP_WIRE_GBPS || t->stat == EXP_RETRANS) && xp && !xp->sample)
            return ft_err_set(err, -EINVAL,
                              "--expect '%s': flow %s (%s) has no %s; only TCP flows record "
                              "what the socket sent and retransmitted",
                              t->text, f->name, f->transport, stats[k].name);
    }
    return 0;
}

static const struct results_flow *find_flow(const struct results_run *results, const char *phase,
                                            const char *flow)
{
    for (int p = 0; p < results->nphases; p++) {
        const struct results_phase *ph = &results->phases[p];
        const char *pn = results_str_get(&ph->name);
        if (strcmp(pn ? pn : "", phase))
            continue;
        for (int i = 0; i < ph->nflows; i++) {
            const struct results_flow *fl = &ph->flows[i];
            const char *name = results_str_get(&fl->name), *role = results_str_get(&fl->role);
            if ((flow[0] && name && !strcmp(name, flow)) ||
                (!flow[0] && role && !strcmp(role, "foreground")))
                return fl;
        }
    }
    return NULL;
}

/* The statistic of a point that term k names, when recorded. */
static bool point_stat(int k, const struct results_flow *fl, const struct results_point *pt,
                       double *v, bool *simulated)
{
    const struct results_latency *l = &pt->latency;
    bool lat = pt->latency_st == RESULTS_SET;
    switch (stats[k].stat) {
    case EXP_MIN:
        return lat && results_num_get(&l->min, v);
    case EXP_MEAN:
        return lat && results_num_get(&l->mean, v);
    case EXP_P50:
        return lat && results_num_get(&l->p50, v);
    case EXP_P90:
        return lat && results_num_get(&l->p90, v);
    case EXP_P99:
        return lat && results_num_get(&l->p99, v);
    case EXP_P999:
        return lat && results_num_get(&l->p999, v);
    case EXP_P9999:
        return lat && results_num_get(&l->p9999, v);
    case EXP_MAX_LAT:
        return lat && results_num_get(&l->max, v);
    case EXP_GBPS:
        return results_point_goodput(fl, pt, v, simulated);
    case EXP_WIRE_GBPS:
        return results_num_get(&pt->wire_gbps, v);
    case EXP_OPS:
        return results_num_get(&pt->ops_per_s, v);
    case EXP_RETRANS:
        return pt->tcp_st == RESULTS_SET && results_num_get(&pt->tcp.retrans_segments, v);
    }
    return false;
}

int thresholds_check_run(const struct thresholds *e, const struct results_run *results,
                         char *report, size_t len)
{
    int bad = 0;
    size_t used = 0;
    report[0] = '\0';
#define OUT(...)                                                                                   \
    do {                                                                                           \
        int n_ = snprintf(report + used, used < len ? len - used : 0, __VA_ARGS__);                \
        if (n_ > 0)                                                                                \
            used += (size_t)n_;                                                                    \
    } while (0)
    for (int i = 0; i < e->n; i++) {
        const struct thresholds_term *t = &e->t[i];
        const char *phase = t->phase[0] ? t->phase : "loaded";
        const struct results_flow *fl = find_flow(results, phase, t->flow);
        if (!fl) {
            OUT("expect %s: no flow %s in phase %s\n", t->text,
                t->flow[0] ? t->flow : "(foreground)", phase);
            bad++;
            continue;
        }
        int k = 0;
        while (stats[k].stat != t->stat)
            k++;
        const char *name = results_str_get(&fl->name);
        int checked = 0;
        for (int p = 0; p < fl->npoints; p++) {
            const struct results_point *pt = &fl->points[p];
            double v;
            bool simulated = false; /* gbps of a sim flow: in simulated time */
            if (!point_stat(k, fl, pt, &v, &simulated))
                continue;
            checked++;
            bool ok = t->less ? v < t->value : v > t->value;
            if (!ok) {
                double size = 0;
                results_num_get(&pt->size_bytes, &size);
                OUT("expect %s violated: %s %s = %.6g%s%s at %.0f B\n", t->text,
                    name ? name : "(foreground)", stats[k].name, v, stats[k].latency ? " us" : "",
                    simulated ? " (simulated time)" : "", size);
                bad++;
            }
        }
        if (!checked) {
            OUT("expect %s: %s has no %s (n/a for this flow)\n", t->text,
                name ? name : "(foreground)", stats[k].name);
            bad++;
        }
    }
#undef OUT
    return bad;
}

int thresholds_check(const struct thresholds *e, const cJSON *results, char *report, size_t len)
{
    struct results_run run;
    struct ft_err err = {0};
    if (results_json_read_run(results, "results", &run, &err) < 0) {
        /* Nothing can be tested: every term fails, with the reader's line. */
        snprintf(report, len, "expect: %s\n", err.msg);
        return e->n;
    }
    int bad = thresholds_check_run(e, &run, report, len);
    results_run_free(&run);
    return bad;
}
