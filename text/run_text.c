/* run_text: the summary table printed at the end of `fabtop run`, in the perftest /
 * sockperf tradition, rendered from a results document (so saved results print alike). */
#include "text/run_text.h"
#include "text/path_text.h"
#include "text/text_units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/jsonutil.h"
#include "engine/results/results.h"

/* A typed number or -1 when it was not recorded. */
static double tnum(const struct results_num *f)
{
    double v;
    return results_num_get(f, &v) ? v : -1;
}

static void cell_val(struct strbuf *sb, bool have, double v, int width, const char *fmt)
{
    char buf[32];
    if (have)
        snprintf(buf, sizeof(buf), fmt, v);
    else
        snprintf(buf, sizeof(buf), "n/a");
    strbuf_printf(sb, " %*s", width - 1, buf);
}

/* A cell from a carried object (a transport's own figures, the simulator's results). */
static void cell(struct strbuf *sb, const cJSON *o, const char *key, int width, const char *fmt)
{
    double v = 0;
    bool have = jsonutil_num(o, key, &v);
    cell_val(sb, have, v, width, fmt);
}

static void tcell(struct strbuf *sb, const struct results_num *f, int width, const char *fmt)
{
    double v = 0;
    bool have = results_num_get(f, &v);
    cell_val(sb, have, v, width, fmt);
}

/* A latency in microseconds with as many decimals as fit the column. */
static const char *lat_fmt(bool have, double v)
{
    return !have || v < 1000 ? "%.2f" : v < 100000 ? "%.1f" : "%.0f";
}

static void lat_val(struct strbuf *sb, bool have, double v)
{
    cell_val(sb, have, v, 10, lat_fmt(have, v));
}

void run_text_lat(char *buf, size_t len, const struct results_num *f)
{
    double v = 0;
    bool have = results_num_get(f, &v);
    if (have)
        snprintf(buf, len, lat_fmt(have, v), v);
    else
        snprintf(buf, len, "n/a");
}

static void lat_cell(struct strbuf *sb, const cJSON *o, const char *key)
{
    double v = 0;
    bool have = jsonutil_num(o, key, &v);
    lat_val(sb, have, v);
}

static void lat_tcell(struct strbuf *sb, bool present, const struct results_num *f)
{
    double v = 0;
    bool have = present && results_num_get(f, &v);
    lat_val(sb, have, v);
}

/* A latency cell in the table's unit u (microseconds are formatted as they always were). */
static void lat_ucell(struct strbuf *sb, bool present, const struct results_num *f,
                      struct text_lat_unit u)
{
    double v = 0;
    bool have = present && results_num_get(f, &v);
    if (u.us == 1 || !have) {
        lat_val(sb, have, v);
        return;
    }
    char c[32];
    text_lat_in(c, sizeof(c), v, u);
    strbuf_printf(sb, " %9s", c);
}

/* The unit of a flow's latency table: the one its largest p99 reads best in. */
static struct text_lat_unit flow_lat_unit(const struct results_flow *fl)
{
    double top = 0;
    for (int p = 0; p < fl->npoints; p++) {
        const struct results_point *pt = &fl->points[p];
        double v;
        if (results_bool_true(&pt->measured) && pt->latency_st == RESULTS_SET &&
            results_num_get(&pt->latency.p99, &v) && v > top)
            top = v;
    }
    return text_lat_unit_for(top);
}

static const char *str_or(const struct results_str *f, const char *dflt)
{
    const char *s = results_str_get(f);
    return s ? s : dflt;
}

static void size_text(double b, char *buf, size_t len)
{
    if (b < 0)
        snprintf(buf, len, "mixed");
    else
        text_size(buf, len, b);
}

/* The flow's path ceiling (docs/diagnosis.md) and the goodput of its largest measured point
 * (the size the ceiling was computed for) as a percentage of it. */
