/* view_results: the results view (F5): saved results newest first, plus the current run's;
 * Enter opens one (its test conditions and outcome below, v the full report), Space marks
 * up to two and c compares them side by side, differing conditions highlighted with why. */
/* timegm and realpath are GNU / POSIX extensions. */
#define _GNU_SOURCE
#include "tui/views.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/results/compare.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "text/run_text.h"
#include "tui/ui_list.h"

#define MAX_ENTRIES 500

struct entry {
    char path[512]; /* "" for the current run's unsaved results */
    bool current;   /* holds the explorer's current results (app->results) */
    bool bad;       /* could not be read: error says why */
    char error[200];
    time_t mtime;
    struct compare_brief brief;
};

enum mode { M_NONE, M_OPEN, M_COMPARE };

struct line {
    enum theme_role role;
    char text[512];
};

struct lines {
    int n, cap;
    struct line *v;
};

struct res_state {
    struct entry *e;
    int n, cap;
    struct ui_list list; /* the saved results: sel and top count rows of vis */
    /* The rows: entries the filter keeps, in the order chosen (> or F6, <, \ or /). */
    struct ui_order order;
    int *vis, nvis;
    int was_sel;       /* the entry selected before a filter listed no row (-1: none) */
    char mark[2][512]; /* marked entries by path ("" = the unsaved current run) */
    int nmarks;
    enum mode mode;
    bool report; /* v: the full text report of the opened result */
    bool zoom;   /* z: the focused lower pane over the whole lower area */
    /* the opened result */
    char open_path[512];
    bool open_current;
    struct results_doc doc;     /* nruns 0 when none is open */
    struct compare_result self; /* its conditions and outcome (the result against itself) */
    struct strbuf report_text;
    char open_error[300];
    /* the comparison */
    struct compare_result cmp;
    bool have_cmp;
    char cmp_name[2][128];
    struct ui_list lpane, rpane; /* scroll of the lower panes (top only) */
    int hscroll;
    /* what the list was built from */
    const cJSON *seen_results;
    char seen_path[512];
    char dir[768];
};

static struct res_state *st(struct app *a)
{
    return a->vstate[VIEW_RESULTS];
}

/* The list's orders: its own (the unsaved run, then newest first), then by name, peer,
 * status (the ones that did not end ok first), the highest p99, the highest goodput. */
enum res_sort { RS_NEWEST, RS_MIX, RS_PEER, RS_STATUS, RS_P99, RS_GBPS, RS_COUNT };
static const char *const res_sort_name[RS_COUNT] = {"newest", "mix", "peer",
                                                    "status", "p99", "goodput"};

/* The entry the selection is on; -1 when no row is listed. */
static int sel_entry(const struct res_state *s)
{
    return s->list.sel >= 0 && s->list.sel < s->nvis ? s->vis[s->list.sel] : -1;
}

static void relist(struct res_state *s);

/* Select entry i's row, when it is listed. */
static void select_entry(struct res_state *s, int i)
{
    for (int k = 0; k < s->nvis; k++)
        if (s->vis[k] == i)
            s->list.sel = k;
}

/* ---- lines of text with a role, built per draw ---- */

static void lines_add(struct lines *ls, enum theme_role r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void lines_add(struct lines *ls, enum theme_role r, const char *fmt, ...)
{
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? 2 * ls->cap : 64;
        ls->v = xalloc_resize(ls->v, (size_t)ls->cap * sizeof(*ls->v));
    }
    struct line *l = &ls->v[ls->n++];
    l->role = r;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof(l->text), fmt, ap);
    va_end(ap);
}

/* Word-wrap text to width columns; continuation lines get indent spaces. */
static void lines_wrap(struct lines *ls, enum theme_role r, int indent, const char *text, int width)
{
    char buf[512];
    int w = width > 10 ? width : 10;
    const char *s = text;
    bool first = true;
    while (*s) {
        int n = (int)strlen(s);
        if (n > w) {
            n = w;
            while (n > 0 && s[n] != ' ')
                n--;
            if (n == 0)
                n = w;
        }
        snprintf(buf, sizeof(buf), "%*s%.*s", first ? 0 : indent, "", n, s);
        lines_add(ls, r, "%s", buf);
        s += n;
        while (*s == ' ')
            s++;
        first = false;
        w = width - indent > 10 ? width - indent : 10;
    }
}

/* Draw lines into the inside of a box from line *top (clamped), columns from hscroll. */
static void lines_draw(struct ui *u, const struct rect *in, const struct lines *ls,
                       struct ui_list *sc, int hscroll)
{
    ui_list_fit(sc, ls->n, in->h);
    for (int i = 0; i < in->h && sc->top + i < ls->n; i++) {
        const struct line *l = &ls->v[sc->top + i];
        int len = (int)strlen(l->text);
        ui_text(u, in->y + i, in->x, in->w, l->role, hscroll < len ? l->text + hscroll : "");
    }
}

