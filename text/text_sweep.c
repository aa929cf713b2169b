/* text_sweep: a rack sweep's document as plain text (text_sweep.h). The heat map's cells are
 * the ratio of a pair's figure to the rack's median of that metric, shaded by how far worse
 * it is; a rank with a bad NIC or cable shows as a row and a column of worse shades. */
#include "text/text_sweep.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define MAX_RANKS 8192 /* the most ranks a heat map is drawn for (its grid is ranks^2) */
#define LABEL_W   20   /* "%4d %-14.14s ": a row's rank and host */
#define HOST_W    14

/* The shades, from near the rack's median to far worse: goodness is the cell's figure over
 * the median for bandwidth, the median over the figure for latency. */
static const struct {
    double min; /* goodness at least this */
    char c;
} shades[] = {{0.9, '#'}, {0.75, '+'}, {0.5, '-'}, {0, '.'}};
#define SHADE_FAILED   'X'
#define SHADE_MISSING  '?'
#define SHADE_DIAGONAL '\\'

enum cell { CELL_NONE, CELL_VAL, CELL_FAILED };

/* The metric's figures of every ordered pair of ranks: v[a * n + b]. */
struct grid {
    int n;
    double *v;
    unsigned char *st;
    const char *kind; /* the pairs' latency kind ("half_round_trip"), or NULL */
};

static bool higher_worse(enum text_sweep_metric m)
{
    return m != TEXT_SWEEP_BW;
}

static const struct results_num *lat_of(const struct results_sweep_pair *p,
                                        enum text_sweep_metric m)
{
    return m == TEXT_SWEEP_LAT_P99 ? &p->lat_p99_us : &p->lat_p50_us;
}

/* A cell takes a failure over a figure, and its worst figure over several rails. */
static void cell_put(struct grid *g, int a, int b, const struct results_num *f, bool failed,
                     bool hw)
{
    size_t k = (size_t)a * (size_t)g->n + (size_t)b;
    if (failed || g->st[k] == CELL_FAILED) {
        g->st[k] = CELL_FAILED;
        return;
    }
    if (f->st != RESULTS_SET)
        return;
    if (g->st[k] != CELL_VAL || (hw ? f->v > g->v[k] : f->v < g->v[k]))
        g->v[k] = f->v;
    g->st[k] = CELL_VAL;
}

static void grid_build(const struct results_sweep *s, enum text_sweep_metric m, int rail,
                       const char *transport, struct grid *g)
{
    int n = s->nranks > 0 ? s->nranks : 0;
    g->n = n;
    g->v = xalloc_zero((size_t)n * (size_t)n + 1, sizeof(*g->v));
    g->st = xalloc_zero((size_t)n * (size_t)n + 1, 1);
    g->kind = NULL;
    for (int i = 0; i < s->npairs; i++) {
        const struct results_sweep_pair *p = &s->pairs[i];
        if ((rail >= 0 && p->rail != rail) || p->a < 0 || p->b < 0 || p->a >= n || p->b >= n ||
            p->a == p->b || strcmp(results_sweep_transport(&p->transport), transport))
            continue;
        bool failed = results_bool_true(&p->failed), hw = higher_worse(m);
        if (m == TEXT_SWEEP_BW) {
            cell_put(g, p->a, p->b, &p->bw_ab_gbps, failed, hw);
            cell_put(g, p->b, p->a, &p->bw_ba_gbps, failed, hw);
        } else {
            cell_put(g, p->a, p->b, lat_of(p, m), failed, hw);
            cell_put(g, p->b, p->a, lat_of(p, m), failed, hw);
        }
        if (!g->kind)
            g->kind = results_str_get(&p->latency_kind);
    }
}

static void grid_free(struct grid *g)
{
    free(g->v);
    free(g->st);
}