static void ceiling_line(struct strbuf *sb, const struct results_flow *fl, bool other_figures,
                         bool copy)
{
    const struct results_ceiling *c = &fl->ceiling;
    if (c->st != RESULTS_SET)
        return;
    double gbps;
    const char *path = results_str_get(&c->path), *by = results_str_get(&c->narrowest);
    if (!results_num_get(&c->gbps, &gbps)) {
        strbuf_printf(sb, "    ceiling: n/a (%s: no rate or link known)\n", path ? path : "path");
        return;
    }
    strbuf_printf(sb, "    ceiling: %.2f Gb/s of payload, set by %s (%s)", gbps, by ? by : "n/a",
                  path ? path : "n/a");
    const struct results_point *best = NULL;
    for (int p = 0; p < fl->npoints; p++) {
        const struct results_point *pt = &fl->points[p];
        if (results_bool_true(&pt->measured) && pt->goodput_gbps.st == RESULTS_SET &&
            (!best || tnum(&pt->size_bytes) >= tnum(&best->size_bytes)))
            best = pt;
    }
    double pct = best && !other_figures ? results_ceiling_percent(c, best->goodput_gbps.v) : NAN;
    if (isfinite(pct)) {
        char size[16];
        size_text(tnum(&best->size_bytes), size, sizeof(size));
        strbuf_printf(sb, "; %s: %.1f%% of it", size, pct);
    }
    /* Copies: each direction's GB/s (x 8: Gb/s) at the largest point, against the ceiling of
     * one direction. */
    const struct results_point *last = NULL;
    for (int p = 0; copy && p < fl->npoints; p++)
        if (results_bool_true(&fl->points[p].measured) &&
            (!last || tnum(&fl->points[p].size_bytes) >= tnum(&last->size_bytes)))
            last = &fl->points[p];
    const cJSON *cp = last ? cJSON_GetObjectItem(last->figures, "copy") : NULL;
    static const char *const dirs[] = {"h2d_GBps", "d2h_GBps"};
    for (int k = 0; cp && k < 2; k++) {
        double v;
        if (!jsonutil_num(cp, dirs[k], &v) || !isfinite(pct = results_ceiling_percent(c, v * 8)))
            continue;
        char size[16];
        size_text(tnum(&last->size_bytes), size, sizeof(size));
        strbuf_printf(sb, "; %s %.3s: %.1f%% of it", size, dirs[k], pct);
    }
    strbuf_add(sb, "\n");
}

