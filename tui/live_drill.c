/* live_drill: the live view's page for a fault drill (tui/app_drill.h), drawn in place of the
 * run's panes while a drill runs or after it: what is drilled and how, then per repetition
 * and flow the detection against its bound and by what, the recovery against its deadline,
 * the return to the quiet p99, the requests by outcome, the neighbours' rates around the
 * fault, and the agent's count of answers beside the client's; the repetition running now;
 * the summary. Text only, every number with its unit; it scrolls and follows the newest line
 * unless scrolled back. */
#include "tui/live_pane.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* One line of the page before it is wrapped: its role, its indent and that of the rows it
 * continues on when wrapped (hang). */
struct dline {
    enum theme_role role;
    int indent, hang;
    char text[640];
};

struct dtext {
    struct dline *v;
    int n, cap;
};

static void add(struct dtext *t, enum theme_role role, int indent, int hang, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add(struct dtext *t, enum theme_role role, int indent, int hang, const char *fmt, ...)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        t->v = xalloc_resize(t->v, (size_t)t->cap * sizeof(*t->v));
    }
    struct dline *l = &t->v[t->n++];
    l->role = role;
    l->indent = indent;
    l->hang = hang;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text, sizeof(l->text), fmt, ap);
    va_end(ap);
}

/* A number in fmt (with its unit) when it is set, else "n/a". */
static const char *num(char *buf, size_t len, const struct results_num *f, const char *fmt)
{
    if (f->st == RESULTS_SET)
        snprintf(buf, len, fmt, f->v);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

/* A count of requests, connections or descriptors (no unit of its own). */
static const char *count_of(char *buf, size_t len, const struct results_num *f)
{
    return num(buf, len, f, "%.0f");
}

/* What is drilled, against what, and the policy the explorer gave. */
static void head_lines(const struct app_drill *d, struct dtext *t)
{
    bool rank_loss = d->fault == DRILL_RANK_LOSS;
    add(t, ROLE_HEADER, 0, 2, "Drill of %s against %s: %s at %g s for %g s, %d repetition%s",
        d->mix.name,
        rank_loss    ? "its victim agent (fabtop serve on 127.0.0.1, started by the drill)"
        : d->peer[0] ? d->peer
                     : "the in-process agent",
        drill_fault_str(d->fault), d->at_s, d->for_s, d->repeat, d->repeat == 1 ? "" : "s");
    if (rank_loss)
        add(t, ROLE_DIM, 0, 2,
            "The victim's NCCL ranks are killed with it (SIGKILL); the survivors shrink their "
            "communicators, or rebuild them with the victim restarted after %g s.",
            d->for_s);
    add(t, ROLE_DIM, 0, 2,
        "Each %s times out after %g s (the mix's fail_bound_s); a detection is ok within "
        "%g s + 0.1 s of the injection, a recovery within its flow's deadline.",
        rank_loss ? "operation" : "request", d->mix.fail_bound_s, d->mix.fail_bound_s);
    if (d->given && d->given == d->drilled)
        add(t, ROLE_INFO, 0, 2,
            "Recovery: the mix had no \"recover\" policy; the explorer gave %s %d attempts, "
            "backoff %g-%g ms, deadline %g s.",
            d->given == 1 ? "its flow" : "its flows", d->policy.attempts, d->policy.backoff_min_ms,
            d->policy.backoff_max_ms, d->policy.deadline_s);
    else if (d->given)
        add(t, ROLE_INFO, 0, 2,
            "Recovery: %d of its %d drilled flows had no \"recover\" policy; the explorer gave "
            "them %d attempts, backoff %g-%g ms, deadline %g s.",
            d->given, d->drilled, d->policy.attempts, d->policy.backoff_min_ms,
            d->policy.backoff_max_ms, d->policy.deadline_s);
    else
        add(t, ROLE_DIM, 0, 2, "Recovery: each flow's own \"recover\" policy in the mix.");
}

/* One flow of one repetition: three or four lines. */
static void flow_lines(const struct results_drill_flow *f, struct dtext *t)
{
    char a[48], b[48], c[48], e[48], g[48];
    bool det = f->detect_s.st == RESULTS_SET, det_ok = results_bool_true(&f->detect_ok);
    double conns = 0;
    results_num_get(&f->connections, &conns);
    const char *name = results_str_get(&f->name), *op = results_str_get(&f->op);
    char who[160];
    snprintf(who, sizeof(who), "%s (%s, %.0f connection%s)", name ? name : "?", op ? op : "?",
             conns, conns == 1 ? "" : "s");
    const char *by = results_str_get(&f->detection);
    if (det)
        add(t, det_ok ? ROLE_NORMAL : ROLE_ERROR, 2, 6,
            "%s: detected after %s (bound %s, %s) by %s", who,
            num(a, sizeof(a), &f->detect_s, "%.3f s"),
            num(b, sizeof(b), &f->detect_bound_s, "%.2f s"), det_ok ? "ok" : "BROKEN",
            by ? by : "n/a");
    else
        add(t, ROLE_ERROR, 2, 6, "%s: not detected (bound %s, BROKEN)", who,
            num(b, sizeof(b), &f->detect_bound_s, "%.2f s"));

    bool rec = results_bool_true(&f->recovered), rec_ok = results_bool_true(&f->recover_ok);
    double reconnects = 0;
    results_num_get(&f->reconnects, &reconnects);
    const char *back = f->returned_at_s.st == RESULTS_SET ? "back at" : "not back at";
    bool coll = op && !strcmp(op, "collective");
    if (rec)
        add(t, rec_ok ? ROLE_NORMAL : ROLE_ERROR, 4, 6,
            "recovered after %s (deadline %s, %s), %.0f reconnect%s; %s the quiet p99 (%s) at %s",
            num(a, sizeof(a), &f->recover_s, "%.3f s"),
            num(b, sizeof(b), &f->recover_deadline_s, "%g s"), rec_ok ? "ok" : "BROKEN", reconnects,
            reconnects == 1 ? "" : "s", back,
            num(c, sizeof(c), &f->quiet_p99_us,
                coll ? "%.1f us per operation" : "%.1f us round trip"),
            num(e, sizeof(e), &f->returned_at_s, "%.3f s"));
    else
        add(t, ROLE_ERROR, 4, 6, "never recovered (deadline %s, BROKEN), %.0f reconnect%s",
            num(b, sizeof(b), &f->recover_deadline_s, "%g s"), reconnects,
            reconnects == 1 ? "" : "s");

    double hanging = 0;
    results_num_get(&f->hanging, &hanging);
    add(t, hanging ? ROLE_ERROR : ROLE_NORMAL, 4, 6,
        "requests: %s issued, %s completed, %s failed, %s abandoned at their deadline, %s "
        "hanging",
        count_of(a, sizeof(a), &f->issued), count_of(b, sizeof(b), &f->completed),
        count_of(c, sizeof(c), &f->failed), count_of(e, sizeof(e), &f->abandoned),
        count_of(g, sizeof(g), &f->hanging));
    if (f->ranks_before.st == RESULTS_SET) {
        const char *how = results_str_get(&f->rebuilt);
        add(t, f->ranks_after.st == RESULTS_SET ? ROLE_NORMAL : ROLE_ERROR, 4, 6,
            "ranks: %s before, %s after; rebuilt by %s", count_of(a, sizeof(a), &f->ranks_before),
            count_of(b, sizeof(b), &f->ranks_after), how ? how : "nothing");
    }
    if (f->failovers.st == RESULTS_SET) {
        const char *on = results_str_get(&f->recovered_on);
        add(t, ROLE_NORMAL, 4, 6, "failed over: %.0f of its connections recovered on %s",
            f->failovers.v, on ? on : "no failover agent");
    }
}

/* A background flow run as load beside the drilled ones: its rates around the fault. */
static void load_line(const struct results_drill_load *l, struct dtext *t)
{
    char a[48], b[48], c[48];
    double conns = 0, reconnects = 0;
    results_num_get(&l->connections, &conns);
    results_num_get(&l->reconnects, &reconnects);
    const char *name = results_str_get(&l->name), *dir = results_str_get(&l->direction);
    add(t, ROLE_NORMAL, 2, 6,
        "neighbour %s (%s, %.0f connection%s): %s before the fault, %s during it, %s after; %.0f "
        "reconnect%s",
        name ? name : "?", dir ? dir : "?", conns, conns == 1 ? "" : "s",
        num(a, sizeof(a), &l->before_gbps, "%.3f Gb/s"),
        num(b, sizeof(b), &l->during_gbps, "%.3f Gb/s"),
        num(c, sizeof(c), &l->after_gbps, "%.3f Gb/s"), reconnects, reconnects == 1 ? "" : "s");
}

static void rep_lines(const struct app_drill *d, const struct results_drill_rep *r, struct dtext *t)
{
    char a[48], b[48];
    double idx = 0;
    results_num_get(&r->index, &idx);
    add(t, ROLE_INFO, 0, 2, "Repetition %.0f of %d: %s injected at %s", idx + 1, d->repeat,
        drill_fault_str(d->fault), num(a, sizeof(a), &r->injected_at_s, "%.3f s"));
    for (int i = 0; i < r->nflows; i++)
        flow_lines(&r->flows[i], t);
    for (int i = 0; i < r->nload; i++)
        load_line(&r->load[i], t);
    if (r->agent_st != RESULTS_SET) {
        /* rank-loss: the victim is gone; verbs: the agent's replies are the NIC's writes */
        add(t, ROLE_DIM, 2, 4, "no count of answers from the agent: %s",
            d->fault == DRILL_RANK_LOSS ? "its victim was killed"
                                        : "a verbs agent's replies are its NIC's writes");
        return;
    }
    bool agree = results_bool_true(&r->agree);
    add(t, agree ? ROLE_OK : ROLE_ERROR, 2, 4,
        "the agent answered %s requests, the client completed %s: %s",
        count_of(a, sizeof(a), &r->answered), count_of(b, sizeof(b), &r->client_completed),
        agree ? "agree" : "DISAGREE");
}

static void summary_lines(const struct results_drill_doc *doc, struct dtext *t)
{
    char a[48], b[48], c[48];
    double broke = 0, never = 0, dis = 0, drills = 0;
    results_num_get(&doc->broke_bound, &broke);
    results_num_get(&doc->never_recovered, &never);
    results_num_get(&doc->agent_disagrees, &dis);
    results_num_get(&doc->drills, &drills);
    add(t, broke || never || dis ? ROLE_ERROR : ROLE_OK, 0, 2,
        "Summary of %d repetition%s: %s drill%s (flow x repetition), %.0f broke a bound, %.0f "
        "never recovered, %.0f with the agent's count different",
        doc->nreps, doc->nreps == 1 ? "" : "s", count_of(a, sizeof(a), &doc->drills),
        drills == 1 ? "" : "s", broke, never, dis);
    const struct results_drill_stat *st[2] = {&doc->detect, &doc->recover};
    static const char *const nm[2] = {"detect", "recover"};
    for (int i = 0; i < 2; i++)
        add(t, ROLE_NORMAL, 2, 4, "%s: min %s, p50 %s, max %s", nm[i],
            num(a, sizeof(a), &st[i]->min_s, "%.3f s"), num(b, sizeof(b), &st[i]->p50_s, "%.3f s"),
            num(c, sizeof(c), &st[i]->max_s, "%.3f s"));
    if (doc->process_st == RESULTS_SET) {
        char e[48];
        add(t, ROLE_DIM, 2, 4,
            "this process: %s descriptors before, %s after; %s threads before, %s after",
            count_of(a, sizeof(a), &doc->fds_before), count_of(b, sizeof(b), &doc->fds_after),
            count_of(c, sizeof(c), &doc->threads_before),
            count_of(e, sizeof(e), &doc->threads_after));
    }
}

/* The whole page as lines. */
static void page_lines(const struct app_drill *d, struct dtext *t)
{
    head_lines(d, t);
    if (d->json && !d->doc_ok)
        add(t, ROLE_ERROR, 0, 2, "The drill's document cannot be read: %s", d->doc_error);
    int nreps = d->doc_ok ? d->doc.nreps : 0;
    for (int i = 0; i < nreps; i++)
        rep_lines(d, &d->doc.reps[i], t);
    if (app_drill_running(d))
        add(t, ROLE_INFO, 0, 2, "Repetition %d of %d: running (fault at %g s for %g s), %.1f s in",
            app_drill_current(d), d->repeat, d->at_s, d->for_s, app_drill_rep_elapsed_s(d));
    if (nreps && d->doc.summary_st == RESULTS_SET)
        summary_lines(&d->doc, t);
    if (d->done && d->rc < 0)
        add(t, ROLE_ERROR, 0, 2, "The drill failed: %s", d->error);
    else if (d->done)
        add(t, ROLE_OK, 0, 2, "The drill has finished: w saves its document.");
}

/* The lines wrapped to w columns into rows (each row's role in roles). */
static int wrap_rows(const struct dtext *t, int w, char (**rows)[512], enum theme_role **roles)
{
    int n = 0, cap = 0;
    char(*tmp)[512] = xalloc_zero(16, sizeof(*tmp));
    for (int i = 0; i < t->n; i++) {
        const struct dline *l = &t->v[i];
        int in = l->indent < w / 2 ? l->indent : 0, hang = l->hang < w / 2 ? l->hang : 0;
        int k = ui_wrap_lines(l->text, w - (in > hang ? in : hang) - 2, tmp, 16);
        if (k == 0) {
            k = 1; /* a blank line */
            tmp[0][0] = '\0';
        }
        for (int j = 0; j < k && j < 16; j++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                *rows = xalloc_resize(*rows, (size_t)cap * sizeof(**rows));
                *roles = xalloc_resize(*roles, (size_t)cap * sizeof(**roles));
            }
            snprintf((*rows)[n], sizeof((*rows)[n]), "%*s%s", j ? hang : in, "", tmp[j]);
            (*roles)[n++] = l->role;
        }
    }
    free(tmp);
    return n;
}

