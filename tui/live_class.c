/* live_class: the live view's lines by flow class under the percentile table (the
 * scoreboard, engine/results/score.h, in short): per class its flows, p99 in microseconds,
 * Jain's index over its flows and, after the run, the share within its --slo bound. While
 * the run goes the p99 is the worst flow's and Jain's index is over the last interval's
 * rates; after it, the results' scoreboard (all the class's samples merged, loaded phase). */
#include "tui/live_pane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/results/score.h"

/* One class's line, at most w columns: "tp     2 fl  p99   40.21 us  Jain 0.998  ..." */
static void class_line(char *buf, size_t len, int w, const char *name, int nflows, double p99_us,
                       double jain, const char *slo, double within)
{
    char p[16] = "n/a", j[16] = "n/a", s[48] = "";
    if (!isnan(p99_us))
        snprintf(p, sizeof(p), p99_us < 1000 ? "%.2f" : p99_us < 100000 ? "%.1f" : "%.0f", p99_us);
    if (!isnan(jain))
        snprintf(j, sizeof(j), "%.3f", jain);
    if (slo && slo[0]) {
        if (isnan(within))
            snprintf(s, sizeof(s), "  %s n/a", slo);
        else
            snprintf(s, sizeof(s), "  %s %.1f%%", slo, within * 100);
    }
    snprintf(buf, len, "%-7.7s %2d fl  p99 %8s us  Jain %5s%s", name, nflows, p, j, s);
    if (w >= 0 && (size_t)w < len)
        buf[w] = '\0';
}

static double num_or_nan(const struct results_num *f)
{
    double v;
    return results_num_get(f, &v) ? v : NAN;
}

int live_class_draw(struct app *a, struct ui *u, int y, int x, int w, int rows)
{
    const struct runner_snapshot *snap = a->snap;
    if (!snap || !a->have_run_mix || rows < 2 || w < 20)
        return 0;
    const struct mix *m = &a->run_mix;
    const struct results_run *res = app_results_run(a);
    const struct results_scoreboard *sb =
        res && res->scoreboard.st == RESULTS_SET ? &res->scoreboard : NULL;
    const char *cls[MIX_MAX_FLOWS];
    int ncls = 0;
    for (int i = 0; i < m->nflows; i++) {
        const char *c = m->flows[i].class_name;
        bool seen = !*c;
        for (int k = 0; k < ncls && !seen; k++)
            seen = !strcmp(cls[k], c);
        if (!seen)
            cls[ncls++] = c;
    }
    if (!ncls)
        return 0;
    ui_text(u, y, x, w, ROLE_DIM,
            sb ? "By class (loaded, all samples merged; SLO: share within)"
               : "By class (now: the worst flow's p99; Jain over rates)");
    int used = 1;
    for (int k = 0; k < ncls && used < rows; k++) {
        char line[160];
        int nflows = 0;
        for (int i = 0; i < m->nflows; i++)
            nflows += !strcmp(m->flows[i].class_name, cls[k]);
        const struct results_score_class *c = NULL;
        for (int i = 0; sb && i < sb->nclasses && !c; i++)
            if (!strcmp(sb->classes[i].name, cls[k]))
                c = &sb->classes[i];
        enum theme_role role = ROLE_NORMAL;
        if (c) {
            const struct results_score_phase *f =
                c->loaded.st == RESULTS_SET ? &c->loaded : &c->quiet;
            class_line(line, sizeof(line), w, cls[k], nflows, num_or_nan(&f->p99_us),
                       num_or_nan(&f->fairness_jain), results_str_get(&c->slo),
                       num_or_nan(&f->within_slo));
            if (c->slo_met.st == RESULTS_SET)
                role = c->slo_met.v ? ROLE_OK : ROLE_WARN;
        } else {
            double worst = NAN, rates[MIX_MAX_FLOWS];
            int nr = 0;
            bool stream = true;
            for (int i = 0; i < snap->nflows && i < m->nflows; i++) {
                if (strcmp(m->flows[i].class_name, cls[k]))
                    continue;
                stream &= m->flows[i].op == MIX_OP_STREAM;
            }
            for (int i = 0; i < snap->nflows && i < m->nflows; i++) {
                const struct snap_flow *f = &snap->flows[i];
                if (strcmp(m->flows[i].class_name, cls[k]))
                    continue;
                if ((f->valid & SNAP_V_LAT) && (isnan(worst) || f->lat.p99 / 1e3 > worst))
                    worst = f->lat.p99 / 1e3;
                if ((f->valid & SNAP_V_RATE) && f->state == FLOW_ST_MEASURE)
                    rates[nr++] = stream ? f->goodput_gbps : f->ops_per_s;
            }
            class_line(line, sizeof(line), w, cls[k], nflows, worst, score_jain(rates, nr), NULL,
                       NAN);
        }
        ui_text(u, y + used, x, w, role, line);
        used++;
    }
    return used;
}