static void flow_table(struct strbuf *sb, const struct results_flow *fl)
{
    const char *kind = results_str_get(&fl->latency_kind), *peer = results_str_get(&fl->peer);
    strbuf_printf(sb, "  %s (%s, %s %s %s%s%s)\n", str_or(&fl->name, "n/a"),
                  str_or(&fl->role, "n/a"), str_or(&fl->transport, "n/a"), str_or(&fl->op, "n/a"),
                  str_or(&fl->direction, "n/a"), peer && *peer ? ", " : "",
                  peer && *peer ? peer : "");
    char brief[200];
    results_flow_cond_brief(&fl->cond, brief, sizeof(brief));
    if (brief[0])
        strbuf_printf(sb, "    %s\n", brief);
    const char *status = results_str_get(&fl->status);
    if (status && strcmp(status, "ok")) {
        double at = tnum(&fl->failed_at_s);
        strbuf_printf(sb, "    %s", !strcmp(status, "failed") ? "FAILED" : status);
        if (at >= 0)
            strbuf_printf(sb, " %.2f s into the phase", at);
        const char *e = results_str_get(&fl->error);
        if (e)
            strbuf_printf(sb, ": %s", e);
        double det = tnum(&fl->detected_after_last_progress_s);
        if (det >= 0)
            strbuf_printf(sb, " (declared %.2f s after the last byte moved)", det);
        strbuf_add(sb, "\n");
    }
    bool lat = kind && strcmp(kind, "none");
    /* A simulated flow's times and rates are the fabric's, in simulated time; per wall-clock
     * second they would describe this machine's speed at simulating. */
    const char *tr = results_str_get(&fl->transport);
    bool sim = tr && !strcmp(tr, "sim");
    const cJSON *simres =
        cJSON_GetObjectItem(cJSON_GetObjectItem(fl->conditions, "sim"), "results");
    /* A collective reads as nccl-tests prints it: the host-timed time per operation and the
     * algorithm and bus bandwidth (GB/s = 10^9 B/s) from it, and what NCCL chose; the loop's
     * own goodput would mislead (each operation waits on an enqueue). */
    const char *op = results_str_get(&fl->op);
    bool coll = tr && !strcmp(tr, "nccl") && op && !strcmp(op, "collective");
    /* Host<->GPU copies: GB/s per direction, as the copy engines are rated. */
    bool copy = tr && !strcmp(tr, "nccl") && op && !strcmp(op, "copy");
    struct text_lat_unit u = flow_lat_unit(fl);
    char unit_note[32];
    snprintf(unit_note, sizeof(unit_note), " (%s), ", u.abbr);
    if (sim)
        strbuf_printf(sb, "    in simulated time: %s%s%sgoodput, last completion (end)\n",
                      lat ? "latency " : "", lat ? kind : "", lat ? unit_note : "");
    else if (lat)
        strbuf_printf(sb, "    latency: %s, %s\n", kind, u.word);
    strbuf_printf(sb, "    %9s %9s", "size", "ops");
    if (lat)
        strbuf_printf(sb, " %9s %9s %9s %9s %9s %9s %9s %9s %9s", "min", "p50", "p90", "p99",
                      "p99.9", "p99.99", "max", "mean", "stdev");
    if (sim)
        strbuf_printf(sb, " %9s %10s\n", "sim Gb/s", "end us");
    else if (coll)
        strbuf_printf(sb, " %9s %9s %9s  %s\n", "time us", "alg GB/s", "bus GB/s", "algo/proto");
    else if (copy)
        strbuf_printf(sb, " %9s %9s %10s\n", "h2d GB/s", "d2h GB/s", "ops/s");
    else
        strbuf_printf(sb, " %9s %9s %10s %7s\n", "Gb/s", "wire Gb/s", "ops/s", "retrans");
    for (int p = 0; p < fl->npoints; p++) {
        const struct results_point *pt = &fl->points[p];
        if (!results_bool_true(&pt->measured))
            continue;
        char size[16];
        size_text(tnum(&pt->size_bytes), size, sizeof(size));
        strbuf_printf(sb, "    %9s", size);
        tcell(sb, &pt->ops, 10, "%.0f");
        if (lat) {
            const struct results_latency *l = &pt->latency;
            bool have = pt->latency_st == RESULTS_SET;
            /* perftest's columns too: the minimum, the mean and the standard deviation. */
            const struct results_num *v[] = {&l->min,   &l->p50, &l->p90,  &l->p99,  &l->p999,
                                             &l->p9999, &l->max, &l->mean, &l->stdev};
            for (int k = 0; k < 9; k++)
                lat_ucell(sb, have, v[k], u);
        }
        if (sim) {
            cell(sb, simres, "goodput_gbps", 10, "%.3f");
            cell(sb, simres, "completion_us", 11, "%.1f");
        } else if (copy) {
            const cJSON *c = cJSON_GetObjectItem(pt->figures, "copy");
            cell(sb, c, "h2d_GBps", 10, "%.2f");
            cell(sb, c, "d2h_GBps", 10, "%.2f");
            tcell(sb, &pt->ops_per_s, 11, "%.0f");
        } else if (coll) {
            /* bw_from says which time the bandwidths use: host-timed, else per-iteration. */
            const cJSON *nc = cJSON_GetObjectItem(pt->figures, "nccl");
            const cJSON *t = cJSON_GetObjectItem(nc, "host_timed");
            if (!cJSON_IsObject(t) || !cJSON_GetObjectItem(t, "time_us"))
                t = cJSON_GetObjectItem(nc, "per_iteration");
            lat_cell(sb, t, cJSON_GetObjectItem(t, "time_us") ? "time_us" : "mean_us");
            cell(sb, nc, "algbw_GBps", 10, "%.2f");
            cell(sb, nc, "busbw_GBps", 10, "%.2f");
            const char *al = jsonutil_str(nc, "algo"), *pr = jsonutil_str(nc, "proto");
            strbuf_printf(sb, "  %s/%s", al ? al : "n/a", pr ? pr : "n/a");
        } else {
            tcell(sb, &pt->goodput_gbps, 10, "%.3f");
            tcell(sb, &pt->wire_gbps, 10, "%.3f");
            tcell(sb, &pt->ops_per_s, 11, "%.0f");
            cell_val(sb, pt->tcp_st == RESULTS_SET && pt->tcp.retrans_segments.st == RESULTS_SET,
                     pt->tcp.retrans_segments.v, 8, "%.0f");
        }
        if (!results_bool_true(&pt->complete))
            strbuf_add(sb, "  (partial)");
        strbuf_add(sb, "\n");
        /* An emulated all-reduce (engine/flow/ring.h): what it was, and its steps. */
        const cJSON *rg = cJSON_GetObjectItem(pt->figures, "ring");
        const char *pat = jsonutil_str(rg, "pattern");
        double steps = 0, chunk = 0, sm = 0, alg = 0, bus = 0;
        if (pat && jsonutil_num(rg, "steps_per_allreduce", &steps) &&
            jsonutil_num(rg, "chunk_bytes", &chunk)) {
            strbuf_printf(sb, "      %s\n      %.0f steps of %.0f B each way", pat, steps, chunk);
            if (jsonutil_num(rg, "step_mean_us", &sm) && jsonutil_num(rg, "algbw_GBps", &alg) &&
                jsonutil_num(rg, "busbw_GBps", &bus))
                strbuf_printf(sb, ", step mean %.1f us, algbw %.3f GB/s, busbw %.3f GB/s", sm, alg,
                              bus);
            strbuf_add(sb, "\n");
        }
    }
    ceiling_line(sb, fl, sim || coll || copy, copy);
}