static void draw_drill(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                       bool focus)
{
    (void)focus;
    const struct app_drill *d = a->drill;
    if (s->drill_start_ns != d->start_ns) {
        /* Another drill: from its top, following the newest lines. */
        s->drill_start_ns = d->start_ns;
        s->drill_scroll = (struct ui_list){0};
        s->drill_follow = true;
    }
    char title[160];
    snprintf(title, sizeof(title), "Drill: %s, %s%s", d->mix.name, drill_fault_str(d->fault),
             app_drill_running(d) ? ""
             : d->rc < 0          ? " (failed)"
                                  : " (finished)");
    ui_box(u, r, title, true);
    struct rect in = ui_inner(r);
    if (in.h < 1 || in.w < 8)
        return;
    struct dtext t = {0};
    page_lines(d, &t);
    char(*rows)[512] = NULL;
    enum theme_role *roles = NULL;
    int n = wrap_rows(&t, in.w, &rows, &roles);
    free(t.v);
    struct ui_list *sc = &s->drill_scroll;
    if (s->drill_follow)
        sc->top = n - in.h;
    ui_list_fit(sc, n, in.h);
    /* Scrolled down to the end: following again. */
    s->drill_follow = sc->top >= n - in.h;
    s->drill_rows = n;
    for (int i = 0; i < in.h && sc->top + i < n; i++)
        ui_text(u, in.y + i, in.x + 1, in.w - 1, roles[sc->top + i], rows[sc->top + i]);
    free(rows);
    free(roles);
}

/* Up/Down, PgUp/PgDn, Home/End scroll the page. */
static int drill_key(struct app *a, struct live_state *s, int ch)
{
    (void)a;
    int d = ui_nav_step(ch);
    if (!d)
        return REACT_NONE;
    ui_list_scroll(&s->drill_scroll, d);
    s->drill_follow = false; /* the next draw follows again if this reached the end */
    return REACT_REDRAW;
}

const struct live_pane live_drill_pane = {.draw = draw_drill, .key = drill_key};
