/* judge_text: references, likely causes and the baseline ratio, as lines under the run's
 * summary (docs/diagnosis.md). */
#include "text/judge_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define WRAP_COLS 80

/* One line of text (its leading spaces kept) broken at spaces so that none passes
 * WRAP_COLS; continuation lines start with indent spaces; a word longer than a line is cut. */
static void wrap(struct strbuf *sb, int indent, const char *text)
{
    int col = 0, sp = 0;
    bool first = true;
    const char *p = text;
    for (; *p == ' '; p++, col++)
        strbuf_printf(sb, " ");
    while (*p) {
        int w = (int)strcspn(p, " ");
        if (!first && col + sp + w > WRAP_COLS) {
            strbuf_printf(sb, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            strbuf_printf(sb, "%*s", sp, ""); /* the spaces as written: columns stay */
            col += sp;
        }
        while (col + w > WRAP_COLS && WRAP_COLS - col > 0) {
            int part = WRAP_COLS - col;
            strbuf_printf(sb, "%.*s\n%*s", part, p, indent, "");
            p += part;
            w -= part;
            col = indent;
        }
        strbuf_printf(sb, "%.*s", w, p);
        col += w;
        p += w;
        first = false;
        for (sp = 0; *p == ' '; p++)
            sp++;
    }
    strbuf_printf(sb, "\n");
}

/* Every line of text wrapped, continuation lines 4 deeper than the line's own indent. */
static void emit_wrapped(struct strbuf *sb, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        char line[2048];
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
        int lead = (int)strspn(line, " ");
        if (line[lead])
            wrap(sb, lead + 4, line);
        else
            strbuf_printf(sb, "\n");
        p += n;
        if (*p == '\n')
            p++;
    }
}

static const char *s_or(const struct results_str *s, const char *dflt)
{
    const char *v = results_str_get(s);
    return v ? v : dflt;
}

static void references(struct strbuf *sb, const struct results_ref_matches *m)
{
    if (m->st != RESULTS_SET || m->n == 0)
        return;
    strbuf_printf(sb, "\nreference table (topology/refs/reference.json):\n");
    for (int i = 0; i < m->n; i++) {
        const struct results_ref_match *e = &m->v[i];
        double v = 0, pct = NAN, tol, meas;
        const char *unit = s_or(&e->unit, ""), *verdict = results_str_get(&e->verdict);
        results_num_get(&e->value, &v);
        results_num_get(&e->percent, &pct);
        strbuf_printf(sb, "  %s (%s): ", s_or(&e->flow, "?"), s_or(&e->phase, "?"));
        if (results_num_get(&e->measured, &meas))
            strbuf_printf(sb, "%s %.4g %s", s_or(&e->figure, "figure"), meas, unit);
        else
            strbuf_printf(sb, "%s", s_or(&e->figure, "goodput"));
        if (isfinite(pct))
            strbuf_printf(sb, " = %.1f%% of", pct);
        else
            strbuf_printf(sb, " beside");
        strbuf_printf(sb, " %s %s %s %g %s (%s direction%s)", s_or(&e->part, "?"),
                      s_or(&e->metric, "?"), s_or(&e->kind, "?"), v, unit, s_or(&e->direction, "?"),
                      !strcmp(s_or(&e->direction, ""), "both") ? "s summed" : "");
        if (results_num_get(&e->tolerance_pct, &tol)) {
            double line = v * (1 - tol / 100);
            if (verdict)
                strbuf_printf(sb, ": %s",
                              !strcmp(verdict, "pass") ? "PASSES" : "BELOW the pass line");
            strbuf_printf(sb, " (at or above %.4g %s: %s)", line, unit,
                          s_or(&e->tolerance_basis, "tolerance basis not recorded"));
        }
        if (results_str_get(&e->differs))
            strbuf_printf(sb, "; not judged: %s", results_str_get(&e->differs));
        strbuf_printf(sb, "\n    row %s, under: %s\n    source: %s%s%s\n", s_or(&e->id, "?"),
                      s_or(&e->conditions, "n/a"), s_or(&e->document, "n/a"),
                      results_str_get(&e->url) ? ", " : "", s_or(&e->url, ""));
    }
}