/* The summary's entry for a phase (the first of that name), or NULL. */
static const struct results_summary_phase *summary_phase(const struct results_summary *s,
                                                         const char *name)
{
    for (int i = 0; i < s->nphases; i++)
        if (!strcasecmp(s->phases[i].phase, name))
            return &s->phases[i];
    return NULL;
}

/* A share (0-1) as a percentage in a cell of width w. */
static void pct_tcell(struct strbuf *sb, const struct results_num *f, int w)
{
    double v = 0;
    bool have = results_num_get(f, &v);
    cell_val(sb, have, v * 100, w, v >= 0.9995 && v < 1 ? "%.2f%%" : "%.1f%%");
}

/* The scoreboard in serving terms (engine/results/score.h): per class, then per step. */
static void scoreboard_text(struct strbuf *sb, const struct results_scoreboard *b)
{
    if (b->st != RESULTS_SET)
        return;
    if (b->nclasses) {
        strbuf_add(sb, "\nScoreboard by flow class (latency in us of the class's kind, nearest "
                       "rank,\nall its flows' operations; loaded phase unless named):\n");
        strbuf_printf(sb, "  %-10s %5s %9s %9s %9s %9s %8s\n", "class", "flows", "p50", "p99",
                      "p99.9", "quiet p99", "ld/quiet");
        for (int i = 0; i < b->nclasses; i++) {
            const struct results_score_class *c = &b->classes[i];
            const struct results_score_phase *l = &c->loaded;
            strbuf_printf(sb, "  %-10.10s", c->name);
            tcell(sb, &c->flows, 6, "%.0f");
            lat_tcell(sb, l->st == RESULTS_SET, &l->p50_us);
            lat_tcell(sb, l->st == RESULTS_SET, &l->p99_us);
            lat_tcell(sb, l->st == RESULTS_SET, &l->p999_us);
            lat_tcell(sb, c->quiet.st == RESULTS_SET, &c->quiet.p99_us);
            tcell(sb, &c->p99_loaded_over_quiet, 9, "%.2f");
            strbuf_add(sb, "\n");
        }
        strbuf_printf(sb, "  %-10s %-14s %7s %4s %6s %-13s %s\n", "class", "SLO", "within", "met",
                      "Jain", "of", "latency kind");
        for (int i = 0; i < b->nclasses; i++) {
            const struct results_score_class *c = &b->classes[i];
            const struct results_score_phase *l = &c->loaded;
            const char *slo = results_str_get(&c->slo);
            strbuf_printf(sb, "  %-10.10s %-14.14s", c->name, slo ? slo : "-");
            if (slo)
                pct_tcell(sb, &l->within_slo, 8);
            else
                strbuf_printf(sb, " %7s", "-");
            strbuf_printf(sb, " %4s",
                          !slo                           ? "-"
                          : c->slo_met.st != RESULTS_SET ? "n/a"
                          : c->slo_met.v                 ? "yes"
                                                         : "NO");
            tcell(sb, &l->fairness_jain, 7, "%.3f");
            const char *of = results_str_get(&c->fairness_of);
            strbuf_printf(sb, " %-13s %s\n", of ? of : "n/a", str_or(&c->latency_kind, "n/a"));
        }
    }
    const struct results_score_step *st = &b->step;
    if (st->st != RESULTS_SET)
        return;
    strbuf_add(sb, "\nDecode step, communication on the critical path (each term's per_step\n"
                   "consecutive operations timed as one step, the terms added):\n");
    for (int i = 0; i < st->nterms; i++)
        strbuf_printf(sb, "  %s x %.0f\n", st->terms[i].flow, tnum(&st->terms[i].per_step));
    double bud;
    const char *from = results_str_get(&st->budget_from);
    if (results_num_get(&st->budget_ms, &bud))
        strbuf_printf(sb, "  step budget %.3g ms (%s)\n", bud, from ? from : "given");
    else
        strbuf_add(sb, "  no step budget (--step-budget or --target-tps)\n");
    strbuf_printf(sb, "    %-30s %9s %9s\n", "", "quiet", "loaded");
    const struct results_score_step_phase *q = &st->quiet, *l = &st->loaded;
    bool hq = q->st == RESULTS_SET, hl = l->st == RESULTS_SET;
    strbuf_printf(sb, "    %-30s", "comm p50 (us)");
    lat_tcell(sb, hq, &q->comm_p50_us);
    lat_tcell(sb, hl, &l->comm_p50_us);
    /* One term: the step's own p99; several: the terms' distributions summed, and beside it
     * each term at its own p99, summed (score.c). */
    strbuf_printf(sb, "\n    %-30s",
                  st->nterms > 1 ? "comm p99 (us, terms summed)" : "comm p99 (us)");
    lat_tcell(sb, hq, &q->comm_p99_us);
    lat_tcell(sb, hl, &l->comm_p99_us);
    if (st->nterms > 1) {
        strbuf_printf(sb, "\n    %-30s", "comm p99 upper (us, each p99)");
        lat_tcell(sb, hq, &q->comm_p99_upper_us);
        lat_tcell(sb, hl, &l->comm_p99_upper_us);
    }
    strbuf_printf(sb, "\n    %-30s", "steps measured (fewest term)");
    tcell(sb, &q->steps_measured, 10, "%.0f");
    tcell(sb, &l->steps_measured, 10, "%.0f");
    double nq = 0, nl = 0;
    bool fq = results_num_get(&q->steps_measured, &nq) && nq < 100,
         fl = results_num_get(&l->steps_measured, &nl) && nl < 100;
    strbuf_printf(sb, "\n    %-30s", "budget share p50");
    if (hq)
        pct_tcell(sb, &q->budget_share_p50, 10);
    else
        strbuf_printf(sb, " %9s", "n/a");
    if (hl)
        pct_tcell(sb, &l->budget_share_p50, 10);
    else
        strbuf_printf(sb, " %9s", "n/a");
    strbuf_printf(sb, "\n    %-30s", "budget share p99");
    if (hq)
        pct_tcell(sb, &q->budget_share_p99, 10);
    else
        strbuf_printf(sb, " %9s", "n/a");
    if (hl)
        pct_tcell(sb, &l->budget_share_p99, 10);
    else
        strbuf_printf(sb, " %9s", "n/a");
    strbuf_printf(sb, "\n    %-30s", "tokens/s bound p50 (1 sequence)");
    cell_val(sb, hq && q->tokens_per_s_p50.st == RESULTS_SET, q->tokens_per_s_p50.v, 10, "%.0f");
    cell_val(sb, hl && l->tokens_per_s_p50.st == RESULTS_SET, l->tokens_per_s_p50.v, 10, "%.0f");
    strbuf_printf(sb, "\n    %-30s", "tokens/s bound p99 (1 sequence)");
    cell_val(sb, hq && q->tokens_per_s_p99.st == RESULTS_SET, q->tokens_per_s_p99.v, 10, "%.0f");
    cell_val(sb, hl && l->tokens_per_s_p99.st == RESULTS_SET, l->tokens_per_s_p99.v, 10, "%.0f");
    strbuf_add(sb, "\n");
    if (fq || fl)
        strbuf_printf(sb,
                      "  under 100 steps (%s): their p99 is their largest, not a tail;\n"
                      "  run longer (--duration)\n",
                      fq && fl ? "quiet and loaded"
                      : fq     ? "quiet"
                               : "loaded");
}

