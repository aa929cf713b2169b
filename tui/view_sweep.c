/* view_sweep: the sweep view (F7): a rack sweep's document (fabtop --results FILE of a sweep,
 * or fabtop --attach FILE following the document rank 0 publishes, re-read when it changes):
 * the header, the ranks x ranks matrix of one metric shaded by the ratio to the rack's
 * median (b, l, p), the cursor's pair or rank in detail, the verdicts below (Tab, Enter
 * jumps to the cell). The arithmetic is in sweep_grid.c. */
#include "tui/views.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/xalloc.h"
#include "engine/flow/hist.h"
#include "engine/results/results_sweep.h"
#include "tui/sweep_grid.h"
#include "tui/ui_list.h"

struct sweep_state {
    bool have; /* doc holds a document read */
    struct results_sweep doc;
    struct sweep_grid grid[SWEEP_GRID_NMETRICS];
    enum sweep_grid_metric m;
    int xport; /* the matrix shown: index into xports */
    struct sweep_grid_cursor cur;
    struct sweep_grid_layout fit;
    struct ui_list vlist; /* the verdicts: sel and top count rows of vis */
    /* The verdict rows: those the filter keeps, in the order chosen (> or F6, <, \ or /). */
    struct ui_order vorder;
    int *vis, nvis;
    int grid_y;        /* the matrix's first rank row, inside its pane (for clicks) */
    char problem[700]; /* why the file cannot be read now, "" when it can */
    /* the file, and what it was when last read (--attach re-reads it when that changes) */
    char path[512];
    bool follow;
    bool stat_ok;
    struct stat sb;
    uint64_t next_check_ns;
};

static const char *const xports[] = {"tcp", "verbs", "nccl"};
#define NXPORTS 3

/* Whether the document has pairs over transport x. */
static bool have_xport(const struct results_sweep *d, int x)
{
    for (int i = 0; i < d->npairs; i++)
        if (!strcmp(results_sweep_transport(&d->pairs[i].transport), xports[x]))
            return true;
    return false;
}

/* Whether the document has pairs over more than one transport (then 't' switches). */
static bool several_xports(const struct sweep_state *s)
{
    int n = 0;
    for (int x = 0; s->have && x < NXPORTS; x++)
        n += have_xport(&s->doc, x);
    return n > 1;
}

static struct sweep_state *st(struct app *a)
{
    return a->vstate[VIEW_SWEEP];
}

/* The verdict list's orders: the document's (worst first, as the sweep wrote them), by
 * state (named, suspect, cleared), by kind, by the ratio furthest from the rack's. */
enum verdict_sort { VS_DOC, VS_STATE, VS_KIND, VS_RATIO, VS_COUNT };
static const char *const verdict_sort_name[VS_COUNT] = {"document", "state", "kind", "ratio"};

