/* sweep_grid: the sweep view's arithmetic (sweep_grid.h): the grid of one metric from the
 * pairs, the median, shades by the ratio to it (the thresholds of text/text_sweep.c's heat
 * map), rank summaries, the cursor, what fits and the header. */
#include "tui/sweep_grid.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"

static const struct {
    double min; /* goodness at least this */
    enum sweep_grid_class sh;
} shades[] = {{0.9, SWEEP_GRID_SH_GOOD}, {0.75, SWEEP_GRID_SH_FAIR}, {0.5, SWEEP_GRID_SH_POOR}};

static bool higher_worse(enum sweep_grid_metric m)
{
    return m != SWEEP_GRID_BW;
}

const char *sweep_grid_metric_name(enum sweep_grid_metric m)
{
    switch (m) {
    case SWEEP_GRID_LAT_P50:
        return "latency p50";
    case SWEEP_GRID_LAT_P99:
        return "latency p99";
    default:
        return "bandwidth";
    }
}

enum sweep_grid_metric sweep_grid_metric_of(const char *name)
{
    if (name && !strcmp(name, "latency p50"))
        return SWEEP_GRID_LAT_P50;
    if (name && !strcmp(name, "latency p99"))
        return SWEEP_GRID_LAT_P99;
    return SWEEP_GRID_BW;
}

static void cell_put(struct sweep_grid *g, int a, int b, const struct results_num *f, bool failed)
{
    size_t k = (size_t)a * (size_t)g->n + (size_t)b;
    if (failed || g->st[k] == SWEEP_GRID_CELL_FAILED) {
        g->st[k] = SWEEP_GRID_CELL_FAILED;
        return;
    }
    if (f->st != RESULTS_SET || !isfinite(f->v))
        return;
    bool hw = higher_worse(g->m);
    if (g->st[k] != SWEEP_GRID_CELL_VAL || (hw ? f->v > g->v[k] : f->v < g->v[k]))
        g->v[k] = f->v;
    g->st[k] = SWEEP_GRID_CELL_VAL;
}

void sweep_grid_build(struct sweep_grid *g, const struct results_sweep *s, enum sweep_grid_metric m,
                      const char *transport)
{
    if (!transport)
        transport = "tcp";
    int n = s && s->nranks > 0 ? s->nranks : 0;
    memset(g, 0, sizeof(*g));
    g->n = n;
    g->m = m;
    g->v = xalloc_zero((size_t)n * (size_t)n + 1, sizeof(*g->v));
    g->st = xalloc_zero((size_t)n * (size_t)n + 1, 1);
    for (int i = 0; s && i < s->npairs; i++) {
        const struct results_sweep_pair *p = &s->pairs[i];
        if (p->a < 0 || p->b < 0 || p->a >= n || p->b >= n || p->a == p->b ||
            strcmp(results_sweep_transport(&p->transport), transport))
            continue;
        bool failed = results_bool_true(&p->failed);
        if (m == SWEEP_GRID_BW) {
            cell_put(g, p->a, p->b, &p->bw_ab_gbps, failed);
            cell_put(g, p->b, p->a, &p->bw_ba_gbps, failed);
        } else {
            const struct results_num *f = m == SWEEP_GRID_LAT_P99 ? &p->lat_p99_us : &p->lat_p50_us;
            cell_put(g, p->a, p->b, f, failed);
            cell_put(g, p->b, p->a, f, failed);
        }
        if (!g->kind)
            g->kind = results_str_get(&p->latency_kind);
    }
    double *v = xalloc_zero((size_t)n * (size_t)n + 1, sizeof(*v));
    int k = 0;
    for (int i = 0; i < n * n; i++)
        if (g->st[i] == SWEEP_GRID_CELL_VAL)
            v[k++] = g->v[i];
    g->have_med = results_sweep_median(v, k, &g->med);
    free(v);
}

void sweep_grid_free(struct sweep_grid *g)
{
    free(g->v);
    free(g->st);
    memset(g, 0, sizeof(*g));
}

enum sweep_grid_cellst sweep_grid_cell(const struct sweep_grid *g, int a, int b, double *v)
{
    if (a < 0 || b < 0 || a >= g->n || b >= g->n)
        return SWEEP_GRID_CELL_NONE;
    size_t k = (size_t)a * (size_t)g->n + (size_t)b;
    if (g->st[k] == SWEEP_GRID_CELL_VAL && v)
        *v = g->v[k];
    return (enum sweep_grid_cellst)g->st[k];
}

bool sweep_grid_ratio(const struct sweep_grid *g, int a, int b, double *q)
{
    double v;
    if (sweep_grid_cell(g, a, b, &v) != SWEEP_GRID_CELL_VAL || !g->have_med || g->med <= 0)
        return false;
    if (higher_worse(g->m))
        *q = v > 0 ? g->med / v : 1e9;
    else
        *q = v / g->med;
    return true;
}

enum sweep_grid_class sweep_grid_shade_of(double goodness)
{
    for (size_t i = 0; i < sizeof(shades) / sizeof(shades[0]); i++)
        if (goodness >= shades[i].min)
            return shades[i].sh;
    return SWEEP_GRID_SH_BAD;
}