static void evidence(struct strbuf *sb, const struct results_cause *c)
{
    strbuf_printf(sb, "     evidence:");
    for (int k = 0; k < c->nev; k++) {
        const struct results_cause_ev *e = &c->ev[k];
        double v;
        strbuf_printf(sb, "%s %s ", k ? "," : "", s_or(&e->name, "?"));
        if (results_num_get(&e->value, &v))
            strbuf_printf(sb, v == floor(v) && fabs(v) < 1e15 ? "%.0f %s" : "%.4g %s", v,
                          s_or(&e->unit, ""));
        else
            strbuf_printf(sb, "%s", s_or(&e->text, "n/a"));
    }
    strbuf_printf(sb, "\n");
}

static void summary(struct strbuf *sb, const struct results_run *run)
{
    references(sb, &run->references);
    const struct results_causes *c = &run->causes;
    if (c->st != RESULTS_SET)
        return;
    if (c->n == 0) {
        strbuf_printf(sb, "\nlikely causes: none found (bandwidth figures at or above 80%% of "
                          "their ceilings, or no rule holds)\n");
        return;
    }
    strbuf_printf(sb, "\nlikely causes, most likely first (a bandwidth figure under 80%% of its "
                      "ceiling, or with no ceiling known; docs/diagnosis.md):\n");
    for (int i = 0; i < c->n; i++) {
        const struct results_cause *e = &c->v[i];
        double pct;
        char of[48] = "ceiling n/a";
        if (results_num_get(&e->percent_of_ceiling, &pct))
            snprintf(of, sizeof(of), "%.1f%% of ceiling", pct);
        strbuf_printf(sb, "  %d. [%s] %s (%s %s, %s): %s\n", i + 1, s_or(&e->rule, "?"),
                      s_or(&e->flow, "?"), s_or(&e->phase, "?"), s_or(&e->figure, "?"), of,
                      s_or(&e->message, ""));
        strbuf_printf(sb, "     fix: %s\n", s_or(&e->fix, "n/a"));
        evidence(sb, e);
    }
}

static void baseline(struct strbuf *sb, const char *name, const struct compare_result *cr)
{
    strbuf_printf(sb, "\nagainst baseline %s (%s):\n", name, cr->label_a);
    int shown = 0;
    for (int i = 0; i < cr->nrows; i++) {
        const struct compare_row *r = &cr->rows[i];
        if (!r->in_a || !r->in_b)
            continue;
        strbuf_printf(sb, "  %-8s %-16s %-10s", r->phase, r->flow, r->point);
        for (int m = 0; m < COMPARE_NMETRICS; m++) {
            double ratio;
            if (compare_ratio(r, m, &ratio))
                strbuf_printf(sb, "  %s x%.2f", compare_metric_str(m), ratio);
        }
        strbuf_printf(sb, "\n");
        shown++;
    }
    if (!shown)
        strbuf_printf(sb, "  no flow and size point in both: nothing to set side by side\n");
    strbuf_printf(sb, "  (ratios are this run over the baseline; for latency lower is better)\n");
    int unfair = 0;
    for (int i = 0; i < cr->nconds; i++) {
        const struct compare_cond *k = &cr->conds[i];
        if (k->severity < COMPARE_CAUTION)
            continue;
        if (!unfair++)
            strbuf_printf(sb, "  conditions that differ:\n");
        strbuf_printf(sb, "    %s: %s %s: %s (baseline) vs %s (this run): %s\n",
                      k->severity == COMPARE_UNFAIR ? "unfair" : "caution", k->group, k->field,
                      k->a, k->b, k->why ? k->why : "");
    }
    strbuf_printf(sb, "  %s\n", cr->verdict);
}

void judge_text_summary(struct strbuf *sb, const struct results_run *run)
{
    struct strbuf t;
    strbuf_init(&t);
    summary(&t, run);
    if (t.s)
        emit_wrapped(sb, t.s);
    strbuf_free(&t);
}

void judge_text_baseline(struct strbuf *sb, const char *name, const struct compare_result *cr)
{
    struct strbuf t;
    strbuf_init(&t);
    baseline(&t, name, cr);
    if (t.s)
        emit_wrapped(sb, t.s);
    strbuf_free(&t);
}