/* The verdict the selection is on; -1 when no row is listed. */
static int sel_verdict(const struct sweep_state *s)
{
    return s->vlist.sel >= 0 && s->vlist.sel < s->nvis ? s->vis[s->vlist.sel] : -1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- reading the document ---- */

static void drop_doc(struct sweep_state *s)
{
    for (int m = 0; m < SWEEP_GRID_NMETRICS; m++)
        sweep_grid_free(&s->grid[m]);
    results_sweep_free(&s->doc);
    s->have = false;
}

static bool same_file(const struct stat *x, const struct stat *y)
{
    return x->st_dev == y->st_dev && x->st_ino == y->st_ino && x->st_size == y->st_size &&
           x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec;
}

/* The matrices of the transport shown, again. */
static void rebuild(struct sweep_state *s)
{
    for (int m = 0; m < SWEEP_GRID_NMETRICS; m++) {
        sweep_grid_free(&s->grid[m]);
        sweep_grid_build(&s->grid[m], &s->doc, (enum sweep_grid_metric)m, xports[s->xport]);
    }
}

static void relist_verdicts(struct sweep_state *s);

/* Read the file again; on failure keep the last good document and say why. */
static void reload(struct sweep_state *s)
{
    struct stat sb;
    if (stat(s->path, &sb) < 0) {
        s->stat_ok = false;
        snprintf(s->problem, sizeof(s->problem), "%s: %s; %s", s->path, strerror(errno),
                 s->follow ? "waiting for fabtop sweep --publish on rank 0 to write it"
                           : "check the path");
        return;
    }
    s->sb = sb;
    s->stat_ok = true;
    struct results_sweep doc;
    struct ft_err err = {0};
    if (sweep_grid_load(s->path, &doc, &err) < 0) {
        snprintf(s->problem, sizeof(s->problem), "%.500s; %s", err.msg,
                 s->have ? "showing the last good document" : "waiting for a good one");
        return;
    }
    drop_doc(s);
    s->doc = doc;
    s->have = true;
    for (int m = 0; m < SWEEP_GRID_NMETRICS; m++)
        sweep_grid_build(&s->grid[m], &s->doc, (enum sweep_grid_metric)m, xports[s->xport]);
    sweep_grid_cursor_clamp(&s->cur, s->doc.nranks);
    relist_verdicts(s);
    s->problem[0] = '\0';
}

/* --attach: once a second, read the file again when it changed (or came back). */
static int sweep_tick(struct app *a)
{
    struct sweep_state *s = st(a);
    uint64_t t = now_ns();
    if (!s->follow || !s->path[0] || t < s->next_check_ns)
        return REACT_NONE;
    s->next_check_ns = t + 1000000000ull;
    struct stat sb;
    bool gone = stat(s->path, &sb) < 0;
    if (gone ? !s->stat_ok && s->problem[0] : s->stat_ok && same_file(&sb, &s->sb))
        return REACT_NONE;
    bool had = s->problem[0] != '\0';
    reload(s);
    if (s->problem[0] && !had)
        app_message(a, ROLE_WARN, "%s", s->problem);
    return REACT_REDRAW;
}

/* ---- lines of the detail pane ---- */

struct line {
    enum theme_role role;
    char text[256];
};
struct lines {
    int n;
    struct line v[64];
};

static void add(struct lines *ls, enum theme_role r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add(struct lines *ls, enum theme_role r, const char *fmt, ...)
{
    if (ls->n >= (int)(sizeof(ls->v) / sizeof(ls->v[0])))
        return;
    struct line *l = &ls->v[ls->n++];
    l->role = r;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof(l->text), fmt, ap);
    va_end(ap);
}

/* Text wrapped to width, continuation lines indented by two. */
static void add_wrapped(struct lines *ls, enum theme_role r, const char *text, int width)
{
    char(*w)[512] = xalloc_zero(8, sizeof(*w));
    int n = ui_wrap_lines(text, width > 12 ? width - 2 : 10, w, 8);
    for (int i = 0; i < n && i < 8; i++)
        add(ls, r, "%s%s", i ? "  " : "", w[i]);
    free(w);
}

static const char *host_of(const struct results_sweep *d, int i)
{
    return i >= 0 && i < d->nranks && d->ranks[i].host ? d->ranks[i].host : "?";
}

static int rank_no(const struct results_sweep *d, int i)
{
    return i >= 0 && i < d->nranks ? d->ranks[i].rank : i;
}

/* A goodness (sweep_grid.h) as the figure over the median, the ratio the view prints:
 * 0.25x for a quarter of the bandwidth, 1.90x for nearly twice the latency. */
static double as_ratio(enum sweep_grid_metric m, double q)
{
    return m == SWEEP_GRID_BW ? q : q > 0 ? 1 / q : 0;
}

static void num_text(char *buf, size_t len, const struct results_num *f, bool bw)
{
    if (f->st != RESULTS_SET)
        snprintf(buf, len, "n/a");
    else if (bw)
        sweep_grid_fmt_gbps(buf, len, f->v);
    else
        sweep_grid_fmt_us(buf, len, f->v);
}

/* The percentiles of the first histogram in a test's run. */
static bool run_hist(const struct results_run *r, char *buf, size_t len)
{
    for (int p = 0; p < r->nphases; p++)
        for (int f = 0; f < r->phases[p].nflows; f++)
            for (int k = 0; k < r->phases[p].flows[f].npoints; k++) {
                const struct hist *h = r->phases[p].flows[f].points[k].histogram;
                if (!h || !h->count)
                    continue;
                char x[3][32];
                const double pc[3] = {50, 99, 99.9};
                for (int i = 0; i < 3; i++)
                    sweep_grid_fmt_us(x[i], sizeof(x[i]), hist_percentile(h, pc[i]) / 1000);
                /* "1.5/1.6/2.0 us": one unit for the three. */
                for (int i = 0; i < 2; i++)
                    x[i][strcspn(x[i], " ")] = '\0';
                snprintf(buf, len, "p50/p99/p99.9 %s/%s/%s", x[0], x[1], x[2]);
                return true;
            }
    return false;
}

static void pair_lines(const struct sweep_state *s, int a, int b, struct lines *ls, int width)
{
    const struct results_sweep *d = &s->doc;
    add(ls, ROLE_HEADER, "%s -> %s", host_of(d, a), host_of(d, b));
    double q;
    if (sweep_grid_ratio(&s->grid[s->m], a, b, &q))
        add(ls, sweep_grid_shade_of(q) == SWEEP_GRID_SH_GOOD ? ROLE_OK : ROLE_WARN,
            "%s %.2fx the median", sweep_grid_metric_name(s->m), as_ratio(s->m, q));
    bool any = false;
    for (int i = 0; i < d->npairs; i++) {
        const struct results_sweep_pair *p = &d->pairs[i];
        if (!((p->a == a && p->b == b) || (p->a == b && p->b == a)))
            continue;
        any = true;
        bool fwd = p->a == a;
        char ab[32], ba[32], p50[32], p99[32], p999[32];
        num_text(ab, sizeof(ab), fwd ? &p->bw_ab_gbps : &p->bw_ba_gbps, true);
        num_text(ba, sizeof(ba), fwd ? &p->bw_ba_gbps : &p->bw_ab_gbps, true);
        num_text(p50, sizeof(p50), &p->lat_p50_us, false);
        num_text(p99, sizeof(p99), &p->lat_p99_us, false);
        num_text(p999, sizeof(p999), &p->lat_p999_us, false);
        add(ls, ROLE_DIM, "rail %d, %s%s", p->rail, results_sweep_transport(&p->transport),
            results_bool_true(&p->unlike) ? ", unlike nodes" : "");
        if (results_bool_true(&p->failed)) {
            char e[300];
            snprintf(e, sizeof(e), "failed: %s",
                     results_str_get(&p->error) ? results_str_get(&p->error) : "no reason given");
            add_wrapped(ls, ROLE_ERROR, e, width);
        }
        add(ls, ROLE_NORMAL, "bw %d->%d %s", rank_no(d, a), rank_no(d, b), ab);
        add(ls, ROLE_NORMAL, "bw %d->%d %s", rank_no(d, b), rank_no(d, a), ba);
        add(ls, ROLE_NORMAL, "lat p50 %s  p99 %s", p50, p99);
        const char *kind = results_str_get(&p->latency_kind);
        char kb[64];
        snprintf(kb, sizeof(kb), "%s", kind ? kind : "kind n/a");
        for (char *c = kb; *c; c++)
            if (*c == '_')
                *c = ' ';
        add(ls, ROLE_NORMAL, "lat p99.9 %s (%s)", p999, kb);
    }
    if (!any)
        add(ls, ROLE_DIM, "not measured (yet)");
    int nt = 0;
    for (int i = 0; i < d->ntests; i++) {
        const struct results_sweep_test *t = &d->tests[i];
        if (!((t->src == a && t->dst == b) || (t->src == b && t->dst == a)))
            continue;
        if (!nt++)
            add(ls, ROLE_INFO, "Tests:");
        const char *stt = t->status ? t->status : "?";
        bool pairs = t->pattern && !strcmp(t->pattern, "pairs");
        add(ls, strcmp(stt, "ok") ? ROLE_ERROR : ROLE_NORMAL, " round %d %s%s %d->%d: %s", t->round,
            t->pattern ? t->pattern : "?",
            !pairs         ? ""
            : t->step == 1 ? " bw"
                           : " lat",
            rank_no(d, t->src), rank_no(d, t->dst), stt);
        if (results_str_get(&t->error)) {
            char e[300];
            snprintf(e, sizeof(e), "  %s", results_str_get(&t->error));
            add_wrapped(ls, ROLE_ERROR, e, width);
        }
        char h[160];
        if (t->run_st == RESULTS_SET && run_hist(&t->run, h, sizeof(h)))
            add(ls, ROLE_NORMAL, "  %s", h);
    }
}

static void rank_lines(const struct sweep_state *s, int a, struct lines *ls, int width)
{
    const struct results_sweep *d = &s->doc;
    const struct results_sweep_rank *r = &d->ranks[a];
    add(ls, ROLE_HEADER, "rank %d  %s", r->rank, host_of(d, a));
    const char *g = results_str_get(&r->group), *ad = results_str_get(&r->address);
    add(ls, ROLE_NORMAL, "group %s", g ? g : "n/a");
    add(ls, ROLE_NORMAL, "address %s", ad ? ad : "n/a");
    const char *stt = results_str_get(&r->status), *err = results_str_get(&r->error);
    add(ls, stt && strcmp(stt, "ok") ? ROLE_ERROR : ROLE_OK, "status %s", stt ? stt : "n/a");
    if (err) {
        char e[300];
        snprintf(e, sizeof(e), "error: %s", err);
        add_wrapped(ls, ROLE_ERROR, e, width);
    }
    if (results_str_get(&r->unlike)) {
        char e[300];
        snprintf(e, sizeof(e), "unlike: %s", results_str_get(&r->unlike));
        add_wrapped(ls, ROLE_WARN, e, width);
    }
    enum sweep_grid_metric ms[2] = {SWEEP_GRID_BW, s->m};
    for (int k = 0; k < (s->m == SWEEP_GRID_BW ? 1 : 2); k++) {
        const struct sweep_grid *gr = &s->grid[ms[k]];
        struct sweep_grid_rank_sum sum;
        sweep_grid_rank(gr, a, &sum);
        char v[32], q[32] = "";
        if (sum.have_median) {
            sweep_grid_fmt_value(v, sizeof(v), ms[k], sum.median);
            if (gr->have_med && gr->med > 0 && sum.median > 0)
                snprintf(q, sizeof(q), " (%.2fx)", sum.median / gr->med);
        } else {
            snprintf(v, sizeof(v), "n/a");
        }
        add(ls, ROLE_NORMAL, "median %s %s%s", sweep_grid_metric_name(ms[k]), v, q);
        if (sum.worst >= 0)
            add(ls,
                sweep_grid_shade_of(sum.worst_q) == SWEEP_GRID_SH_GOOD ? ROLE_NORMAL : ROLE_WARN,
                "worst peer %d %s %.2fx", rank_no(d, sum.worst), host_of(d, sum.worst),
                as_ratio(ms[k], sum.worst_q));
        if (k == 0)
            add(ls, sum.nfailed ? ROLE_ERROR : ROLE_NORMAL, "%d peers, %d failed", sum.npeers,
                sum.nfailed);
    }
}

/* ---- drawing ---- */

static enum theme_role shade_role(enum sweep_grid_class sh)
{
    switch (sh) {
    case SWEEP_GRID_SH_GOOD:
        return ROLE_OK;
    case SWEEP_GRID_SH_FAIR:
        return ROLE_WARN;
    case SWEEP_GRID_SH_POOR:
        return ROLE_SWITCH; /* magenta */
    case SWEEP_GRID_SH_BAD:
    case SWEEP_GRID_SH_FAILED:
        return ROLE_ERROR;
    default:
        return ROLE_DIM;
    }
}

/* A rank a verdict names (rank or failed rank, not cleared): marked beside its number. */
static bool rank_named(const struct results_sweep *d, int a)
{
    for (int i = 0; i < d->nverdicts; i++) {
        const struct results_sweep_verdict *v = &d->verdicts[i];
        double r;
        if (v->kind && (!strcmp(v->kind, "rank") || !strcmp(v->kind, "rank_failed")) &&
            (!v->state || strcmp(v->state, "cleared")) && results_num_get(&v->rank, &r) &&
            (int)r == a)
            return true;
    }
    return false;
}

static void draw_legend(struct ui *u, int y, int x, int w, const struct sweep_grid *g)
{
    char med[64];
    if (g->have_med) {
        char v[32];
        sweep_grid_fmt_value(v, sizeof(v), g->m, g->med);
        snprintf(med, sizeof(med), "median %s ", v);
    } else {
        snprintf(med, sizeof(med), "no median yet ");
    }
    ui_text(u, y, x, w, ROLE_DIM, med);
    int cx = x + (int)strlen(med);
    /* The thresholds as the figure over the median: goodness 0.9 is 1.1x the latency. */
    static const struct {
        enum sweep_grid_class sh;
        const char *t[2]; /* bandwidth, latency */
    } key[] = {{SWEEP_GRID_SH_GOOD, {".9", "<1.1"}},
               {SWEEP_GRID_SH_FAIR, {".75", "<1.3"}},
               {SWEEP_GRID_SH_POOR, {".5", "<2"}},
               {SWEEP_GRID_SH_BAD, {"", ""}},
               {SWEEP_GRID_SH_FAILED, {" fail", " fail"}}};
    for (size_t i = 0; i < sizeof(key) / sizeof(key[0]) && cx < x + w; i++) {
        char t[16];
        snprintf(t, sizeof(t), "%c%s ", sweep_grid_shade_char(key[i].sh),
                 key[i].t[g->m != SWEEP_GRID_BW]);
        ui_text(u, y, cx, x + w - cx, shade_role(key[i].sh), t);
        cx += (int)strlen(t);
    }
}

static void draw_cells(struct sweep_state *s, struct ui *u, const struct rect *in, int y,
                       bool focus)
{
    const struct results_sweep *d = &s->doc;
    const struct sweep_grid *g = &s->grid[s->m];
    struct sweep_grid_layout *f = &s->fit;
    int rw = f->label_w - f->host_w - 2;
    /* The column numbers, the cursor's highlighted; < > when columns are scrolled off. */
    ui_text(u, y, in->x, f->label_w, ROLE_DIM, f->col0 > 0 ? " <" : "");
    for (int j = 0; j < f->ncols; j++) {
        int b = f->col0 + j;
        char t[16];
        snprintf(t, sizeof(t), "%*d", f->cell_w - 1, rank_no(d, b));
        ui_text(u, y, in->x + f->label_w + j * f->cell_w, f->cell_w,
                b == s->cur.col ? ROLE_SELECTED : ROLE_DIM, t);
    }
    if (f->col0 + f->ncols < d->nranks)
        ui_text(u, y, in->x + f->label_w + f->ncols * f->cell_w, 1, ROLE_DIM, ">");
    y++;
    for (int i = 0; i < f->nrows; i++, y++) {
        int a = f->row0 + i;
        char lab[64];
        snprintf(lab, sizeof(lab), "%*d%c%-*.*s", rw, rank_no(d, a), rank_named(d, a) ? '!' : ' ',
                 f->host_w, f->host_w, host_of(d, a));
        bool on_head = a == s->cur.row && s->cur.col < 0;
        const char *rst = results_str_get(&d->ranks[a].status);
        bool down = rst && strcmp(rst, "ok"); /* failed or skipped */
        ui_text(u, y, in->x, f->label_w,
                on_head           ? ROLE_SELECTED
                : down            ? ROLE_ERROR
                : a == s->cur.row ? ROLE_HEADER
                                  : ROLE_NORMAL,
                lab);
        for (int j = 0; j < f->ncols; j++) {
            int b = f->col0 + j;
            enum sweep_grid_class sh = sweep_grid_shade(g, a, b);
            bool cur = a == s->cur.row && b == s->cur.col;
            char t[16];
            snprintf(t, sizeof(t), "%*s%c%c%c", f->cell_w - 3, "", cur ? '[' : ' ',
                     sweep_grid_shade_char(sh), cur ? ']' : ' ');
            ui_text(u, y, in->x + f->label_w + j * f->cell_w, f->cell_w,
                    cur && focus ? ROLE_SELECTED : shade_role(sh), t);
        }
    }
}

/* One line per rank: its median and ratio, its worst peer, its failed pairs. */
static void draw_summary(struct sweep_state *s, struct ui *u, const struct rect *in, int y,
                         bool focus)
{
    const struct results_sweep *d = &s->doc;
    const struct sweep_grid *g = &s->grid[s->m];
    struct sweep_grid_layout *f = &s->fit;
    char head[128];
    snprintf(head, sizeof(head), "%4s %-8.8s %-10s %-5s %s", "rank", "host", "median", "ratio",
             "worst X");
    ui_text(u, y++, in->x, in->w, ROLE_DIM, head);
    for (int i = 0; i < f->nrows; i++, y++) {
        int a = f->row0 + i;
        struct sweep_grid_rank_sum sum;
        sweep_grid_rank(g, a, &sum);
        char v[32] = "n/a", q[16] = "", w[48] = "", fl[24] = "";
        double ratio = 1;
        if (sum.have_median) {
            sweep_grid_fmt_value(v, sizeof(v), s->m, sum.median);
            if (g->have_med && g->med > 0 && sum.median > 0) {
                ratio = s->m == SWEEP_GRID_BW ? sum.median / g->med : g->med / sum.median;
                snprintf(q, sizeof(q), "%.2fx", sum.median / g->med);
            }
        }
        if (sum.worst >= 0)
            snprintf(w, sizeof(w), "%d %.2fx", rank_no(d, sum.worst), as_ratio(s->m, sum.worst_q));
        if (sum.nfailed)
            snprintf(fl, sizeof(fl), " X%d", sum.nfailed);
        char line[256];
        snprintf(line, sizeof(line), "%4d%c%-8.8s %-10s %-5s %s%s", rank_no(d, a),
                 rank_named(d, a) ? '!' : ' ', host_of(d, a), v, q, w, fl);
        enum theme_role r = sum.nfailed ? ROLE_ERROR : shade_role(sweep_grid_shade_of(ratio));
        if (r == ROLE_OK)
            r = ROLE_NORMAL;
        ui_text_pad(u, y, in->x, in->w, a == s->cur.row && focus ? ROLE_SELECTED : r, line);
    }
}

static void draw_matrix(struct app *a, struct ui *u, const struct rect *r)
{
    struct sweep_state *s = st(a);
    bool focus = a->focus == 0;
    char title[160];
    if (several_xports(s))
        snprintf(title, sizeof(title), "Sweep: %s %s%s (b l p t)", xports[s->xport],
                 sweep_grid_metric_name(s->m), s->m == SWEEP_GRID_BW ? " a->b" : "");
    else
        snprintf(title, sizeof(title), "Sweep: %s%s (b l p)", sweep_grid_metric_name(s->m),
                 s->m == SWEEP_GRID_BW ? " a->b" : "");
    ui_box(u, r, title, focus);
    struct rect in = ui_inner(r);
    int y = in.y, ymax = in.y + in.h;
    /* Over a document still shown, the reason takes two rows at most (the status line had
     * it whole when it came). */
    if (s->problem[0])
        ui_paragraph(u, &y, s->have && ymax > y + 2 ? y + 2 : ymax, in.x, in.w,
                     s->have ? ROLE_WARN : ROLE_ERROR, s->problem);
    if (!s->have) {
        if (!s->problem[0])
            ui_paragraph(u, &y, ymax, in.x, in.w, ROLE_DIM,
                         "No sweep open: fabtop --results FILE opens a sweep's document, "
                         "fabtop --attach FILE follows a running one.");
        return;
    }
    char l1[256], l2[128];
    sweep_grid_header(&s->doc, l1, sizeof(l1), l2, sizeof(l2));
    if (y < ymax)
        ui_text(u, y++, in.x, in.w, ROLE_INFO, l1);
    if (y < ymax)
        ui_text(u, y++, in.x, in.w, ROLE_NORMAL, l2);
    if (y < ymax)
        draw_legend(u, y++, in.x, in.w, &s->grid[s->m]);
    if (y >= ymax || s->doc.nranks == 0)
        return;
    sweep_grid_fit(&s->doc, in.w, ymax - y - 1, &s->cur, &s->fit);
    s->grid_y = y + 1 - in.y; /* below the column numbers (or the summary's heads) */
    if (s->fit.summary)
        draw_summary(s, u, &in, y, focus);
    else
        draw_cells(s, u, &in, y, focus);
    if (s->fit.row0 + s->fit.nrows < s->doc.nranks)
        ui_text(u, r->y + r->h - 1, r->x + r->w - 8, 6, ROLE_BORDER, " more ");
}

static void draw_detail(struct app *a, struct ui *u, const struct rect *r)
{
    struct sweep_state *s = st(a);
    struct rect in = ui_inner(r);
    struct lines *ls = xalloc_zero(1, sizeof(*ls));
    char title[64] = "Detail";
    if (s->have && s->doc.nranks > 0) {
        const struct results_sweep *d = &s->doc;
        if (s->cur.col < 0 || s->cur.col == s->cur.row) {
            rank_lines(s, s->cur.row, ls, in.w);
            snprintf(title, sizeof(title), "Rank %d", rank_no(d, s->cur.row));
        } else {
            pair_lines(s, s->cur.row, s->cur.col, ls, in.w);
            snprintf(title, sizeof(title), "Pair %d -> %d", rank_no(d, s->cur.row),
                     rank_no(d, s->cur.col));
        }
    }
    ui_box(u, r, title, a->focus == 1);
    for (int i = 0; i < ls->n && i < in.h; i++)
        ui_text(u, in.y + i, in.x, in.w, ls->v[i].role, ls->v[i].text);
    if (ls->n > in.h)
        ui_text(u, r->y + r->h - 1, r->x + r->w - 8, 6, ROLE_BORDER, " more ");
    free(ls);
}

/* Verdict i's row: its state in capitals, its kind, its message. */
static void verdict_line(const struct results_sweep_verdict *v, char *line, size_t len, char *state,
                         size_t slen)
{
    snprintf(state, slen, "%s", v->state ? v->state : "?");
    for (char *c = state; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    snprintf(line, len, "%-7s %-11s %s", state, v->kind ? v->kind : "?",
             v->message ? v->message : "");
}

static int state_rank(const char *st)
{
    return !st ? 3 : !strcmp(st, "named") ? 0 : !strcmp(st, "suspect") ? 1 : 2;
}

/* How far verdict v's ratio is from the rack's (1): a ratio of 0.5 and one of 2 are as far. */
static double ratio_off(const struct results_sweep_verdict *v)
{
    double q;
    if (!results_num_get(&v->ratio.value, &q) || !(q > 0))
        return -1;
    return q >= 1 ? q : 1 / q;
}

static bool verdict_before(void *ctx, int i, int j)
{
    const struct sweep_state *s = ctx;
    const struct results_sweep_verdict *a = &s->doc.verdicts[i], *b = &s->doc.verdicts[j];
    switch (s->vorder.sort) {
    case VS_STATE:
        return state_rank(a->state) < state_rank(b->state);
    case VS_KIND:
        return strcmp(a->kind ? a->kind : "", b->kind ? b->kind : "") < 0;
    case VS_RATIO:
        return ratio_off(a) > ratio_off(b);
    default:
        return false;
    }
}

/* The verdict rows again (a new document, order or filter), the selection kept on its
 * verdict when it is still listed. */
static void relist_verdicts(struct sweep_state *s)
{
    int was = sel_verdict(s), n = s->have ? s->doc.nverdicts : 0;
    s->vis = xalloc_resize(s->vis, (size_t)(n ? n : 1) * sizeof(*s->vis));
    s->nvis = 0;
    for (int i = 0; i < n; i++) {
        char line[512], state[16];
        verdict_line(&s->doc.verdicts[i], line, sizeof(line), state, sizeof(state));
        if (ui_holds(line, s->vorder.filter.text))
            s->vis[s->nvis++] = i;
    }
    ui_order_sort(&s->vorder, s->vis, s->nvis, verdict_before, s);
    int keep = 0;
    for (int k = 0; k < s->nvis; k++)
        if (s->vis[k] == was)
            keep = k;
    s->vlist.sel = keep;
}

static void verdict_row(void *ctx, struct ui *u, int y, int x, int w, int k, bool sel)
{
    const struct sweep_state *s = ctx;
    char line[512], state[16];
    verdict_line(&s->doc.verdicts[s->vis[k]], line, sizeof(line), state, sizeof(state));
    enum theme_role r = !strcmp(state, "NAMED")     ? ROLE_ERROR
                        : !strcmp(state, "SUSPECT") ? ROLE_WARN
                                                    : ROLE_DIM;
    ui_text_pad(u, y, x, w, sel ? ROLE_SELECTED : r, line);
}

static void draw_verdicts(struct app *a, struct ui *u, const struct rect *r)
{
    struct sweep_state *s = st(a);
    int n = s->have ? s->doc.nverdicts : 0;
    char title[192], order[96], shown[32] = "";
    ui_order_text(&s->vorder, order, sizeof(order));
    if (s->nvis < n)
        snprintf(shown, sizeof(shown), ", %d shown", s->nvis);
    snprintf(title, sizeof(title), "Verdicts (%d%s%s)%s", n, shown, order,
             n ? ": Tab, Enter jumps to the cell" : "");
    ui_box(u, r, title, a->focus == 2);
    struct rect in = ui_inner(r);
    if (in.h <= 0)
        return;
    if (!n) {
        const char *sum = s->have ? results_str_get(&s->doc.summary) : NULL;
        ui_text(u, in.y, in.x, in.w, ROLE_DIM, sum ? sum : "no verdicts");
        return;
    }
    if (!s->nvis) {
        ui_text(u, in.y, in.x, in.w, ROLE_DIM,
                "No verdict holds the filter's text (\\ then Enter lists them all).");
        return;
    }
    ui_list_clamp(&s->vlist, s->nvis);
    ui_list_follow(&s->vlist, in.h);
    ui_list_draw(u, &in, &s->vlist, s->nvis, a->focus == 2, verdict_row, s);
    if (s->vlist.top + in.h < s->nvis)
        ui_text(u, r->y + r->h - 1, r->x + r->w - 8, 6, ROLE_BORDER, " more ");
}

static void sweep_draw(struct app *a, struct ui *u, const struct layout *l)
{
    draw_matrix(a, u, &l->pane[0]);
    draw_detail(a, u, &l->pane[1]);
    draw_verdicts(a, u, &l->pane[2]);
    ui_order_draw(u, l->status.y - 1, l->cols, &st(a)->vorder, "any text of the verdict");
}

/* ---- keys ---- */

static void jump(struct app *a)
{
    struct sweep_state *s = st(a);
    struct sweep_grid_cursor c;
    int vi = sel_verdict(s);
    if (!s->have || vi < 0 || !sweep_grid_verdict_target(&s->doc, vi, &c)) {
        app_message(a, ROLE_WARN, "this verdict names no rank: nothing to jump to");
        return;
    }
    const struct results_sweep_verdict *v = &s->doc.verdicts[vi];
    s->m = sweep_grid_metric_of(v->metric);
    const char *x = results_sweep_transport(&v->transport);
    for (int i = 0; i < NXPORTS; i++)
        if (!strcmp(x, xports[i]) && i != s->xport) {
            s->xport = i;
            rebuild(s);
        }
    s->cur = c;
    a->focus = 0;
}

static int sweep_key(struct app *a, int ch)
{
    struct sweep_state *s = st(a);
    int n = s->have ? s->doc.nranks : 0;
    /* The verdicts' order and filter, from either pane (they bring the focus there). */
    if (app_order_key(a, &s->vorder, ch, "Verdicts") != UI_ORDER_NONE) {
        relist_verdicts(s);
        a->focus = 2;
        return REACT_REDRAW;
    }
    switch (ch) {
    case '\t':
    case KEY_BTAB:
        a->focus = a->focus == 2 ? 0 : 2;
        return REACT_REDRAW;
    case 'b':
        s->m = SWEEP_GRID_BW;
        return REACT_REDRAW;
    case 'l':
        s->m = SWEEP_GRID_LAT_P50;
        return REACT_REDRAW;
    case 'p':
        s->m = SWEEP_GRID_LAT_P99;
        return REACT_REDRAW;
    case 't': {
        /* The next transport with pairs (TCP's matrix when none has). */
        int x = s->xport;
        for (int k = 1; k <= NXPORTS && s->have; k++)
            if (have_xport(&s->doc, (s->xport + k) % NXPORTS)) {
                x = (s->xport + k) % NXPORTS;
                break;
            }
        if (x == s->xport) {
            app_message(a, ROLE_INFO, "only %s pairs in this sweep", xports[x]);
            return REACT_REDRAW;
        }
        s->xport = x;
        rebuild(s);
        return REACT_REDRAW;
    }
    case 'r':
        if (!s->path[0])
            return REACT_HANDLED;
        reload(s);
        if (!s->problem[0])
            app_message(a, ROLE_INFO, "read %s again", s->path);
        return REACT_REDRAW;
    default:
        break;
    }
    int d = ui_nav_step(ch);
    if (a->focus == 2) {
        if (d)
            return ui_list_move(&s->vlist, s->nvis, d) ? REACT_REDRAW : REACT_HANDLED;
        if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
            jump(a);
            return REACT_REDRAW;
        }
        if (ch == 27) {
            a->focus = 0;
            return REACT_REDRAW;
        }
        return REACT_NONE;
    }
    if (d) {
        sweep_grid_cursor_move(&s->cur, n, d, 0);
        return REACT_REDRAW;
    }
    if (ch == KEY_LEFT || ch == KEY_RIGHT) {
        sweep_grid_cursor_move(&s->cur, n, 0, ch == KEY_LEFT ? -1 : 1);
        return REACT_REDRAW;
    }
    return REACT_NONE;
}

static const char *sweep_keys(const struct app *a)
{
    const struct sweep_state *s = a->vstate[VIEW_SWEEP];
    if (a->focus == 2)
        return "Up/Down verdict  Enter jump to its cell  Tab matrix  b/l/p metric  > sort  \\ "
               "filter";
    if (several_xports(s))
        return s->follow ? "arrows move  b/l/p metric  t transport  Tab verdicts  r re-read "
                           "(following)"
                         : "arrows move  b/l/p metric  t transport  Tab verdicts  r re-read";
    return s->follow ? "arrows move  b bw  l p50  p p99  Tab verdicts  r re-read (following)"
                     : "arrows move  b bw  l p50  p p99  Tab verdicts  r re-read";
}

/* A click on a cell moves the cursor there (on a rank's number: the rank itself), on a
 * verdict selects it. */
static int sweep_click(struct app *a, int pane, int row, int col)
{
    struct sweep_state *s = st(a);
    if (!s->have)
        return REACT_HANDLED;
    const struct sweep_grid_layout *f = &s->fit;
    if (pane == 0) {
        int i = row - s->grid_y;
        if (i < 0 || i >= f->nrows)
            return REACT_HANDLED;
        s->cur.row = f->row0 + i;
        if (!f->summary) {
            int j = col < f->label_w ? -1 : (col - f->label_w) / f->cell_w;
            if (j >= f->ncols)
                return REACT_REDRAW;
            s->cur.col = j < 0 ? -1 : f->col0 + j;
        }
        return REACT_REDRAW;
    }
    if (pane == 2 && s->vlist.top + row < s->nvis) {
        s->vlist.sel = s->vlist.top + row;
        return REACT_REDRAW;
    }
    return REACT_HANDLED;
}

static void sweep_enter(struct app *a)
{
    struct sweep_state *s = st(a);
    if (s->path[0] && !s->have)
        reload(s);
    s->next_check_ns = 0; /* --attach: look at the file at the next tick */
}

static void sweep_init(struct app *a)
{
    struct sweep_state *s = xalloc_zero(1, sizeof(*s));
    a->vstate[VIEW_SWEEP] = s;
    snprintf(s->path, sizeof(s->path), "%s", a->sweep_path);
    s->follow = a->sweep_follow;
    s->cur.col = -1; /* the first rank itself */
    s->vorder = (struct ui_order){.nsorts = VS_COUNT, .names = verdict_sort_name};
    if (s->path[0])
        reload(s);
}

static void sweep_fini(struct app *a)
{
    struct sweep_state *s = st(a);
    if (!s)
        return;
    drop_doc(s);
    free(s->vis);
    free(s);
    a->vstate[VIEW_SWEEP] = NULL;
}

const struct view_ops view_sweep = {
    .name = "Sweep",
    .fkey = 7,
    .layout = LAYOUT_TOPO,
    .init = sweep_init,
    .fini = sweep_fini,
    .enter = sweep_enter,
    .draw = sweep_draw,
    .key = sweep_key,
    .tick = sweep_tick,
    .keys = sweep_keys,
    .click = sweep_click,
};