/* Several bulk flows in one phase (incast's senders, neighbours): their total goodput and
 * Jain's fairness index, (sum x)^2 / (n sum x^2), 1 when every sender gets the same share and
 * 1/n when one takes it all (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984). Each flow's goodput
 * is its last measured point's, payload per second as the table shows it. */
static void senders_line(struct strbuf *sb, const struct results_phase *ph)
{
    int n = 0;
    double sum = 0, sumsq = 0;
    bool simulated = false;
    for (int i = 0; i < ph->nflows; i++) {
        const struct results_flow *fl = &ph->flows[i];
        const char *op = results_str_get(&fl->op);
        if (!op || strcmp(op, "stream"))
            continue;
        const struct results_point *last = NULL;
        for (int p = 0; p < fl->npoints; p++)
            if (results_bool_true(&fl->points[p].measured))
                last = &fl->points[p];
        double g;
        bool sim = false;
        if (!last || !results_point_goodput(fl, last, &g, &sim) || !(g >= 0))
            continue;
        simulated |= sim;
        n++;
        sum += g;
        sumsq += g * g;
    }
    if (n < 2)
        return;
    strbuf_printf(sb,
                  "  %d bulk flows: total %.3f Gb/s%s, Jain's fairness %.3f (1 = equal shares, "
                  "%.2f = one takes all)\n",
                  n, sum, simulated ? " (simulated time)" : "",
                  sumsq > 0 ? sum * sum / (n * sumsq) : 1.0, 1.0 / n);
}