/* The median of the grid's figures; *count: how many. */
static bool grid_median(const struct grid *g, double *med, int *count)
{
    double *v = xalloc_zero((size_t)g->n * (size_t)g->n + 1, sizeof(*v));
    int k = 0;
    for (int i = 0; i < g->n * g->n; i++)
        if (g->st[i] == CELL_VAL)
            v[k++] = g->v[i];
    *count = k;
    bool ok = results_sweep_median(v, k, med);
    free(v);
    return ok;
}

static double goodness(double v, double med, bool hw)
{
    if (hw)
        return v > 0 ? med / v : 1e9;
    return med > 0 ? v / med : 0;
}

static char shade(const struct grid *g, int a, int b, bool have_med, double med, bool hw)
{
    size_t k = (size_t)a * (size_t)g->n + (size_t)b;
    if (a == b)
        return SHADE_DIAGONAL;
    if (g->st[k] == CELL_FAILED)
        return SHADE_FAILED;
    if (g->st[k] != CELL_VAL || !have_med || med <= 0)
        return SHADE_MISSING;
    double q = goodness(g->v[k], med, hw);
    for (size_t i = 0; i < sizeof(shades) / sizeof(shades[0]); i++)
        if (q >= shades[i].min)
            return shades[i].c;
    return shades[sizeof(shades) / sizeof(shades[0]) - 1].c;
}

/* Bandwidth in Gb/s, or in Mb/s (mbps) for a rack slower than 1 Gb/s. */
static void fmt_bw(char *buf, size_t len, double gbps, bool mbps)
{
    if (mbps)
        snprintf(buf, len, "%.1f Mb/s", gbps * 1000);
    else
        snprintf(buf, len, "%.1f Gb/s", gbps);
}

static void fmt_us(char *buf, size_t len, double us)
{
    snprintf(buf, len, us >= 10 || us <= -10 ? "%.0f us" : "%.1f us", us);
}

static void fmt_value(char *buf, size_t len, enum text_sweep_metric m, double v, bool mbps)
{
    if (m == TEXT_SWEEP_BW)
        fmt_bw(buf, len, v, mbps);
    else
        fmt_us(buf, len, v);
}

/* "half_round_trip" as "half round trip". */
static void fmt_kind(char *buf, size_t len, const char *kind)
{
    snprintf(buf, len, "%s", kind ? kind : "kind n/a");
    for (char *c = buf; *c; c++)
        if (*c == '_')
            *c = ' ';
}

static const char *host_of(const struct results_sweep *s, int i)
{
    return i >= 0 && i < s->nranks && s->ranks[i].host ? s->ranks[i].host : "?";
}

/* The host of a rank index held as a number (a verdict's rank or peer). */
static const char *host_at(const struct results_sweep *s, double i)
{
    return i >= 0 && i < s->nranks ? host_of(s, (int)i) : "?";
}

static int rank_of(const struct results_sweep *s, int i)
{
    return i >= 0 && i < s->nranks ? s->ranks[i].rank : i;
}

/* Print line without its trailing blanks. */
static void put_line(FILE *f, char *line)
{
    size_t n = strlen(line);
    while (n && line[n - 1] == ' ')
        line[--n] = '\0';
    fprintf(f, "%s\n", line);
}

/* The column header: one line per digit of the largest rank number, "a \ b" on the last. */
static void matrix_header(FILE *f, const struct results_sweep *s, int n)
{
    int maxr = 0, ndig = 1;
    for (int j = 0; j < n; j++)
        if (rank_of(s, j) > maxr)
            maxr = rank_of(s, j);
    for (long long p = 10; maxr >= p && ndig < 10; p *= 10)
        ndig++;
    char *line = xalloc((size_t)LABEL_W + 2 * (size_t)n + 2);
    for (int d = ndig - 1; d >= 0; d--) {
        int div = 1;
        for (int i = 0; i < d; i++)
            div *= 10;
        snprintf(line, LABEL_W + 1, "%-*s", LABEL_W, d == 0 ? "   a \\ b" : "");
        char *c = line + LABEL_W;
        for (int j = 0; j < n; j++) {
            int r = rank_of(s, j) > 0 ? rank_of(s, j) : 0;
            *c++ = r >= div || d == 0 ? (char)('0' + (r / div) % 10) : ' ';
            *c++ = ' ';
        }
        *c = '\0';
        put_line(f, line);
    }
    free(line);
}