static void lines_free(struct lines *ls)
{
    free(ls->v);
    memset(ls, 0, sizeof(*ls));
}

/* ---- the list ---- */

static bool same_file(const char *x, const char *y)
{
    if (!x[0] || !y[0])
        return false;
    if (!strcmp(x, y))
        return true;
    char rx[PATH_MAX], ry[PATH_MAX];
    return realpath(x, rx) && realpath(y, ry) && !strcmp(rx, ry);
}

static struct entry *add_entry(struct res_state *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->e = xalloc_resize(s->e, (size_t)s->cap * sizeof(*s->e));
    }
    struct entry *e = &s->e[s->n++];
    memset(e, 0, sizeof(*e));
    return e;
}

static int newest_first(const void *x, const void *y)
{
    const struct entry *a = x, *b = y;
    /* The unsaved run first, then by start time, then by modification time. */
    bool ua = a->current && !a->path[0], ub = b->current && !b->path[0];
    if (ua != ub)
        return ua ? -1 : 1;
    int c = strcmp(b->brief.started_at, a->brief.started_at);
    if (c)
        return c;
    return (b->mtime > a->mtime) - (b->mtime < a->mtime);
}

static void scan(struct app *a)
{
    struct res_state *s = st(a);
    char keep[512] = "";
    if (sel_entry(s) >= 0)
        snprintf(keep, sizeof(keep), "%s", s->e[sel_entry(s)].path);
    s->n = 0;
    app_results_dir(s->dir, sizeof(s->dir));
    DIR *d = opendir(s->dir);
    struct dirent *de;
    while (d && (de = readdir(d)) && s->n < MAX_ENTRIES) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json"))
            continue;
        char path[1100];
        snprintf(path, sizeof(path), "%s/%s", s->dir, de->d_name);
        struct stat sb;
        if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
            continue;
        struct entry *e = add_entry(s);
        snprintf(e->path, sizeof(e->path), "%s", path);
        e->mtime = sb.st_mtime;
        struct results_doc doc;
        struct ft_err err = {0};
        if (results_doc_load(path, &doc, &err) < 0) {
            e->bad = true;
            snprintf(e->error, sizeof(e->error), "%s", err.msg);
            snprintf(e->brief.mix, sizeof(e->brief.mix), "%s", de->d_name);
            snprintf(e->brief.status, sizeof(e->brief.status), "bad");
        } else {
            compare_run_brief(&doc.runs[0], &e->brief);
            results_doc_free(&doc);
        }
    }
    if (d)
        closedir(d);
    if (a->results) {
        struct entry *cur = NULL;
        for (int i = 0; i < s->n && !cur; i++)
            if (same_file(s->e[i].path, a->results_path))
                cur = &s->e[i];
        if (!cur) {
            cur = add_entry(s);
            snprintf(cur->path, sizeof(cur->path), "%s", a->results_path);
            cur->mtime = time(NULL);
        }
        cur->current = true;
        cur->bad = false;
        const struct results_run *run = app_results_run(a);
        if (run)
            compare_run_brief(run, &cur->brief);
        else
            memset(&cur->brief, 0, sizeof(cur->brief));
    }
    if (s->n > 1) /* s->e is NULL while the list is empty */
        qsort(s->e, (size_t)s->n, sizeof(*s->e), newest_first);
    s->seen_results = a->results;
    snprintf(s->seen_path, sizeof(s->seen_path), "%s", a->results_path);
    s->nvis = 0;
    s->was_sel = -1;
    relist(s);
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->e[i].path, keep))
            select_entry(s, i);
    /* Marks of files that went away are dropped. */
    for (int m = 0; m < s->nmarks; m++) {
        bool found = false;
        for (int i = 0; i < s->n && !found; i++)
            found = !strcmp(s->e[i].path, s->mark[m]);
        if (!found) {
            if (m == 0)
                memcpy(s->mark[0], s->mark[1], sizeof(s->mark[0]));
            s->nmarks--;
            m--;
        }
    }
}

static int mark_of(const struct res_state *s, const struct entry *e)
{
    for (int m = 0; m < s->nmarks; m++)
        if (!strcmp(s->mark[m], e->path))
            return m;
    return -1;
}

/* "2026-11-30T04:21:05.255Z" as local time "2026-11-30 05:21". */
static void local_time(const char *iso, char *buf, size_t len)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    if (sscanf(iso, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec) != 6) {
        snprintf(buf, len, "%s", iso[0] ? iso : "?");
        return;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    struct tm lt;
    localtime_r(&t, &lt);
    strftime(buf, len, "%Y-%m-%d %H:%M", &lt);
}

