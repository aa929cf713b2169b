/* cli_compare: `fabtop compare A.json B.json`: two saved results side by side: the verdict,
 * the test conditions that differ (with why each makes the comparison unfair), then every
 * flow and size point with p50/p99/p99.9 in microseconds, goodput in Gb/s and B/A ratios. */
#include "cli/cli.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_opts.h"
#include "common/strbuf.h"
#include "engine/results/compare.h"
#include "engine/results/results.h"

/* What the command line sets. */
struct compare_args {
    bool all, json;
    const char *out;
};

#define A(f) offsetof(struct compare_args, f)
static const struct cli_opt compare_opts[] = {
    {"all", 0, CLI_ARG_NONE, NULL, "also list the conditions that are the same", CLI_V_SET,
     .off = A(all)},
    {"json", 0, CLI_ARG_NONE, NULL, "print the comparison as one JSON document on stdout",
     CLI_V_SET, .off = A(json)},
    {"output", 'o', CLI_ARG_REQUIRED, "FILE", "also save the JSON comparison to FILE (atomically)",
     CLI_V_STRING, CLI_C_FILE, .off = A(out)},
};
#undef A

const struct cli_command cli_compare_command = {
    .name = "compare",
    .summary = "two saved results side by side: differing conditions, ratios",
    .synopsis = "Usage: fabtop compare [OPTIONS] A.json B.json\n"
                "Put two saved results side by side: which test conditions differ and why each\n"
                "makes the comparison unfair, then every flow and size point with B/A ratios.\n",
    .opts = compare_opts,
    .nopts = sizeof(compare_opts) / sizeof(compare_opts[0]),
    .epilogue = "Weights: unfair = changes the numbers by itself (MTU, link layer, sizes,\n"
                "neighbour load, ...); caution = may change them (firmware, kernel, peer, ...);\n"
                "info = recorded for context. Latency in microseconds of the flow's latency kind;\n"
                "Gb/s = 10^9 bit/s; ratios are B over A.\n"
                "Exit status: 0 comparable (or with care), 1 not like for like, 64 usage,\n"
                "65 a file is not a fabtop results file, 66 missing file.\n",
    .help_col = 22,
    .main = cli_compare_main,
};

static void metric_value(char *buf, size_t len, bool valid, double v, int m)
{
    if (!valid)
        snprintf(buf, len, "n/a");
    else if (m == COMPARE_GBPS)
        snprintf(buf, len, "%.3f", v);
    else
        snprintf(buf, len, v < 1000 ? "%.2f" : v < 100000 ? "%.1f" : "%.0f", v);
}

static void text(struct strbuf *sb, const struct compare_result *r, const char *pa, const char *pb,
                 bool all)
{
    strbuf_printf(sb, "A: %s\n   %s\nB: %s\n   %s\n\n%s\n", r->label_a, pa, r->label_b, pb,
                  r->verdict);
    int ndiff = r->ndiff[COMPARE_INFO] + r->ndiff[COMPARE_CAUTION] + r->ndiff[COMPARE_UNFAIR];
    if (ndiff)
        strbuf_printf(sb,
                      "\nConditions that differ: %d unfair (change the numbers by themselves), %d "
                      "caution (may change them), %d info\n",
                      r->ndiff[COMPARE_UNFAIR], r->ndiff[COMPARE_CAUTION], r->ndiff[COMPARE_INFO]);
    for (int s = COMPARE_UNFAIR; s >= COMPARE_INFO; s--)
        for (int i = 0; i < r->nconds; i++) {
            const struct compare_cond *c = &r->conds[i];
            if (c->severity != (enum compare_severity)s)
                continue;
            strbuf_printf(sb, "  %-7s %s: %s\n          A %s\n          B %s\n",
                          compare_severity_str(s), c->group, c->field, c->a, c->b);
            if (c->why)
                strbuf_printf(sb, "          why: %s\n", c->why);
        }
    int nsame = r->nconds - ndiff;
    if (all) {
        strbuf_printf(sb, "\nConditions that are the same (%d):\n", nsame);
        for (int i = 0; i < r->nconds; i++)
            if (r->conds[i].same)
                strbuf_printf(sb, "  %s: %s: %s\n", r->conds[i].group, r->conds[i].field,
                              r->conds[i].a);
    } else if (nsame) {
        strbuf_printf(sb, "\n%d condition%s the same (--all lists them).\n", nsame,
                      nsame == 1 ? " is" : "s are");
    }
    strbuf_add(sb, "\nOutcome (latency in microseconds of the kind named; Gb/s = 10^9 bit/s;"
                   " B/A: better or worse by 10 % or more, much worse by 2x, latency lower is"
                   " better, goodput higher)\n");
    if (r->nrows == 0)
        strbuf_add(sb, "  no measured points\n");
    for (int i = 0; i < r->nrows; i++) {
        const struct compare_row *w = &r->rows[i];
        strbuf_printf(sb, "  %s  %s  %s  (%s)%s%s%s%s\n", w->phase, w->flow, w->point,
                      w->latency_kind, w->in_a ? "" : "  B only", w->in_b ? "" : "  A only",
                      w->in_a && strcmp(w->status_a, "ok") ? "  A status " : "",
                      w->in_a && strcmp(w->status_a, "ok") ? w->status_a : "");
        if (w->in_b && strcmp(w->status_b, "ok"))
            strbuf_printf(sb, "    B status %s\n", w->status_b);
        strbuf_printf(sb, "    %-10s %12s %12s %9s\n", "", "A", "B", "B/A");
        for (int m = 0; m < COMPARE_NMETRICS; m++) {
            if (m != COMPARE_GBPS && !w->valid_a[m] && !w->valid_b[m])
                continue;
            char x[24] = "-", y[24] = "-", q[24] = "";
            if (w->in_a)
                metric_value(x, sizeof(x), w->valid_a[m], w->a[m], m);
            if (w->in_b)
                metric_value(y, sizeof(y), w->valid_b[m], w->b[m], m);
            double ratio;
            const char *word = "";
            if (compare_ratio(w, m, &ratio)) {
                snprintf(q, sizeof(q), "x%.2f", ratio);
                word = compare_change_str(compare_change_of(compare_metric_lower_better(m), ratio));
            }
            char line[128];
            const char *name =
                m == COMPARE_GBPS && (w->sim_a || w->sim_b) ? "sim Gb/s" : compare_metric_str(m);
            int n = snprintf(line, sizeof(line), "    %-10s %12s %12s %9s %s", name, x, y, q, word);
            while (n > 0 && line[n - 1] == ' ')
                line[--n] = '\0';
            strbuf_printf(sb, "%s\n", line);
        }
    }
}