enum sweep_grid_class sweep_grid_shade(const struct sweep_grid *g, int a, int b)
{
    if (a == b)
        return SWEEP_GRID_SH_DIAG;
    enum sweep_grid_cellst c = sweep_grid_cell(g, a, b, NULL);
    if (c == SWEEP_GRID_CELL_FAILED)
        return SWEEP_GRID_SH_FAILED;
    double q;
    if (!sweep_grid_ratio(g, a, b, &q))
        return SWEEP_GRID_SH_MISSING;
    return sweep_grid_shade_of(q);
}

char sweep_grid_shade_char(enum sweep_grid_class sh)
{
    static const char c[] = {
        [SWEEP_GRID_SH_DIAG] = ' ', [SWEEP_GRID_SH_MISSING] = '?', [SWEEP_GRID_SH_FAILED] = 'X',
        [SWEEP_GRID_SH_GOOD] = '#', [SWEEP_GRID_SH_FAIR] = '+',    [SWEEP_GRID_SH_POOR] = '-',
        [SWEEP_GRID_SH_BAD] = '.',
    };
    return sh >= 0 && sh <= SWEEP_GRID_SH_BAD ? c[sh] : '?';
}

void sweep_grid_rank(const struct sweep_grid *g, int a, struct sweep_grid_rank_sum *out)
{
    memset(out, 0, sizeof(*out));
    out->worst = -1;
    if (a < 0 || a >= g->n)
        return;
    double *v = xalloc_zero(2 * (size_t)g->n + 1, sizeof(*v));
    int k = 0;
    for (int b = 0; b < g->n; b++) {
        if (b == a)
            continue;
        bool any = false, failed = false;
        const int cells[2][2] = {{a, b}, {b, a}};
        for (int d = 0; d < 2; d++) {
            double x, q;
            enum sweep_grid_cellst c = sweep_grid_cell(g, cells[d][0], cells[d][1], &x);
            any |= c != SWEEP_GRID_CELL_NONE;
            failed |= c == SWEEP_GRID_CELL_FAILED;
            if (c != SWEEP_GRID_CELL_VAL)
                continue;
            v[k++] = x;
            if (sweep_grid_ratio(g, cells[d][0], cells[d][1], &q) &&
                (out->worst < 0 || q < out->worst_q)) {
                out->worst = b;
                out->worst_q = q;
            }
        }
        out->npeers += any;
        out->nfailed += failed;
    }
    out->have_median = results_sweep_median(v, k, &out->median);
    free(v);
}

void sweep_grid_fmt_gbps(char *buf, size_t len, double gbps)
{
    if (gbps < 1)
        snprintf(buf, len, "%.1f Mb/s", gbps * 1000);
    else
        snprintf(buf, len, "%.1f Gb/s", gbps);
}

void sweep_grid_fmt_us(char *buf, size_t len, double us)
{
    snprintf(buf, len, us >= 100 ? "%.0f us" : "%.1f us", us);
}

void sweep_grid_fmt_value(char *buf, size_t len, enum sweep_grid_metric m, double v)
{
    if (m == SWEEP_GRID_BW)
        sweep_grid_fmt_gbps(buf, len, v);
    else
        sweep_grid_fmt_us(buf, len, v);
}

/* ---- the cursor ---- */

void sweep_grid_cursor_clamp(struct sweep_grid_cursor *c, int n)
{
    if (c->row > n - 1)
        c->row = n - 1;
    if (c->row < 0)
        c->row = 0;
    if (c->col > n - 1)
        c->col = n - 1;
    if (c->col < -1)
        c->col = -1;
}

void sweep_grid_cursor_move(struct sweep_grid_cursor *c, int n, int drow, int dcol)
{
    /* Large steps (Home/End) stay far from overflowing. */
    if (drow > n)
        drow = n;
    if (drow < -n)
        drow = -n;
    if (dcol > n)
        dcol = n;
    if (dcol < -n - 1)
        dcol = -n - 1;
    c->row += drow;
    c->col += dcol;
    sweep_grid_cursor_clamp(c, n);
}

bool sweep_grid_verdict_target(const struct results_sweep *s, int i, struct sweep_grid_cursor *out)
{
    if (!s || i < 0 || i >= s->nverdicts)
        return false;
    const struct results_sweep_verdict *v = &s->verdicts[i];
    double r, p;
    if (!results_num_get(&v->rank, &r) || r < 0 || r >= s->nranks)
        return false;
    out->row = (int)r;
    out->col = -1;
    const char *kind = v->kind ? v->kind : "";
    if (!strcmp(kind, "rank_failed"))
        return true;
    if (results_num_get(&v->peer, &p) && p >= 0 && p < s->nranks) {
        out->col = (int)p;
        return true;
    }
    struct sweep_grid g;
    sweep_grid_build(&g, s, sweep_grid_metric_of(v->metric),
                     results_sweep_transport(&v->transport));
    struct sweep_grid_rank_sum sum;
    sweep_grid_rank(&g, out->row, &sum);
    out->col = sum.worst;
    sweep_grid_free(&g);
    return true;
}