static void entry_line(const struct res_state *s, const struct entry *e, char *buf, size_t len)
{
    char when[32], peer[24], nums[160] = "";
    if (e->brief.started_at[0])
        local_time(e->brief.started_at, when, sizeof(when));
    else
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M", localtime(&e->mtime));
    const char *p = e->brief.peer;
    snprintf(peer, sizeof(peer), "%s", !strncmp(p, "loopback", 8) ? "loopback" : p[0] ? p : "-");
    if (e->bad) {
        /* The message starts with the path; the list shows the file name already. */
        size_t pl = strlen(e->path);
        const char *msg = e->error;
        if (!strncmp(msg, e->path, pl) && !strncmp(msg + pl, ": ", 2))
            msg += pl + 2;
        snprintf(nums, sizeof(nums), "%s", msg);
    } else {
        const struct compare_brief *b = &e->brief;
        size_t n = 0;
        if (b->have_p99)
            n += (size_t)snprintf(nums + n, sizeof(nums) - n, "p99 %.1f us  ", b->p99_us);
        if (b->have_gbps && n < sizeof(nums))
            n += (size_t)snprintf(nums + n, sizeof(nums) - n, "%.2f %sGb/s  ", b->gbps,
                                  b->gbps_simulated ? "sim " : "");
        if (b->have_p50 && n < sizeof(nums))
            n += (size_t)snprintf(nums + n, sizeof(nums) - n, "p50 %.1f us  ", b->p50_us);
        if (b->foreground[0] && n < sizeof(nums))
            snprintf(nums + n, sizeof(nums) - n, "(%s, %s)", b->foreground, b->phase);
    }
    int m = mark_of(s, e);
    snprintf(buf, len, "%c%c%-16s %-15.15s %-11.11s %-7.7s %s", m < 0 ? ' ' : "AB"[m],
             e -> current ? '*' : ' ', when, e->brief.mix, peer,
             !strcmp(e->brief.status, "interrupted") ? "partial" : e->brief.status, nums);
}

/* Does entry i come before entry j in the order chosen? (Larger numbers first; an entry
 * without the number last.) */
static bool entry_before(void *ctx, int i, int j)
{
    const struct res_state *s = ctx;
    const struct compare_brief *a = &s->e[i].brief, *b = &s->e[j].brief;
    switch (s->order.sort) {
    case RS_MIX:
        return strcmp(a->mix, b->mix) < 0;
    case RS_PEER:
        return strcmp(a->peer, b->peer) < 0;
    case RS_STATUS:
        return strcmp(a->status, "ok") && !strcmp(b->status, "ok");
    case RS_P99:
        return a->have_p99 && (!b->have_p99 || a->p99_us > b->p99_us);
    case RS_GBPS:
        return a->have_gbps && (!b->have_gbps || a->gbps > b->gbps);
    default:
        return false;
    }
}

/* The rows again (after a scan, a new order or filter), the selection kept on its entry
 * when it is still listed. */
static void relist(struct res_state *s)
{
    int was = sel_entry(s) >= 0 ? sel_entry(s) : s->was_sel;
    s->vis = xalloc_resize(s->vis, (size_t)(s->n ? s->n : 1) * sizeof(*s->vis));
    s->nvis = 0;
    for (int i = 0; i < s->n; i++) {
        char line[512];
        entry_line(s, &s->e[i], line, sizeof(line));
        if (ui_holds(line, s->order.filter.text))
            s->vis[s->nvis++] = i;
    }
    ui_order_sort(&s->order, s->vis, s->nvis, entry_before, s);
    s->list.sel = 0;
    select_entry(s, was);
    s->was_sel = sel_entry(s) >= 0 ? sel_entry(s) : was;
}

/* ---- open and compare ---- */

static void close_open(struct res_state *s)
{
    results_doc_free(&s->doc);
    compare_free(&s->self);
    strbuf_reset(&s->report_text);
    s->open_error[0] = '\0';
    s->open_path[0] = '\0';
    s->open_current = false;
}

/* The results of an entry (the caller frees them): 0, or -errno with err set when
 * unreadable. */
static int entry_doc(struct app *a, const struct entry *e, struct results_doc *doc,
                     struct ft_err *err)
{
    if (e->current && a->results)
        return results_json_read(a->results, "this run's results", doc, err);
    return results_doc_load(e->path, doc, err);
}

static void open_entry(struct app *a, int i)
{
    struct res_state *s = st(a);
    if (i < 0 || i >= s->n)
        return;
    const struct entry *e = &s->e[i];
    close_open(s);
    s->mode = M_OPEN;
    s->lpane.top = s->rpane.top = s->hscroll = 0;
    snprintf(s->open_path, sizeof(s->open_path), "%s", e->path);
    s->open_current = e->current;
    struct ft_err err = {0};
    if (entry_doc(a, e, &s->doc, &err) < 0) {
        snprintf(s->open_error, sizeof(s->open_error), "%s", err.msg);
        return;
    }
    compare_runs(&s->doc.runs[0], &s->doc.runs[0], &s->self);
    run_text_summary(&s->report_text, &s->doc.runs[0]);
}

static int find_entry(const struct res_state *s, const char *path)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->e[i].path, path))
            return i;
    return -1;
}