void run_text_summary(struct strbuf *sb, const struct results_run *results)
{
    const cJSON *mix = results->mix;
    strbuf_printf(sb, "mix %s: %s\n", jsonutil_str_or(mix, "name", "n/a"),
                  jsonutil_str_or(mix, "description", ""));
    const char *started = results_str_get(&results->started_at);
    double dur = tnum(&results->duration_s);
    char took[32] = "n/a";
    if (dur >= 0)
        snprintf(took, sizeof(took), "%.1f s", dur);
    strbuf_printf(sb, "started %s, %s%s\n", started ? started : "n/a", took,
                  results_bool_true(&results->interrupted) ? ", INTERRUPTED: partial results" : "");
    for (int p = 0; p < results->nphases; p++) {
        const struct results_phase *ph = &results->phases[p];
        double pd = tnum(&ph->duration_s);
        if (pd >= 0)
            strbuf_printf(sb, "\nPhase %s (%.1f s)\n", str_or(&ph->name, "n/a"), pd);
        else
            strbuf_printf(sb, "\nPhase %s\n", str_or(&ph->name, "n/a"));
        for (int i = 0; i < ph->nflows; i++)
            flow_table(sb, &ph->flows[i]);
        senders_line(sb, ph);
    }
    const struct results_summary *sum = &results->summary;
    const struct results_summary_phase *q = summary_phase(sum, "quiet"),
                                       *l = summary_phase(sum, "loaded");
    if (q && l) {
        double qt = 0, lt = 0;
        results_num_get(&q->p99, &qt);
        results_num_get(&l->p99, &lt);
        struct text_lat_unit u = text_lat_unit_for(qt > lt ? qt : lt);
        strbuf_printf(sb, "\nQuiet vs loaded, %s (last size point, %s):\n",
                      results_str_get(&sum->foreground), u.abbr);
        strbuf_printf(sb, "    %-8s %10s %10s\n", "", "quiet", "loaded");
        static const char *const keys[] = {"p50", "p99", "p99.9", "max"};
        const struct results_num *qv[] = {&q->p50, &q->p99, &q->p999, &q->max},
                                 *lv[] = {&l->p50, &l->p99, &l->p999, &l->max};
        for (int k = 0; k < 4; k++) {
            strbuf_printf(sb, "    %-8s", keys[k]);
            lat_ucell(sb, true, qv[k], u);
            lat_ucell(sb, true, lv[k], u);
            strbuf_add(sb, "\n");
        }
        double r, qp50, lp50;
        if (results_num_get(&sum->p99_loaded_over_quiet, &r))
            strbuf_printf(sb, "    p99 loaded / quiet = %.2f\n", r);
        /* Loaded faster than quiet surprises newcomers: say what it does and does not mean
         * (on this 2-core VM's loopback: quiet p50 26 us, loaded 8 us; disabling the halt
         * idle state did not change the quiet one, so no single cause is claimed). */
        if (results_num_get(&q->p50, &qp50) && results_num_get(&l->p50, &lp50) && qp50 > 0 &&
            lp50 < 0.8 * qp50)
            strbuf_add(sb,
                       "    note: the loaded median is below the quiet one, so the path's capacity "
                       "did not set the\n    quiet median: per-message host costs (thread "
                       "wake-ups, CPU power states,\n    scheduling) can fall while neighbours "
                       "keep the host busy. Judge the neighbours\n    by the tail (p99.9, "
                       "max).\n");
    }
    scoreboard_text(sb, &results->scoreboard);
    path_text(sb, &results->path);
}