static void matrix(FILE *f, const struct results_sweep *s, const struct grid *g, bool have_med,
                   double med, bool hw)
{
    int n = g->n;
    matrix_header(f, s, n);
    char *line = xalloc((size_t)LABEL_W + 2 * (size_t)n + 2);
    for (int a = 0; a < n; a++) {
        snprintf(line, LABEL_W + 1, "%4d %-*.*s ", rank_of(s, a), HOST_W, HOST_W, host_of(s, a));
        char *c = line + strlen(line);
        for (int b = 0; b < n; b++) {
            *c++ = shade(g, a, b, have_med, med, hw);
            *c++ = ' ';
        }
        *c = '\0';
        put_line(f, line);
    }
    free(line);
}

/* One line per rank: its pairs (peers with a figure or a failure), the median of its figures'
 * ratios to the rack's median, its worst peer with the ratio and figure, its failed pairs. */
static void per_rank(FILE *f, const struct results_sweep *s, const struct grid *g,
                     enum text_sweep_metric m, bool have_med, double med, bool mbps, int width)
{
    int n = g->n;
    bool hw = higher_worse(m);
    fprintf(f,
            "  %d ranks do not fit a matrix in %d columns: one line per rank, its figures\n"
            "  over the rack's median (its median and its worst peer)\n",
            n, width);
    double *r = xalloc_zero(2 * (size_t)n + 1, sizeof(*r));
    for (int i = 0; i < n; i++) {
        int npairs = 0, nfailed = 0, k = 0, worst = -1;
        double worst_q = 0, worst_v = 0;
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            unsigned char st[2] = {g->st[(size_t)i * n + j], g->st[(size_t)j * n + i]};
            double v[2] = {g->v[(size_t)i * n + j], g->v[(size_t)j * n + i]};
            npairs += st[0] != CELL_NONE || st[1] != CELL_NONE;
            nfailed += st[0] == CELL_FAILED || st[1] == CELL_FAILED;
            for (int d = 0; d < 2; d++) {
                if (st[d] != CELL_VAL || !have_med || med <= 0)
                    continue;
                r[k++] = v[d] / med;
                double q = goodness(v[d], med, hw);
                if (worst < 0 || q < worst_q) {
                    worst = j;
                    worst_q = q;
                    worst_v = v[d];
                }
            }
        }
        char head[64], failed[32] = "", line[512];
        snprintf(head, sizeof(head), "%4d %-*.*s %3d %s", rank_of(s, i), HOST_W, HOST_W,
                 host_of(s, i), npairs, npairs == 1 ? "pair" : "pairs");
        if (nfailed)
            snprintf(failed, sizeof(failed), ", %d failed", nfailed);
        double rm;
        if (!results_sweep_median(r, k, &rm)) {
            fprintf(f, "%s%s, none measured\n", head, failed);
            continue;
        }
        /* All of it when it fits; else without the worst figure; else the worst peer's host
         * cut to what is left of the width. */
        char val[32], tail[48];
        fmt_value(val, sizeof(val), m, worst_v, mbps);
        snprintf(tail, sizeof(tail), " (%s)", val);
        int hostw = HOST_W;
        for (int tries = 0; tries < 3; tries++) {
            int n2 = snprintf(line, sizeof(line), "%s%s, median %.2fx, worst %d %.*s %.2fx%s", head,
                              failed, rm, rank_of(s, worst), hostw, host_of(s, worst),
                              worst_v / med, tail);
            if (n2 <= width)
                break;
            if (tries == 0) {
                tail[0] = '\0';
            } else {
                int h = (int)strlen(host_of(s, worst));
                hostw = (h < hostw ? h : hostw) - (n2 - width);
                hostw = hostw > 0 ? hostw : 0;
            }
        }
        put_line(f, line);
    }
    free(r);
}