static void entry_name(const struct entry *e, char *buf, size_t len)
{
    char when[32] = "";
    if (e->brief.started_at[0])
        local_time(e->brief.started_at, when, sizeof(when));
    snprintf(buf, len, "%s %s%s", e->brief.mix, when,
             e->current && !e->path[0] ? " (this run)" : "");
}

/* Compare the two marked results (or the one marked and the selected one). */
static void compare_marked(struct app *a)
{
    struct res_state *s = st(a);
    int ia = -1, ib = -1;
    if (s->nmarks == 2) {
        ia = find_entry(s, s->mark[0]);
        ib = find_entry(s, s->mark[1]);
    } else if (s->nmarks == 1 && sel_entry(s) >= 0 && strcmp(s->e[sel_entry(s)].path, s->mark[0])) {
        ia = find_entry(s, s->mark[0]);
        ib = sel_entry(s);
    }
    if (ia < 0 || ib < 0) {
        app_message(a, ROLE_WARN, "mark two results with Space first, then press c");
        return;
    }
    struct ft_err err = {0};
    struct results_doc da, db;
    if (entry_doc(a, &s->e[ia], &da, &err) < 0) {
        app_message(a, ROLE_ERROR, "%s", err.msg);
        return;
    }
    if (entry_doc(a, &s->e[ib], &db, &err) < 0) {
        results_doc_free(&da);
        app_message(a, ROLE_ERROR, "%s", err.msg);
        return;
    }
    if (s->have_cmp)
        compare_free(&s->cmp);
    compare_runs(&da.runs[0], &db.runs[0], &s->cmp);
    s->have_cmp = true;
    results_doc_free(&da);
    results_doc_free(&db);
    entry_name(&s->e[ia], s->cmp_name[0], sizeof(s->cmp_name[0]));
    entry_name(&s->e[ib], s->cmp_name[1], sizeof(s->cmp_name[1]));
    s->mode = M_COMPARE;
    s->report = false;
    s->lpane.top = s->rpane.top = s->hscroll = 0;
}

static void toggle_mark(struct app *a)
{
    struct res_state *s = st(a);
    if (sel_entry(s) < 0)
        return;
    const struct entry *e = &s->e[sel_entry(s)];
    int m = mark_of(s, e);
    if (m >= 0) {
        if (m == 0)
            memcpy(s->mark[0], s->mark[1], sizeof(s->mark[0]));
        s->nmarks--;
        return;
    }
    if (e->bad) {
        app_message(a, ROLE_WARN, "%s", e->error);
        return;
    }
    if (s->nmarks == 2) {
        app_message(a, ROLE_WARN, "two results are marked: Space on one of them unmarks it");
        return;
    }
    snprintf(s->mark[s->nmarks++], sizeof(s->mark[0]), "%s", e->path);
    if (s->nmarks == 2)
        app_message(a, ROLE_INFO, "two marked: c compares them");
}

/* ---- the lower panes' text ---- */

static void fmt_metric(char *buf, size_t len, bool in, bool valid, double v, int m)
{
    if (!in)
        snprintf(buf, len, "-");
    else if (!valid)
        snprintf(buf, len, "n/a");
    else if (m == COMPARE_GBPS)
        snprintf(buf, len, "%.3f", v);
    else
        snprintf(buf, len, v < 1000 ? "%.2f" : v < 100000 ? "%.1f" : "%.0f", v);
}

static const char *short_metric(int m)
{
    static const char *const names[] = {"p50 us", "p99 us", "p99.9 us", "Gb/s"};
    return names[m];
}

/* Where a group of conditions goes in the opened result: the path first (ports, netdevs),
 * then what ran (flows, neighbours), then the run, the hosts and the versions. */
static int group_rank(const char *g)
{
    static const char *const order[] = {"port", "netdev", "flow ", "phase ", "run", "hosts"};
    for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
        if (!strncmp(g, order[i], strlen(order[i])))
            return i;
    return !strcmp(g, "versions") ? 7 : 6;
}

/* The opened result's conditions, grouped. */
static void open_conditions(const struct res_state *s, struct lines *ls, int width)
{
    if (s->open_error[0]) {
        lines_wrap(ls, ROLE_ERROR, 2, s->open_error, width);
        return;
    }
    for (int rank = 0; rank <= 7; rank++) {
        const char *group = "";
        for (int i = 0; i < s->self.nconds; i++) {
            const struct compare_cond *c = &s->self.conds[i];
            if (group_rank(c->group) != rank)
                continue;
            if (strcmp(c->group, group)) {
                lines_add(ls, ROLE_INFO, "%s", c->group);
                group = c->group;
            }
            lines_add(ls, ROLE_NORMAL, "  %s: %s", c->field, c->a);
        }
    }
}

