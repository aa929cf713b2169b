/* live_class: the live view's figures by flow class (the scoreboard, engine/results/score.h,
 * in short): per class its flows, p99 in microseconds, Jain's index over its flows and,
 * after the run, the share within its --slo bound. While the run goes the p99 is the worst
 * flow's and Jain's index is over the last interval's rates; after it, the results'
 * scoreboard (all the class's samples merged, loaded phase). Lines under the percentile
 * table where it has rows left, else one line in the events pane. */
#include "tui/live_pane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/results/score.h"

struct class_fig {
    const char *name;
    int nflows;
    double p99_us, jain, within; /* NaN: n/a */
    const char *slo;             /* NULL: none */
    int met;                     /* 1 met, 0 not, -1 unknown or no SLO */
};

static double num_or_nan(const struct results_num *f)
{
    double v;
    return results_num_get(f, &v) ? v : NAN;
}

/* The figures of every class of the run's mix (at most MIX_MAX_FLOWS); *from_results: the
 * results' scoreboard gave them. */
static int class_figs(const struct app *a, struct class_fig *out, bool *from_results)
{
    const struct runner_snapshot *snap = a->snap;
    *from_results = false;
    if (!snap || !a->have_run_mix)
        return 0;
    const struct mix *m = &a->run_mix;
    const struct results_run *res = app_results_run(a);
    const struct results_scoreboard *sb =
        res && res->scoreboard.st == RESULTS_SET ? &res->scoreboard : NULL;
    *from_results = sb != NULL;
    int n = 0;
    for (int i = 0; i < m->nflows; i++) {
        const char *c = m->flows[i].class_name;
        bool seen = !*c;
        for (int k = 0; k < n && !seen; k++)
            seen = !strcmp(out[k].name, c);
        if (seen)
            continue;
        struct class_fig *f = &out[n++];
        *f = (struct class_fig){.name = c, .p99_us = NAN, .jain = NAN, .within = NAN, .met = -1};
        bool stream = true;
        for (int k = 0; k < m->nflows; k++)
            if (!strcmp(m->flows[k].class_name, c)) {
                f->nflows++;
                stream &= m->flows[k].op == MIX_OP_STREAM;
            }
        const struct results_score_class *sc = NULL;
        for (int k = 0; sb && k < sb->nclasses && !sc; k++)
            if (!strcmp(sb->classes[k].name, c))
                sc = &sb->classes[k];
        if (sc) {
            const struct results_score_phase *p =
                sc->loaded.st == RESULTS_SET ? &sc->loaded : &sc->quiet;
            f->p99_us = num_or_nan(&p->p99_us);
            f->jain = num_or_nan(&p->fairness_jain);
            f->within = num_or_nan(&p->within_slo);
            f->slo = results_str_get(&sc->slo);
            f->met = sc->slo_met.st == RESULTS_SET ? sc->slo_met.v : -1;
            continue;
        }
        double rates[MIX_MAX_FLOWS];
        int nr = 0;
        for (int k = 0; k < snap->nflows && k < m->nflows; k++) {
            const struct snap_flow *sf = &snap->flows[k];
            if (strcmp(m->flows[k].class_name, c))
                continue;
            if ((sf->valid & SNAP_V_LAT) && (isnan(f->p99_us) || sf->lat.p99 / 1e3 > f->p99_us))
                f->p99_us = sf->lat.p99 / 1e3;
            if ((sf->valid & SNAP_V_RATE) && sf->state == FLOW_ST_MEASURE)
                rates[nr++] = stream ? sf->goodput_gbps : sf->ops_per_s;
        }
        f->jain = score_jain(rates, nr);
    }
    return n;
}

static void fmt_us(char *buf, size_t len, double us)
{
    if (isnan(us))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, us < 1000 ? "%.2f" : us < 100000 ? "%.1f" : "%.0f", us);
}

int live_class_draw(struct app *a, struct ui *u, int y, int x, int w, int rows)
{
    struct class_fig f[MIX_MAX_FLOWS];
    bool res;
    int n = class_figs(a, f, &res);
    if (!n || rows < 2 || w < 20)
        return 0;
    ui_text(u, y, x, w, ROLE_DIM,
            res ? "By class (loaded, all samples merged; SLO: share within)"
                : "By class (now: the worst flow's p99; Jain over rates)");
    int used = 1;
    for (int k = 0; k < n && used < rows; k++) {
        char line[160], p[16], j[16] = "n/a", s[48] = "";
        fmt_us(p, sizeof(p), f[k].p99_us);
        if (!isnan(f[k].jain))
            snprintf(j, sizeof(j), "%.3f", f[k].jain);
        if (f[k].slo && isnan(f[k].within))
            snprintf(s, sizeof(s), "  %s n/a", f[k].slo);
        else if (f[k].slo)
            snprintf(s, sizeof(s), "  %s %.1f%%", f[k].slo, f[k].within * 100);
        snprintf(line, sizeof(line), "%-10.10s %2d fl  p99 %8s us  Jain %5s%s", f[k].name,
                 f[k].nflows, p, j, s);
        if ((size_t)w < sizeof(line))
            line[w] = '\0';
        ui_text(u, y + used, x, w,
                f[k].met == 1   ? ROLE_OK
                : f[k].met == 0 ? ROLE_WARN
                                : ROLE_NORMAL,
                line);
        used++;
    }
    return used;
}

bool live_class_brief(const struct app *a, char *buf, size_t len)
{
    struct class_fig f[MIX_MAX_FLOWS];
    bool res;
    int n = class_figs(a, f, &res);
    if (!n)
        return false;
    size_t at = (size_t)snprintf(buf, len, "%s", res ? "by class:" : "by class now:");
    for (int k = 0; k < n && at < len; k++) {
        char p[16], j[16] = "", s[32] = "";
        fmt_us(p, sizeof(p), f[k].p99_us);
        if (!isnan(f[k].jain))
            snprintf(j, sizeof(j), " J%.2f", f[k].jain);
        if (f[k].slo && !isnan(f[k].within))
            snprintf(s, sizeof(s), " slo %.1f%%", f[k].within * 100);
        at += (size_t)snprintf(buf + at, len - at, "%s %s p99 %s%s%s%s", k ? ";" : "", f[k].name, p,
                               isnan(f[k].p99_us) ? "" : "us", s, j);
    }
    return true;
}