void text_sweep_heatmap(FILE *f, const struct results_sweep *s, enum text_sweep_metric m, int rail,
                        const char *transport, int width)
{
    if (!transport)
        transport = "tcp";
    if (s->nranks > MAX_RANKS) {
        fprintf(f, "%s: %d ranks, more than a heat map is drawn for (%d)\n",
                m == TEXT_SWEEP_BW ? "bandwidth a->b" : "latency", s->nranks, MAX_RANKS);
        return;
    }
    struct grid g;
    grid_build(s, m, rail, transport, &g);
    bool hw = higher_worse(m);
    double med = 0;
    int count = 0;
    bool have = grid_median(&g, &med, &count);
    bool mbps = m == TEXT_SWEEP_BW && have && med < 1;
    char what[96], where[48], medbuf[32];
    /* TCP's maps read as they always have; the others say whose they are. */
    bool tcp = !strcmp(transport, "tcp"), nccl = !strcmp(transport, "nccl");
    char who[24] = "";
    if (!tcp)
        snprintf(who, sizeof(who), "%s ", transport);
    if (m == TEXT_SWEEP_BW) {
        snprintf(what, sizeof(what), "%sbandwidth %s", who,
                 nccl ? "a<->b (sendrecv algbw, both ways at once)" : "a->b");
    } else {
        char kind[48];
        fmt_kind(kind, sizeof(kind), g.kind);
        snprintf(what, sizeof(what), "%slatency %s (%s)", who,
                 m == TEXT_SWEEP_LAT_P99 ? "p99" : "p50", kind);
    }
    if (rail >= 0)
        snprintf(where, sizeof(where), ", rail %d", rail);
    else
        snprintf(where, sizeof(where), ", every rail (a cell's worst)");
    if (g.n == 0) {
        fprintf(f, "%s%s: no ranks\n", what, where);
        grid_free(&g);
        return;
    }
    if (have)
        fmt_value(medbuf, sizeof(medbuf), m, med, mbps);
    if (!have)
        fprintf(f, "%s%s: no pair measured (%d ranks)\n", what, where, g.n);
    else if (m == TEXT_SWEEP_BW)
        fprintf(f, "%s (row a to column b)%s: median %s of %d figures\n", what, where, medbuf,
                count);
    else
        fprintf(f, "%s%s: median %s of %d pairs\n", what, where, medbuf, count / 2);
    if (hw)
        fprintf(f,
                "  # <=1.11x median  + 1.11-1.33x  - 1.33-2x  . >2x  X failed  ? not measured\n");
    else
        fprintf(f,
                "  # >=0.9x median  + 0.75-0.9x  - 0.5-0.75x  . <0.5x  X failed  ? not measured\n");
    if (LABEL_W + 2 * g.n - 1 <= width)
        matrix(f, s, &g, have, med, hw);
    else
        per_rank(f, s, &g, m, have, med, mbps, width);
    grid_free(&g);
}

/* ---- verdicts ---- */

static void fmt_qty(char *buf, size_t len, const struct results_sweep_qty *q)
{
    const char *unit = results_str_get(&q->unit);
    if (q->value.st != RESULTS_SET)
        snprintf(buf, len, "n/a");
    else if (unit && !strcmp(unit, "x"))
        snprintf(buf, len, "%.2fx", q->value.v);
    else
        snprintf(buf, len, "%.3g %s", q->value.v, unit ? unit : "(no unit)");
}