/* Outcome rows: one side (opened) or both with B/A (compared). */
static void outcome_lines(const struct compare_result *r, bool both, struct lines *ls, int width)
{
    if (r->nrows == 0) {
        lines_add(ls, ROLE_DIM, "no measured points");
        return;
    }
    for (int i = 0; i < r->nrows; i++) {
        const struct compare_row *w = &r->rows[i];
        char stx[64] = "";
        if (w->in_a && strcmp(w->status_a, "ok"))
            snprintf(stx, sizeof(stx), "  A %s", w->status_a);
        if (both && w->in_b && strcmp(w->status_b, "ok"))
            snprintf(stx + strlen(stx), sizeof(stx) - strlen(stx), "  B %s", w->status_b);
        lines_add(ls, stx[0] ? ROLE_WARN : ROLE_HEADER, "%s %s %s%s%s", w->phase, w->flow, w->point,
                  both && !w->in_a   ? " (B only)"
                  : both && !w->in_b ? " (A only)"
                                     : "",
                  stx);
        if (!both) {
            char v[COMPARE_NMETRICS][24];
            for (int m = 0; m < COMPARE_NMETRICS; m++)
                fmt_metric(v[m], sizeof(v[m]), w->in_a, w->valid_a[m], w->a[m], m);
            bool lat =
                w->valid_a[COMPARE_P50] || w->valid_a[COMPARE_P99] || w->valid_a[COMPARE_P999];
            /* A simulated flow's goodput is over simulated time, its latency too. */
            const char *gb = w->sim_a ? "Gb/s in simulated time" : "Gb/s";
            /* Latency and goodput on one line when it fits the pane, else on two. */
            char one[256];
            snprintf(one, sizeof(one), "  p50 %s  p99 %s  p99.9 %s us (%s)  %s Gb/s", v[0], v[1],
                     v[2], w->latency_kind, v[3]);
            if (!lat)
                lines_add(ls, ROLE_NORMAL, "  %s %s", v[3], gb);
            else if (!w->sim_a && ui_width(one) <= width)
                lines_add(ls, ROLE_NORMAL, "%s", one);
            else {
                /* The latency's kind after it when that fits, else on a line of its own. */
                char kind[96];
                snprintf(kind, sizeof(kind), " (%s%s)", w->sim_a ? "simulated " : "",
                         w->latency_kind);
                snprintf(one, sizeof(one), "  p50 %s  p99 %s  p99.9 %s us", v[0], v[1], v[2]);
                bool after = ui_width(one) + ui_width(kind) <= width;
                lines_add(ls, ROLE_NORMAL, "%s%s", one, after ? kind : "");
                if (!after)
                    lines_add(ls, ROLE_DIM, "   %s", kind + 1);
                lines_add(ls, ROLE_NORMAL, "  %s %s", v[3], gb);
            }
            continue;
        }
        lines_add(ls, ROLE_DIM, "  %-8s %9s %9s %6s", "", "A", "B", "B/A");
        /* Each metric's line in the colour of its change, with the word (latency down is
         * better, goodput up; compare_change_of's thresholds, stated in the help). */
        for (int m = 0; m < COMPARE_NMETRICS; m++) {
            if (m != COMPARE_GBPS && !w->valid_a[m] && !w->valid_b[m])
                continue;
            char x[24], y[24], q[24] = "";
            fmt_metric(x, sizeof(x), w->in_a, w->valid_a[m], w->a[m], m);
            fmt_metric(y, sizeof(y), w->in_b, w->valid_b[m], w->b[m], m);
            double ratio;
            enum compare_change ch = COMPARE_CHANGE_NONE;
            if (compare_ratio(w, m, &ratio)) {
                snprintf(q, sizeof(q), "x%.2f", ratio);
                ch = compare_change_of(compare_metric_lower_better(m), ratio);
            }
            lines_add(ls, theme_role_of_change(ch), "  %-8s %9s %9s %6s %s",
                      m == COMPARE_GBPS && (w->sim_a || w->sim_b) ? "sim Gb/s" : short_metric(m), x,
                      y, q, compare_change_str(ch));
        }
    }
}