/* ---- what fits ---- */

static int digits(int x)
{
    int d = 1;
    while (x >= 10 && d < 10) {
        x /= 10;
        d++;
    }
    return d;
}

static int follow(int top, int cur, int shown, int n)
{
    if (cur >= 0 && cur < top)
        top = cur;
    if (cur >= 0 && cur >= top + shown)
        top = cur - shown + 1;
    if (top > n - shown)
        top = n - shown;
    return top < 0 ? 0 : top;
}

void sweep_grid_fit(const struct results_sweep *s, int w, int h, const struct sweep_grid_cursor *c,
                    struct sweep_grid_layout *f)
{
    int n = s ? s->nranks : 0, maxr = 0, hw = 1;
    for (int i = 0; i < n; i++) {
        if (s->ranks[i].rank > maxr)
            maxr = s->ranks[i].rank;
        int l = s->ranks[i].host ? (int)strlen(s->ranks[i].host) : 1;
        if (l > hw)
            hw = l;
    }
    int rw = digits(maxr) < 3 ? 3 : digits(maxr);
    f->host_w = hw > 8 ? 8 : hw;
    f->label_w = rw + 1 + f->host_w + 1;
    f->cell_w = digits(maxr) + 1 < 3 ? 3 : digits(maxr) + 1;
    int cols = (w - f->label_w) / f->cell_w;
    f->summary = n > SWEEP_GRID_SUMMARY_OVER || cols < 1;
    f->ncols = f->summary ? 0 : cols < n ? cols : n;
    f->nrows = h < n ? (h > 0 ? h : 0) : n;
    f->row0 = follow(f->row0, c->row, f->nrows, n);
    f->col0 = f->summary ? 0 : follow(f->col0, c->col, f->ncols, n);
}

/* ---- the header ---- */

bool sweep_grid_running(const struct results_sweep *s)
{
    const char *st = results_str_get(&s->status);
    if (st && !strcmp(st, "running"))
        return true;
    if (st && (!strcmp(st, "ok") || !strcmp(st, "failed") || !strcmp(st, "interrupted")) &&
        s->ended_at.st == RESULTS_SET)
        return false;
    double done, planned;
    return s->ended_at.st != RESULTS_SET && !results_bool_true(&s->interrupted) &&
           results_num_get(&s->rounds_done, &done) &&
           results_num_get(&s->rounds_planned, &planned) && done < planned;
}

bool sweep_grid_time_left(const struct results_sweep *s, double *left_s)
{
    double dur, done, planned;
    if (!sweep_grid_running(s) || !results_num_get(&s->duration_s, &dur) ||
        !results_num_get(&s->rounds_done, &done) ||
        !results_num_get(&s->rounds_planned, &planned) || done <= 0 || planned < done)
        return false;
    *left_s = dur / done * (planned - done);
    return true;
}

static void fmt_dur(char *buf, size_t len, double s)
{
    if (s < 60)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, len, "%d h %02d min", (int)(s / 3600), (int)s % 3600 / 60);
}

void sweep_grid_header(const struct results_sweep *s, char *line1, size_t len1, char *line2,
                       size_t len2)
{
    char pat[128] = "";
    size_t k = 0;
    for (int i = 0; i < s->npatterns && k < sizeof(pat); i++)
        k += (size_t)snprintf(pat + k, sizeof(pat) - k, "%s%s", i ? "+" : "",
                              s->patterns[i] ? s->patterns[i] : "?");
    const char *st = sweep_grid_running(s) ? "running" : results_str_get(&s->status);
    char rounds[64] = "";
    double done, planned;
    if (results_num_get(&s->rounds_done, &done) && results_num_get(&s->rounds_planned, &planned))
        snprintf(rounds, sizeof(rounds), "  round %.0f of %.0f", done, planned);
    snprintf(line1, len1, "%d rank%s  %s  %s%s", s->nranks, s->nranks == 1 ? "" : "s",
             pat[0] ? pat : "no patterns", st ? st : "status n/a", rounds);
    double dur, left;
    char d[32], l[32];
    if (!results_num_get(&s->duration_s, &dur)) {
        snprintf(line2, len2, "elapsed n/a");
        return;
    }
    fmt_dur(d, sizeof(d), dur);
    if (sweep_grid_time_left(s, &left)) {
        fmt_dur(l, sizeof(l), left);
        snprintf(line2, len2, "%s elapsed, about %s left", d, l);
    } else {
        snprintf(line2, len2, "%s elapsed%s", d, sweep_grid_running(s) ? ", time left n/a" : "");
    }
}

int sweep_grid_load(const char *path, struct results_sweep *s, struct ft_err *err)
{
    memset(s, 0, sizeof(*s));
    cJSON *j = NULL;
    int rc = jsonutil_load(path, &j, err);
    if (rc < 0)
        return rc;
    rc = results_sweep_read(j, path, s, err);
    cJSON_Delete(j);
    return rc;
}