/* The scoreboards' classes side by side, and which got worse. */
static void classes_text(struct strbuf *sb, const struct compare_result *r)
{
    if (!r->nclasses)
        return;
    strbuf_add(sb, "\nClasses (scoreboard, loaded phase; p99 in us of the class's kind, share "
                   "of\noperations within its SLO)\n");
    strbuf_printf(sb, "  %-10s %-12s %10s %10s %7s %8s %8s\n", "class", "SLO", "A p99", "B p99",
                  "B/A", "A within", "B within");
    for (int i = 0; i < r->nclasses; i++) {
        const struct compare_class *w = &r->classes[i];
        char pa[24] = "-", pb[24] = "-", q[16] = "", wa[16] = "-", wb[16] = "-";
        if (w->in_a)
            metric_value(pa, sizeof(pa), w->have_p99_a, w->p99_a, COMPARE_P99);
        if (w->in_b)
            metric_value(pb, sizeof(pb), w->have_p99_b, w->p99_b, COMPARE_P99);
        if (w->have_p99_a && w->have_p99_b && w->p99_a > 0)
            snprintf(q, sizeof(q), "x%.2f", w->p99_b / w->p99_a);
        if (w->have_within_a)
            snprintf(wa, sizeof(wa), "%.1f%%", w->within_a * 100);
        if (w->have_within_b)
            snprintf(wb, sizeof(wb), "%.1f%%", w->within_b * 100);
        strbuf_printf(sb, "  %-10.10s %-12.12s %10s %10s %7s %8s %8s%s\n", w->name,
                      w->slo[0] ? w->slo : "-", pa, pb, q, wa, wb, w->worse ? "  WORSE" : "");
    }
    strbuf_printf(sb, "%s\n", r->worse[0] ? r->worse : "No class got worse in B.");
}

int cli_compare_main(int argc, char **argv)
{
    struct compare_args o = {0};
    int first, prc = cli_parse_args(&cli_compare_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    bool json = o.json, all = o.all;
    const char *out = o.out;
    if (argc - first != 2)
        return cli_usage_error("compare", "needs two results files, A and B (got %d)",
                               argc - first);
    const char *pa = argv[first], *pb = argv[first + 1];
    struct ft_err err = {0};
    struct results_doc a, b;
    if (results_doc_load(pa, &a, &err) < 0)
        return cli_fail(&err);
    if (results_doc_load(pb, &b, &err) < 0) {
        results_doc_free(&a);
        return cli_fail(&err);
    }
    struct compare_result r;
    compare_runs(&a.runs[0], &b.runs[0], &r);
    results_doc_free(&a);
    results_doc_free(&b);
    int rc;
    if (json || out) {
        cJSON *doc = compare_to_json(&r);
        cJSON *files = cJSON_CreateObject();
        cJSON_AddStringToObject(files, "a", pa);
        cJSON_AddStringToObject(files, "b", pb);
        cJSON_AddItemToObject(doc, "files", files);
        rc = cli_emit_json(doc, json, out, "compare");
        cJSON_Delete(doc);
        if (rc != CLI_OK) {
            compare_free(&r);
            return rc;
        }
    }
    if (!json) {
        struct strbuf sb;
        strbuf_init(&sb);
        text(&sb, &r, pa, pb, all);
        classes_text(&sb, &r);
        fputs(sb.s, stdout);
        strbuf_free(&sb);
    }
    rc = r.worst == COMPARE_UNFAIR ? CLI_THRESHOLDS : CLI_OK;
    compare_free(&r);
    return rc;
}