/* The compared conditions: the verdict, what differs (worst first, with why), the rest. */
static void compare_conditions(const struct res_state *s, struct lines *ls, int width)
{
    const struct compare_result *r = &s->cmp;
    char buf[512];
    snprintf(buf, sizeof(buf), "A: %s", s->cmp_name[0]);
    lines_wrap(ls, ROLE_NORMAL, 3, buf, width);
    snprintf(buf, sizeof(buf), "B: %s", s->cmp_name[1]);
    lines_wrap(ls, ROLE_NORMAL, 3, buf, width);
    lines_wrap(ls,
               r->worst == COMPARE_UNFAIR    ? ROLE_ERROR
               : r->worst == COMPARE_CAUTION ? ROLE_WARN
                                             : ROLE_OK,
               0, r->verdict, width);
    /* The flow class that got worse in B (the scoreboards'), with its numbers. */
    if (r->worse[0])
        lines_wrap(ls, ROLE_WARN, 0, r->worse, width);
    static const char *const tag[] = {"", "info", "CAUTION", "UNFAIR"};
    for (int sv = COMPARE_UNFAIR; sv >= COMPARE_INFO; sv--)
        for (int i = 0; i < r->nconds; i++) {
            const struct compare_cond *c = &r->conds[i];
            if (c->severity != (enum compare_severity)sv)
                continue;
            lines_add(ls, ROLE_DIFF, "%s %s: %s", tag[sv], c->group, c->field);
            int vw = (width - 8) / 2;
            if (width >= 60 && (int)strlen(c->a) <= vw && (int)strlen(c->b) <= vw)
                lines_add(ls, ROLE_DIFF, "  A %-*s  B %s", vw, c->a, c->b);
            else {
                lines_add(ls, ROLE_DIFF, "  A %s", c->a);
                lines_add(ls, ROLE_DIFF, "  B %s", c->b);
            }
            if (c->why) {
                snprintf(buf, sizeof(buf), "  why: %s", c->why);
                lines_wrap(ls, ROLE_DIM, 7, buf, width);
            }
        }
    int same = 0;
    for (int i = 0; i < r->nconds; i++)
        same += r->conds[i].same;
    lines_add(ls, ROLE_INFO, "The same (%d):", same);
    for (int i = 0; i < r->nconds; i++)
        if (r->conds[i].same)
            lines_add(ls, ROLE_NORMAL, "  %s %s: %s", r->conds[i].group, r->conds[i].field,
                      r->conds[i].a);
}

static void report_lines(const struct res_state *s, struct lines *ls)
{
    if (s->open_error[0]) {
        lines_add(ls, ROLE_ERROR, "%s", s->open_error);
        return;
    }
    const char *p = s->report_text.s;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        int n = e ? (int)(e - p) : (int)strlen(p);
        lines_add(ls, ROLE_NORMAL, "%.*s", n, p);
        p += n + (e ? 1 : 0);
    }
}

/* ---- drawing ---- */

static void entry_row(void *ctx, struct ui *u, int y, int x, int w, int i, bool sel)
{
    struct res_state *s = ctx;
    const struct entry *e = &s->e[s->vis[i]];
    char line[512];
    entry_line(s, e, line, sizeof(line));
    enum theme_role role = e->bad                          ? ROLE_ERROR
                           : strcmp(e->brief.status, "ok") ? ROLE_WARN
                                                           : ROLE_NORMAL;
    ui_text_pad(u, y, x, w, sel ? ROLE_SELECTED : role, line);
}
static void draw_list(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct res_state *s = st(a);
    int saved = 0;
    bool unsaved = false;
    for (int i = 0; i < s->n; i++) {
        saved += s->e[i].path[0] != 0;
        unsaved |= s->e[i].current && !s->e[i].path[0];
    }
    char title[1024], order[96] = "", shown[48] = "";
    ui_order_text(&s->order, order, sizeof(order));
    if (s->nvis < s->n)
        snprintf(shown, sizeof(shown), ", %d shown", s->nvis);
    snprintf(title, sizeof(title), "Results: %d saved%s, %d marked%s%s  (%s)", saved,
             unsaved ? " + this run, not saved (w saves)" : "", s->nmarks, shown, order, s->dir);
    ui_box(u, r, title, focus);
    struct rect in = ui_inner(r);
    if (in.h <= 0)
        return;
    ui_text_pad(u, in.y, in.x, in.w, ROLE_DIM,
                "  started          mix             peer        status  foreground, last point");
    int h = in.h - 1;
    if (s->n == 0) {
        ui_text(u, in.y + 1, in.x, in.w, ROLE_DIM,
                "No saved results yet: run a test (F2), then w saves it here; or fabtop run "
                "-o FILE and fabtop --results FILE.");
        return;
    }
    if (s->nvis == 0) {
        ui_text(u, in.y + 1, in.x, in.w, ROLE_DIM,
                "No result holds the filter's text (\\ then Enter with nothing typed lists them "
                "all).");
        return;
    }
    ui_list_follow(&s->list, h);
    struct rect rows = {in.y + 1, in.x, h, in.w};
    ui_list_draw(u, &rows, &s->list, s->nvis, true, entry_row, s);
    if (s->list.top + h < s->nvis)
        ui_text(u, r->y + r->h - 1, r->x + r->w - 8, 6, ROLE_BORDER, " more ");
}

/* hscroll < 0: a pane that does not scroll sideways (its lines are wrapped to fit). */
static void draw_pane(struct ui *u, const struct rect *r, const char *title, bool focus,
                      const struct lines *ls, struct ui_list *sc, int hscroll)
{
    bool sideways = hscroll >= 0;
    hscroll = sideways ? hscroll : 0;
    ui_box(u, r, title, focus);
    struct rect in = ui_inner(r);
    lines_draw(u, &in, ls, sc, hscroll);
    if (sc->top + in.h < ls->n)
        ui_text(u, r->y + r->h - 1, r->x + r->w - 8, 6, ROLE_BORDER, " more ");
    /* Lines wider than the pane (the report's tables): say which way the rest is. */
    int widest = 0;
    for (int i = 0; i < ls->n; i++) {
        int w = ui_width(ls->v[i].text);
        widest = w > widest ? w : widest;
    }
    bool left = sideways && hscroll > 0, right = sideways && hscroll + in.w < widest;
    if (left || right)
        ui_text(u, r->y + r->h - 1, r->x + 2, 24, ROLE_BORDER,
                left && right ? " <- more -> "
                : left        ? " <- more "
                              : " more -> ");
}