static void verdict_line(FILE *f, const struct results_sweep *s,
                         const struct results_sweep_verdict *v)
{
    char state[16], subj[160], rail[24] = "", msg[160];
    snprintf(state, sizeof(state), "%s", v->state ? v->state : "verdict");
    for (char *c = state; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    const char *ga = results_str_get(&v->group_a), *gb = results_str_get(&v->group_b);
    if (v->rank.st == RESULTS_SET && v->peer.st == RESULTS_SET)
        snprintf(subj, sizeof(subj), "%s -> %s", host_at(s, v->rank.v), host_at(s, v->peer.v));
    else if (v->rank.st == RESULTS_SET)
        snprintf(subj, sizeof(subj), "%s", host_at(s, v->rank.v));
    else if (ga && gb)
        snprintf(subj, sizeof(subj), "%s <-> %s", ga, gb);
    else
        snprintf(subj, sizeof(subj), "%s", ga ? ga : "the rack");
    if (v->rail.st == RESULTS_SET)
        snprintf(rail, sizeof(rail), ", rail %.0f", v->rail.v);
    const char *text = v->message;
    if (!text) {
        char o[48], r[48], q[48];
        fmt_qty(o, sizeof(o), &v->observed);
        fmt_qty(r, sizeof(r), &v->reference);
        fmt_qty(q, sizeof(q), &v->ratio);
        snprintf(msg, sizeof(msg), "observed %s against %s (%s)", o, r, q);
        text = msg;
    }
    fprintf(f, "%-7s %s [%s %s%s]: %s\n", state, subj, v->kind ? v->kind : "verdict",
            v->metric ? v->metric : "n/a", rail, text);
}

void text_sweep_verdicts(FILE *f, const struct results_sweep *s)
{
    if (s->nverdicts == 0) {
        fputs("no verdicts: every pair within the rack's distribution\n", f);
        return;
    }
    for (int i = 0; i < s->nverdicts; i++)
        verdict_line(f, s, &s->verdicts[i]);
}

/* ---- the summary line ---- */

struct out {
    char *buf;
    size_t len, at;
};

static void add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct out *o, const char *fmt, ...)
{
    if (o->at + 1 >= o->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->at = o->at + (size_t)n < o->len ? o->at + (size_t)n : o->len - 1;
}

/* The distinct rails of the pairs, sorted (rails holds npairs + 1). */
static int rails_of(const struct results_sweep *s, int *rails)
{
    int n = 0;
    for (int i = 0; i < s->npairs; i++) {
        int r = s->pairs[i].rail, k = 0;
        while (k < n && rails[k] < r)
            k++;
        if (k < n && rails[k] == r)
            continue;
        memmove(rails + k + 1, rails + k, (size_t)(n - k) * sizeof(*rails));
        rails[k] = r;
        n++;
    }
    return n;
}

static bool rank_failed(const struct results_sweep_rank *r)
{
    const char *st = results_str_get(&r->status);
    return st && !strcmp(st, "failed");
}

void text_sweep_summary(const struct results_sweep *s, char *buf, size_t len)
{
    if (!len)
        return;
    struct out o = {buf, len, 0};
    buf[0] = '\0';
    int *rails = xalloc_zero((size_t)s->npairs + 1, sizeof(*rails));
    int nrails = rails_of(s, rails), ntcp = 0;
    free(rails);
    for (int i = 0; i < s->npairs; i++)
        ntcp += !strcmp(results_sweep_transport(&s->pairs[i].transport), "tcp");
    long n = s->nranks, planned = n * (n - 1) / 2 * (nrails > 1 ? nrails : 1);
    if (planned < ntcp)
        planned = ntcp;
    int measured = 0, failed = 0, nbw = 0, nlat = 0, rfailed = 0, named = 0, suspect = 0;
    double *bw = xalloc_zero(2 * (size_t)s->npairs + 1, sizeof(*bw));
    double *lat = xalloc_zero((size_t)s->npairs + 1, sizeof(*lat));
    int nother[2] = {0, 0}, nobw[2] = {0, 0};
    double *obw[2] = {xalloc_zero((size_t)s->npairs + 1, sizeof(double)),
                      xalloc_zero((size_t)s->npairs + 1, sizeof(double))};
    for (int i = 0; i < s->npairs; i++) {
        const struct results_sweep_pair *p = &s->pairs[i];
        const char *x = results_sweep_transport(&p->transport);
        if (strcmp(x, "tcp")) {
            /* Verbs and NCCL: their count and bandwidth median, after TCP's figures. */
            int k = !strcmp(x, "nccl");
            nother[k]++;
            if (!results_bool_true(&p->failed) && p->bw_ab_gbps.st == RESULTS_SET)
                obw[k][nobw[k]++] = p->bw_ab_gbps.v;
            continue;
        }
        if (results_bool_true(&p->failed)) {
            failed++;
            continue;
        }
        bool any = false;
        const struct results_num *b[2] = {&p->bw_ab_gbps, &p->bw_ba_gbps};
        for (int d = 0; d < 2; d++)
            if (b[d]->st == RESULTS_SET)
                bw[nbw++] = b[d]->v, any = true;
        if (p->lat_p50_us.st == RESULTS_SET)
            lat[nlat++] = p->lat_p50_us.v, any = true;
        measured += any;
    }
    for (int i = 0; i < s->nranks; i++)
        rfailed += rank_failed(&s->ranks[i]);
    bool pairs = s->npairs > 0 || s->npatterns == 0;
    for (int i = 0; i < s->npatterns && !pairs; i++)
        pairs = !strcmp(s->patterns[i], "pairs");
    if (pairs)
        add(&o, "fabtop sweep %d %s: %d/%ld pairs measured", s->nranks,
            s->nranks == 1 ? "rank" : "ranks", measured, planned);
    else /* incast, bisection, ring alone: their figures are in the events */
        add(&o, "fabtop sweep %d %s: no pairs pattern", s->nranks,
            s->nranks == 1 ? "rank" : "ranks");
    if (failed)
        add(&o, ", %d failed", failed);
    if (rfailed)
        add(&o, ", %d %s failed", rfailed, rfailed == 1 ? "rank" : "ranks");
    double med;
    char v[32];
    if (results_sweep_median(bw, nbw, &med)) {
        fmt_bw(v, sizeof(v), med, med < 1);
        add(&o, ", bandwidth median %s", v);
    } else {
        add(&o, ", bandwidth n/a");
    }
    if (results_sweep_median(lat, nlat, &med)) {
        fmt_us(v, sizeof(v), med);
        add(&o, ", latency p50 median %s", v);
    } else {
        add(&o, ", latency p50 n/a");
    }
    free(bw);
    free(lat);
    for (int k = 0; k < 2; k++) {
        if (nother[k]) {
            add(&o, "; %s %d pairs", k ? "nccl" : "verbs", nother[k]);
            if (results_sweep_median(obw[k], nobw[k], &med)) {
                fmt_bw(v, sizeof(v), med, med < 1);
                add(&o, ", bandwidth median %s", v);
            }
        }
        free(obw[k]);
    }
    const char *first = NULL;
    for (int i = 0; i < s->nverdicts; i++) {
        const char *st = s->verdicts[i].state;
        if (st && !strcmp(st, "named") && !named++)
            first = s->verdicts[i].message;
        suspect += st && !strcmp(st, "suspect");
    }
    if (named) {
        /* The first named verdict's message up to its details in parentheses. */
        const char *paren = first ? strstr(first, " (") : NULL;
        int w = first ? (paren ? (int)(paren - first) : (int)strlen(first)) : 3;
        add(&o, "; %d named: %.*s", named, w, first ? first : "n/a");
        if (named > 1)
            add(&o, " (and %d more)", named - 1);
    }
    if (suspect)
        add(&o, "; %d suspect", suspect);
    if (!named && !suspect)
        add(&o, "; nothing named");
    const char *st = results_str_get(&s->status);
    add(&o, "; status %s", st ? st : "n/a");
}

/* ---- the report ---- */

static void fmt_num(char *buf, size_t len, const struct results_num *n, const char *unit)
{
    if (n->st == RESULTS_SET)
        snprintf(buf, len, "%.1f %s", n->v, unit);
    else
        snprintf(buf, len, "n/a");
}

static const char *str_or(const struct results_str *f, const char *dflt)
{
    const char *s = results_str_get(f);
    return s ? s : dflt;
}

static void report_header(FILE *f, const struct results_sweep *s)
{
    char pat[256] = "", planned[16] = "n/a", done[16] = "n/a", dur[32], tdur[32];
    struct out o = {pat, sizeof(pat), 0};
    for (int i = 0; i < s->npatterns; i++)
        add(&o, "%s%s", i ? "," : "", s->patterns[i]);
    if (s->rounds_planned.st == RESULTS_SET)
        snprintf(planned, sizeof(planned), "%.0f", s->rounds_planned.v);
    if (s->rounds_done.st == RESULTS_SET)
        snprintf(done, sizeof(done), "%.0f", s->rounds_done.v);
    fmt_num(dur, sizeof(dur), &s->duration_s, "s");
    fmt_num(tdur, sizeof(tdur), &s->test_duration_s, "s");
    char ver[16] = "n/a";
    if (s->version.st == RESULTS_SET)
        snprintf(ver, sizeof(ver), "%.0f", s->version.v);
    fprintf(f, "fabtop sweep: %d %s by %s, patterns %s, status %s, rounds %s/%s done%s\n",
            s->nranks, s->nranks == 1 ? "rank" : "ranks", str_or(&s->launcher, "n/a"),
            *pat ? pat : "n/a", str_or(&s->status, "n/a"), done, planned,
            results_bool_true(&s->interrupted) ? " (interrupted)" : "");
    fprintf(f, "started %s, took %s; each test %s\n", str_or(&s->started_at, "n/a"), dur, tdur);
    fprintf(f, "on failure %s; document version %s, written by fabtop %s\n",
            str_or(&s->on_failure, "n/a"), ver, str_or(&s->fabtop_version, "n/a"));
}

struct share_at {
    double share;
    int i;
};

static int cmp_share(const void *x, const void *y)
{
    const struct share_at *a = x, *b = y;
    return (a->share > b->share) - (a->share < b->share);
}

/* The incast and bisection streams against their fair share: per round, how many, the
 * median share, and the lowest three (the whole list is in the document's "shares"). */
static void shares(FILE *f, const struct results_sweep *s)
{
    if (s->nshares <= 0)
        return;
    fprintf(f, "\nshares (each stream against its fair share; all of them in the document):\n");
    struct share_at *v = xalloc_zero((size_t)s->nshares + 1, sizeof(*v));
    for (int i = 0; i < s->nshares;) {
        const struct results_sweep_share *h0 = &s->shares[i];
        const char *pat = h0->pattern ? h0->pattern : "?";
        int j = i, n = 0;
        for (; j < s->nshares && s->shares[j].round == h0->round &&
               !strcmp(s->shares[j].pattern ? s->shares[j].pattern : "?", pat);
             j++)
            if (s->shares[j].share.st == RESULTS_SET)
                v[n++] = (struct share_at){s->shares[j].share.v, j};
        i = j;
        if (!n)
            continue;
        qsort(v, (size_t)n, sizeof(*v), cmp_share);
        double med = n % 2 ? v[n / 2].share : (v[n / 2 - 1].share + v[n / 2].share) / 2;
        fprintf(f, "  %s round %d: %d streams, median %.2fx; lowest", pat, h0->round + 1, n, med);
        for (int k = 0; k < n && k < 3; k++) {
            const struct results_sweep_share *h = &s->shares[v[k].i];
            char g[32];
            fmt_bw(g, sizeof(g), h->gbps.v, h->gbps.v < 1);
            fprintf(f, "%s %s->%s %.2fx (%s)", k ? "," : "", host_of(s, h->src), host_of(s, h->dst),
                    h->share.v, g);
        }
        fputc('\n', f);
    }
    free(v);
}

void text_sweep_report(FILE *f, const struct results_sweep *s, int width)
{
    report_header(f, s);
    int nunlike = 0;
    for (int i = 0; i < s->nranks; i++) {
        const char *u = results_str_get(&s->ranks[i].unlike);
        if (!u)
            continue;
        if (!nunlike++)
            fprintf(f, "\nunlike ranks (their pairs are flagged, not judged against the rest):\n");
        fprintf(f, "  %4d %s: %s\n", s->ranks[i].rank, host_of(s, i), u);
    }
    int *rails = xalloc_zero((size_t)s->npairs + 1, sizeof(*rails));
    int nrails = rails_of(s, rails);
    static const enum text_sweep_metric metrics[] = {TEXT_SWEEP_BW, TEXT_SWEEP_LAT_P50};
    static const char *const xports[] = {"tcp", "verbs", "nccl"};
    for (int x = 0; x < 3; x++) {
        /* TCP's maps always (they say "no pair measured"); the others where they ran. */
        bool have = x == 0;
        for (int i = 0; i < s->npairs && !have; i++)
            have = !strcmp(results_sweep_transport(&s->pairs[i].transport), xports[x]);
        for (int mi = 0; mi < 2 && have; mi++)
            for (int r = 0; r < (nrails ? nrails : 1); r++) {
                fputc('\n', f);
                text_sweep_heatmap(f, s, metrics[mi], nrails ? rails[r] : -1, xports[x], width);
            }
    }
    free(rails);
    int nfailed = 0;
    for (int i = 0; i < s->nranks; i++) {
        if (!rank_failed(&s->ranks[i]))
            continue;
        if (!nfailed++)
            fprintf(f, "\nfailed ranks:\n");
        fprintf(f, "  %4d %s: %s\n", s->ranks[i].rank, host_of(s, i),
                str_or(&s->ranks[i].error, "no error recorded"));
    }
    if (!nfailed)
        fprintf(f, "\nfailed ranks: none\n");
    /* The failed pairs, but those of a failed rank (above) only counted. */
    int npf = 0, nwith = 0;
    for (int i = 0; i < s->npairs; i++) {
        const struct results_sweep_pair *p = &s->pairs[i];
        if (!results_bool_true(&p->failed))
            continue;
        bool a_ok = p->a >= 0 && p->a < s->nranks, b_ok = p->b >= 0 && p->b < s->nranks;
        if ((a_ok && rank_failed(&s->ranks[p->a])) || (b_ok && rank_failed(&s->ranks[p->b]))) {
            nwith++;
            continue;
        }
        if (!npf++)
            fprintf(f, "failed pairs:\n");
        if (npf <= 20)
            fprintf(f, "  %s -> %s, rail %d: %s\n", host_of(s, p->a), host_of(s, p->b), p->rail,
                    str_or(&p->error, "no error recorded"));
    }
    if (npf > 20)
        fprintf(f, "  ... and %d more\n", npf - 20);
    if (!npf)
        fprintf(f, "failed pairs: %s\n", nwith ? "none but those of the failed ranks" : "none");
    if (nwith)
        fprintf(f, "  (%d %s with a failed rank)\n", nwith, nwith == 1 ? "pair" : "pairs");
    fprintf(f, "\nverdicts:\n");
    text_sweep_verdicts(f, s);
    /* What happened along the way: failures, decisions, the bisection splits' figures. */
    if (s->nevents > 0) {
        fprintf(f, "\nevents:\n");
        for (int i = 0; i < s->nevents; i++)
            fprintf(f, "  %s\n", s->events[i]);
    }
    shares(f, s);
    char line[1024];
    text_sweep_summary(s, line, sizeof(line));
    fprintf(f, "\n%s\n", line);
}