static void draw_lower(struct app *a, struct ui *u, const struct layout *l)
{
    struct res_state *s = st(a);
    struct rect left = l->pane[1], right = l->pane[2];
    struct rect both = {left.y, left.x, left.h, right.x + right.w - left.x};
    struct lines lc = {0}, rc = {0};
    char lt[256], rt[256];
    if (s->mode == M_OPEN && s->report) {
        report_lines(s, &lc);
        snprintf(lt, sizeof(lt), "Report: %s (v: conditions/outcome, Left/Right scroll)",
                 s->open_current && !s->open_path[0] ? "this run, not saved" : s->open_path);
        draw_pane(u, &both, lt, a->focus != 0, &lc, &s->lpane, s->hscroll);
        lines_free(&lc);
        return;
    }
    bool zl = s->zoom && a->focus == 1, zr = s->zoom && a->focus == 2;
    int lw = (zl ? both.w : left.w) - 2, rw = (zr ? both.w : right.w) - 2;
    if (s->mode == M_NONE) {
        lines_wrap(&lc, ROLE_DIM, 0,
                   "Enter opens the selected result: its test conditions here, its numbers on "
                   "the right (v: the full report). Space marks up to two results; c compares "
                   "them side by side.",
                   lw);
        snprintf(lt, sizeof(lt), "Conditions");
        snprintf(rt, sizeof(rt), "Outcome");
    } else if (s->mode == M_OPEN) {
        open_conditions(s, &lc, lw);
        if (!s->open_error[0])
            outcome_lines(&s->self, false, &rc, rw);
        const char *mix = s->doc.nruns ? jsonutil_str(s->doc.runs[0].mix, "name") : NULL;
        snprintf(lt, sizeof(lt), "Conditions: %s", mix ? mix : "cannot read the file");
        snprintf(rt, sizeof(rt), "Outcome (us, Gb/s)");
    } else {
        compare_conditions(s, &lc, lw);
        outcome_lines(&s->cmp, true, &rc, rw);
        snprintf(lt, sizeof(lt), "A|B: %d unfair, %d caution, %d info",
                 s->cmp.ndiff[COMPARE_UNFAIR], s->cmp.ndiff[COMPARE_CAUTION],
                 s->cmp.ndiff[COMPARE_INFO]);
        snprintf(rt, sizeof(rt), "Outcome A|B (us, Gb/s; B/A)");
    }
    if (zl)
        draw_pane(u, &both, lt, true, &lc, &s->lpane, -1);
    else if (zr)
        draw_pane(u, &both, rt, true, &rc, &s->rpane, -1);
    else {
        draw_pane(u, &left, lt, a->focus == 1, &lc, &s->lpane, -1);
        draw_pane(u, &right, rt, a->focus == 2, &rc, &s->rpane, -1);
    }
    lines_free(&lc);
    lines_free(&rc);
}

static void results_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct res_state *s = st(a);
    draw_list(a, u, &l->pane[0], a->focus == 0);
    draw_lower(a, u, l);
    ui_order_draw(u, l->status.y - 1, l->cols, &s->order, "any text of the row");
}

/* ---- keys ---- */

static void open_current_if_any(struct app *a)
{
    struct res_state *s = st(a);
    for (int i = 0; i < s->n; i++)
        if (s->e[i].current) {
            select_entry(s, i);
            open_entry(a, i);
            return;
        }
}

static void results_enter(struct app *a)
{
    struct res_state *s = st(a);
    scan(a);
    if (s->mode == M_NONE)
        open_current_if_any(a);
}

static int results_tick(struct app *a)
{
    struct res_state *s = st(a);
    if (s->seen_results == a->results && !strcmp(s->seen_path, a->results_path))
        return REACT_NONE;
    bool was_current = s->mode == M_OPEN && s->open_current;
    scan(a);
    if (was_current || s->mode == M_NONE)
        open_current_if_any(a);
    return REACT_REDRAW;
}

static void save_current(struct app *a)
{
    struct ft_err err = {0};
    if (!a->results) {
        app_message(a, ROLE_WARN, "no unsaved run: every result here is saved");
        return;
    }
    if (a->results_path[0]) {
        app_message(a, ROLE_INFO, "already saved: %s", a->results_path);
        return;
    }
    int rc = app_save_results(a, NULL, &err);
    if (rc != 0)
        app_message(a, rc < 0 ? ROLE_ERROR : ROLE_WARN, "%s", err.msg);
    else
        app_message(a, ROLE_OK, "saved %s", a->results_path);
}

static int scroll_by(struct ui_list *sc, int d)
{
    ui_list_scroll(sc, d);
    return REACT_REDRAW;
}

static int scroll_hsideways(int *v, int d)
{
    *v += d;
    if (*v < 0)
        *v = 0;
    return REACT_REDRAW;
}

static int results_key(struct app *a, int ch)
{
    struct res_state *s = st(a);
    /* The list's order and filter, from any pane but the report (they bring the focus
     * back to the list). */
    if ((!(s->report && s->mode == M_OPEN) || s->order.filter.active) &&
        app_order_key(a, &s->order, ch, "Results") != UI_ORDER_NONE) {
        relist(s);
        a->focus = 0;
        return REACT_REDRAW;
    }
    /* Up/Down, PgUp/PgDn, Home/End (and hjkl, g/G) move the selection; the rest here. */
    int d = ui_nav_step(ch);
    if (!d) {
        switch (ch) {
        case '\n':
        case '\r':
        case KEY_ENTER:
            open_entry(a, sel_entry(s));
            return REACT_REDRAW;
        case ' ':
            toggle_mark(a);
            return REACT_REDRAW;
        case 'c':
            compare_marked(a);
            return REACT_REDRAW;
        case 'v':
            if (s->mode != M_OPEN) {
                app_message(a, ROLE_WARN, "open a result first (Enter)");
                return REACT_REDRAW;
            }
            s->report = !s->report;
            s->lpane.top = s->hscroll = 0;
            if (s->report && a->focus == 0)
                a->focus = 1;
            return REACT_REDRAW;
        case 'z':
            s->zoom = !s->zoom;
            if (s->zoom && a->focus == 0)
                a->focus = 1;
            return REACT_REDRAW;
        case 'r':
            scan(a);
            app_message(a, ROLE_INFO, "%d results in %s", s->n, s->dir);
            return REACT_REDRAW;
        case 'w':
            save_current(a);
            return REACT_REDRAW;
        case 27:
            if (s->mode == M_NONE)
                return REACT_HANDLED;
            s->mode = s->mode == M_COMPARE && s->doc.nruns ? M_OPEN : M_NONE;
            s->report = false;
            return REACT_REDRAW;
        case KEY_LEFT:
        case 'h':
            if (s->report && s->mode == M_OPEN)
                return scroll_hsideways(&s->hscroll, -8);
            a->focus = (a->focus + 2) % 3;
            return REACT_REDRAW;
        case KEY_RIGHT:
        case 'l':
            if (s->report && s->mode == M_OPEN)
                return scroll_hsideways(&s->hscroll, 8);
            a->focus = (a->focus + 1) % 3;
            return REACT_REDRAW;
        default:
            return REACT_NONE;
        }
    }
    if (a->focus == 0 && !(s->report && s->mode == M_OPEN)) {
        return ui_list_move(&s->list, s->nvis, d) ? REACT_REDRAW : REACT_HANDLED;
    }
    /* Lower panes: scroll (drawing clamps at the end). */
    if (d > 1000)
        d = 1000000;
    return scroll_by(a->focus == 2 && !s->report ? &s->rpane : &s->lpane, d);
}

static const char *results_keys(const struct app *a)
{
    const struct res_state *s = a->vstate[VIEW_RESULTS];
    if (s->mode == M_OPEN && s->report)
        return "Up/Down scroll  Left/Right sideways  v back  Esc close";
    if (a->results && !a->results_path[0])
        return "Enter open  Space mark  c compare  v report  z zoom  w save  > sort  \\ filter";
    return "Enter open  Space mark  c compare  v report  z zoom  r rescan  > sort  \\ filter";
}

static void results_init(struct app *a)
{
    struct res_state *s = xalloc_zero(1, sizeof(*s));
    s->order = (struct ui_order){.nsorts = RS_COUNT, .names = res_sort_name};
    s->was_sel = -1;
    strbuf_init(&s->report_text);
    a->vstate[VIEW_RESULTS] = s;
}

static void results_fini(struct app *a)
{
    struct res_state *s = st(a);
    close_open(s);
    strbuf_free(&s->report_text);
    if (s->have_cmp)
        compare_free(&s->cmp);
    free(s->e);
    free(s->vis);
    free(s);
}

/* A click on a saved result selects it (the list's first row is its column heads). */
static int results_click(struct app *a, int pane, int row, int col)
{
    (void)col;
    struct res_state *s = st(a);
    if (pane != 0 || row < 1 || s->list.top + row - 1 >= s->nvis ||
        (s->report && s->mode == M_OPEN))
        return REACT_HANDLED;
    s->list.sel = s->list.top + row - 1;
    return REACT_REDRAW;
}

const struct view_ops view_results = {
    .name = "Results",
    .fkey = 5,
    .layout = LAYOUT_COMPARE,
    .init = results_init,
    .fini = results_fini,
    .enter = results_enter,
    .draw = results_draw,
    .key = results_key,
    .tick = results_tick,
    .keys = results_keys,
    .click = results_click,
};
