/* view_fabric: the simulated fabric of a sim run (F6): every switch and adapter port with its
 * link, egress queue (bar, depth and watermark), pause state (PFC pause or InfiniBand credits),
 * ECN/FECN marks, drops and utilisation in simulated time, updated as the run plays; the
 * flows' progress on larger screens; the scenario's lesson. Playback: slow motion at 1 us of
 * simulated time per 10 us to 100 ms of wall time, pause, step, skip idle stretches, full
 * speed. Settings made here also apply to the next sim run started in the explorer. */
#include "tui/views.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "text/text_units.h"
#include "common/xalloc.h"
#include "tui/fabric_draw.h"
#include "tui/live_pane.h"
#include "tui/live_plot.h"
#include "tui/ui_list.h"

/* Wall nanoseconds per simulated microsecond the +/- keys step through (1-2-5). */
static const uint64_t scales[] = {10000,   20000,   50000,    100000,   200000,   500000,   1000000,
                                  2000000, 5000000, 10000000, 20000000, 50000000, 100000000};
#define NSCALES      (int)(sizeof(scales) / sizeof(scales[0]))
#define DEFAULT_SCAL SIM_SCALE_LESSON
#define STEP_PS      1000000ull

struct fab_state {
    struct fabric_snap v; /* *sn->fabric */
    struct runner_snapshot *sn;
    bool have;
    const struct runner *from; /* the runner v came from */
    int phase;
    /* utilisation and flow rates over the last interval in which simulated time moved */
    uint64_t prev_now;
    uint64_t *prev_xmit; /* per port */
    double *util;        /* per port, 0..1 */
    uint64_t *prev_bytes;
    double *flow_gbps;    /* per flow */
    uint64_t last_slow;   /* the slow-motion scale 'f' returns to */
    struct ui_list ports; /* the port table's selection and scroll */
    /* The table as last drawn, for keys and clicks: its rows (listed ports), the first
     * data row inside the fabric box (pane row of a click) and how many rows show. */
    int tab_n, tab_row0, tab_rows;
    bool active_only, lesson_full;
    bool table;         /* v: the port table instead of the drawing */
    const char *hl[16]; /* the ports the lesson names, as of the last draw */
    int nhl;
    /* The port table's order (enum port_sort: > or F6 and <, as htop's) and filter (\ or
     * /: only ports whose name or peer holds the text). */
    struct ui_order order;
};

/* The port table's orders: where they sit (switch ports first), by name, or the deepest,
 * most held, most dropping or busiest first. */
enum port_sort {
    SORT_PLACE = 0,
    SORT_NAME,
    SORT_QUEUE,
    SORT_WMARK,
    SORT_PAUSE,
    SORT_DROPS,
    SORT_UTIL,
    SORT_COUNT
};
static const char *const sort_name[SORT_COUNT] = {"place", "name",  "queue", "watermark",
                                                  "pause", "drops", "util"};

static struct fab_state *st(struct app *a)
{
    return a->vstate[VIEW_FABRIC];
}

/* ---- small helpers ---- */

static void scale_text(char *buf, size_t len, uint64_t scale)
{
    if (!scale)
        snprintf(buf, len, "full speed");
    else if (scale < 1000000)
        snprintf(buf, len, "1 us per %llu us", (unsigned long long)(scale / 1000));
    else
        snprintf(buf, len, "1 us per %llu ms", (unsigned long long)(scale / 1000000));
}

/* The next scale: dir > 0 faster (less wall time per simulated us), < 0 slower. */
static uint64_t scale_step(uint64_t cur, int dir)
{
    if (!cur)
        return dir < 0 ? scales[0] : 0;
    int i = 0;
    while (i < NSCALES - 1 && scales[i] < cur)
        i++;
    if (dir > 0)
        return i == 0 ? 0 : scales[i - 1]; /* faster than the fastest: full speed */
    return scales[i + 1 < NSCALES ? i + 1 : NSCALES - 1];
}

static void fmt_count(char *buf, size_t len, double v)
{
    live_fmt_si(buf, len, v);
}

/* "sw0/3" for a switch port, "h3" for an adapter, as the counters name them. */
static void port_label(const struct fabric_snap *v, const struct sim_port_snap *p, char *buf,
                       size_t len)
{
    if (p->host)
        snprintf(buf, len, "%s", v->node_names[p->node]);
    else
        snprintf(buf, len, "%s/%d", v->node_names[p->node], p->port);
}

static void peer_label(const struct fabric_snap *v, const struct sim_port_snap *p, char *buf,
                       size_t len)
{
    if (v->node_host[p->peer_node])
        snprintf(buf, len, "%s", v->node_names[p->peer_node]);
    else
        snprintf(buf, len, "%s/%d", v->node_names[p->peer_node], p->peer_port);
}

/* Packets dropped at a port: its discards (egress and, RoCE, the lossless class's ingress
 * past the headroom) and, on a switch, packets routed to a dead port. */
static double port_drops(const struct fabric_snap *v, const char *label)
{
    double d = 0;
    for (int i = 0; i < v->ncounters; i++) {
        const struct counters_value *c = &v->counters[i];
        if (strcmp(c->object, label))
            continue;
        size_t n = strlen(c->name);
        if ((n >= 8 && !strcmp(c->name + n - 8, "discards")) ||
            !strcmp(c->name, "port_rcv_switch_relay_errors"))
            d += c->value;
    }
    return d;
}

static int count_switches(const struct fabric_snap *v)
{
    int n = 0;
    for (int i = 0; i < v->nnodes; i++)
        n += !v->node_host[i];
    return n;
}

static bool run_has_sim(const struct app *a)
{
    for (int i = 0; a->have_run_mix && i < a->run_mix.nflows; i++)
        if (!strcmp(a->run_mix.flows[i].transport, "sim"))
            return true;
    return false;
}

/* ---- following the run ---- */

static void forget(struct fab_state *s)
{
    if (s->have)
        runner_snapshot_release(s->sn);
    s->sn = NULL;
    s->have = false;
    s->from = NULL;
    free(s->prev_xmit);
    free(s->util);
    free(s->prev_bytes);
    free(s->flow_gbps);
    s->prev_xmit = s->prev_bytes = NULL;
    s->util = s->flow_gbps = NULL;
    s->prev_now = 0;
}

/* Take the newest copy of the simulation; rates over the simulated time since the last one
 * that moved. Returns true when something to show changed. */
static bool follow(struct app *a)
{
    struct fab_state *s = st(a);
    if (!a->runner) {
        bool had = s->have;
        forget(s);
        return had;
    }
    struct runner_snapshot *sn = runner_snapshot(a->runner);
    if (!sn->fabric) {
        runner_snapshot_release(sn);
        if (s->have && s->from != a->runner) {
            forget(s);
            return true;
        }
        return false;
    }
    struct fabric_snap nv = *sn->fabric;
    bool same = s->have && s->from == a->runner && s->v.phase == nv.phase &&
                s->v.nports == nv.nports && s->v.nflows == nv.nflows;
    if (!same) {
        forget(s);
        s->prev_xmit = xalloc_zero((size_t)nv.nports + 1, sizeof(*s->prev_xmit));
        s->util = xalloc_zero((size_t)nv.nports + 1, sizeof(*s->util));
        s->prev_bytes = xalloc_zero((size_t)nv.nflows + 1, sizeof(*s->prev_bytes));
        s->flow_gbps = xalloc_zero((size_t)nv.nflows + 1, sizeof(*s->flow_gbps));
        s->prev_now = nv.sim_now_ps;
        for (int i = 0; i < nv.nports; i++)
            s->prev_xmit[i] = nv.ports[i].xmit_bytes;
        for (int k = 0; k < nv.nflows; k++)
            s->prev_bytes[k] = nv.flows[k].st.tx_acked + nv.flows[k].st.rx_bytes;
        s->ports.top = s->ports.sel = 0;
    }
    bool changed = !same || nv.sim_now_ps != s->v.sim_now_ps || nv.events != s->v.events ||
                   nv.finished != s->v.finished || memcmp(&nv.ctl, &s->v.ctl, sizeof(nv.ctl)) != 0;
    if (nv.finished && nv.sim_now_ps > 0) {
        /* Over: each port's utilisation over the whole simulated run. */
        for (int i = 0; i < nv.nports; i++)
            s->util[i] = nv.ports[i].gbps > 0 ? (double)nv.ports[i].xmit_bytes * 8e3 /
                                                    (double)nv.sim_now_ps / nv.ports[i].gbps
                                              : 0;
    } else if (nv.sim_now_ps > s->prev_now) {
        double dt = (double)(nv.sim_now_ps - s->prev_now); /* ps */
        for (int i = 0; i < nv.nports; i++) {
            double gbps = (double)(nv.ports[i].xmit_bytes - s->prev_xmit[i]) * 8e3 / dt;
            s->util[i] = nv.ports[i].gbps > 0 ? gbps / nv.ports[i].gbps : 0;
            s->prev_xmit[i] = nv.ports[i].xmit_bytes;
        }
        for (int k = 0; k < nv.nflows; k++) {
            uint64_t b = nv.flows[k].st.tx_acked + nv.flows[k].st.rx_bytes;
            s->flow_gbps[k] = (double)(b - s->prev_bytes[k]) * 8e3 / dt;
            s->prev_bytes[k] = b;
        }
        s->prev_now = nv.sim_now_ps;
    }
    if (s->have)
        runner_snapshot_release(s->sn);
    s->sn = sn;
    s->v = nv;
    s->have = true;
    s->from = a->runner;
    return changed;
}

/* The settings the next run starts with, and the running one's, as one. */
static void current_ctl(struct app *a, struct sim_ctl_state *c)
{
    struct fab_state *s = st(a);
    if (s->have && !s->v.retired && s->from == a->runner)
        *c = s->v.ctl;
    else
        *c = a->playback;
}

static bool live(struct app *a)
{
    struct fab_state *s = st(a);
    return a->runner && s->have && !s->v.retired && s->from == a->runner;
}

/* ---- drawing ---- */

/* Does port i's name or its peer's hold the filter text (any case)? */
static bool port_matches(const struct fab_state *s, int i)
{
    const char *f = s->order.filter.text;
    if (!f[0])
        return true;
    char a[64], b[64];
    port_label(&s->v, &s->v.ports[i], a, sizeof(a));
    peer_label(&s->v, &s->v.ports[i], b, sizeof(b));
    return ui_holds(a, f) || ui_holds(b, f);
}

/* Port i's key in the order s->order.sort (larger first; names compare as text). */
static double sort_key(const struct fab_state *s, int i)
{
    const struct sim_port_snap *p = &s->v.ports[i];
    char lab[64];
    switch (s->order.sort) {
    case SORT_QUEUE:
        return (double)p->queue_bytes;
    case SORT_WMARK:
        return (double)p->watermark_bytes;
    case SORT_PAUSE: /* held first, then pausing its peer */
        return (p->paused ? 2 : 0) + (p->pausing ? 1 : 0);
    case SORT_DROPS:
        port_label(&s->v, p, lab, sizeof(lab));
        return port_drops(&s->v, lab);
    case SORT_UTIL:
        return s->util[i];
    default:
        return 0;
    }
}

/* Does port i come before port j in the order (ties keep their places)? */
static bool sorts_before(void *ctx, int i, int j)
{
    const struct fab_state *s = ctx;
    if (s->order.sort == SORT_NAME) {
        char a[64], b[64];
        port_label(&s->v, &s->v.ports[i], a, sizeof(a));
        port_label(&s->v, &s->v.ports[j], b, sizeof(b));
        return strcmp(a, b) < 0;
    }
    return sort_key(s, i) > sort_key(s, j);
}

/* The ports the lesson names (params.playback.highlight of the run's sim flows), at most
 * max of them into out; returns how many. */
static int lesson_ports(const struct app *a, const char **out, int max)
{
    int n = 0;
    for (int i = 0; a->have_run_mix && i < a->run_mix.nflows; i++) {
        const cJSON *hl = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(a->run_mix.flows[i].params, "playback"), "highlight");
        const cJSON *e;
        cJSON_ArrayForEach(e, hl)
        {
            if (cJSON_IsString(e) && n < max)
                out[n++] = e->valuestring;
        }
    }
    return n;
}

/* Is port i one the lesson names? */
static bool port_lit(const struct fab_state *s, int i)
{
    char lab[64];
    port_label(&s->v, &s->v.ports[i], lab, sizeof(lab));
    for (int k = 0; k < s->nhl; k++)
        if (!strcmp(s->hl[k], lab))
            return true;
    return false;
}

/* Which ports are listed: the lesson's ports first, then switch ports, then adapters; with
 * active_only those with a queue, a watermark, a pause, marks, drops, traffic or a dead link; with
 * a filter those whose name or peer holds it; then in the order chosen. */
static int list_ports(const struct fab_state *s, int *idx)
{
    int n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < s->v.nports; i++) {
            const struct sim_port_snap *p = &s->v.ports[i];
            bool lit = port_lit(s, i);
            if (pass == 0 ? !lit : lit || p->host != (pass == 2))
                continue;
            if (s->active_only && !(p->queue_bytes || p->watermark_bytes || p->paused ||
                                    p->pausing || p->ecn_marked || !p->up || s->util[i] > 0))
                continue;
            if (!port_matches(s, i))
                continue;
            idx[n++] = i;
        }
    ui_order_sort(&s->order, idx, n, sorts_before, (void *)s);
    return n;
}

/* Column widths of the port table for an inside width. */
struct cols {
    int name, peer, bar, depth, wm, pause, mark, prob, drop, util, gbps;
    bool wide;
};

/* Column widths for an inside width w, the port names as long as the longest one. */
static void table_cols(const struct fabric_snap *v, int w, struct cols *c)
{
    int longest = 6; /* "link to" fits */
    for (int i = 0; i < v->nports; i++) {
        char buf[64];
        port_label(v, &v->ports[i], buf, sizeof(buf));
        if ((int)strlen(buf) > longest)
            longest = (int)strlen(buf);
    }
    *c = (struct cols){.name = longest + 1,
                       .peer = longest + 2,
                       .depth = 8,
                       .wm = 8,
                       .pause = 7,
                       .mark = 6,
                       .drop = 6,
                       .util = 5};
    c->wide = w >= 110;
    if (c->wide) {
        c->prob = 6;
        c->gbps = 8;
    }
    int fixed = c->name + c->peer + c->depth + c->wm + c->pause + c->mark + c->prob + c->drop +
                c->util + c->gbps + 1;
    c->bar = w - fixed;
    if (c->bar < 4)
        c->bar = 4;
}

static void draw_header_row(struct ui *u, int y, int x, int w, const struct cols *c, bool ib,
                            bool finished)
{
    char buf[512];
    const char *q = c->bar >= 27   ? "egress queue (| watermark)"
                    : c->bar >= 17 ? "queue (| wmark)"
                                   : "queue";
    int n = snprintf(buf, sizeof(buf), "%-*s%-*s%-*.*s%*s%*s%*s%*s", c->name, "port", c->peer,
                     "link to", c->bar + 1, c->bar, q, c->depth, "depth", c->wm, "wmark", c->pause,
                     "pause", c->mark, ib ? "FECN" : "ECN");
    if (c->wide)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%*s", c->prob, "mark%");
    /* Utilisation over the last interval of simulated time; once over, the whole run's. */
    n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%*s%*s", c->drop, "drops", c->util,
                  finished ? "avg" : "util");
    if (c->wide)
        snprintf(buf + n, sizeof(buf) - (size_t)n, "%*s", c->gbps, "Gb/s");
    ui_text(u, y, x, w, ROLE_DIM, buf);
}

/* A port's state in words: what the table's pause column abbreviates. */
static const char *state_words(const struct fabric_snap *v, const struct sim_port_snap *p)
{
    bool ib = v->fabric == SIM_FABRIC_IB;
    if (!p->up)
        return "its link is down";
    if (p->paused && p->pausing)
        return ib ? "waiting for credits from its peer, and holding its peer's"
                  : "held by its peer's PFC pause, and pausing its peer (XOFF)";
    if (p->paused)
        return ib ? "waiting for credits from its peer" : "held by its peer's PFC pause";
    if (p->pausing)
        return "pausing its peer (XOFF)";
    return "sending freely";
}

/* The selected port in words, for the line under the table: the longest form that fits w
 * columns. */
static void port_detail(struct fab_state *s, int pi, int w, char *buf, size_t len)
{
    const struct fabric_snap *v = &s->v;
    const struct sim_port_snap *p = &v->ports[pi];
    char name[48], peer[48], q[16], wm[16], marks[16] = "", drops[16];
    port_label(v, p, name, sizeof(name));
    peer_label(v, p, peer, sizeof(peer));
    live_fmt_queue(q, sizeof(q), p->queue_bytes);
    live_fmt_queue(wm, sizeof(wm), p->watermark_bytes);
    fmt_count(drops, sizeof(drops), port_drops(v, name));
    bool ib = v->fabric == SIM_FABRIC_IB;
    if (!p->host && (ib ? v->cc == SIM_CC_IBCC : v->ecn))
        fmt_count(marks, sizeof(marks), (double)p->ecn_marked);
    snprintf(buf, len,
             "%s -> %s: queue %s (deepest %s), %s, %s%s%s drops, %.0f%% busy of %.0f Gb/s", name,
             peer, q, wm, state_words(v, p), marks, marks[0] ? " marks, " : "", drops,
             s->util[pi] * 100, p->gbps);
    if (ui_width(buf) > w)
        snprintf(buf, len, "%s -> %s: queue %s (deepest %s), %s, %s%s%s drops, %.0f%% busy", name,
                 peer, q, wm, state_words(v, p), marks, marks[0] ? " marks, " : "", drops,
                 s->util[pi] * 100);
    if (ui_width(buf) > w)
        snprintf(buf, len, "%s -> %s: queue %s, %s, %s drops, %.0f%% busy", name, peer, q,
                 state_words(v, p), drops, s->util[pi] * 100);
}

static void draw_port_row(struct app *a, struct ui *u, int y, int x, int w, const struct cols *c,
                          int pi, uint64_t qmax, bool sel)
{
    struct fab_state *s = st(a);
    const struct fabric_snap *v = &s->v;
    const struct sim_port_snap *p = &v->ports[pi];
    bool ib = v->fabric == SIM_FABRIC_IB;
    char name[48], peer[48], depth[16], wm[16], pause[16], mark[16], drop[16], util[16];
    port_label(v, p, name, sizeof(name));
    peer_label(v, p, peer, sizeof(peer));
    live_fmt_queue(depth, sizeof(depth), p->queue_bytes);
    live_fmt_queue(wm, sizeof(wm), p->watermark_bytes);
    double drops = port_drops(v, name);
    /* Link state first; then the egress held by the peer (a PFC pause, or no IB credits);
     * then this port pausing its peer (XOFF outstanding). */
    if (!p->up)
        snprintf(pause, sizeof(pause), "DOWN");
    else if (p->paused && p->pausing)
        snprintf(pause, sizeof(pause), "held+X");
    else if (p->paused)
        snprintf(pause, sizeof(pause), "%s", ib ? "nocred" : "held");
    else if (p->pausing)
        snprintf(pause, sizeof(pause), "XOFF");
    else
        snprintf(pause, sizeof(pause), "-");
    /* Marks exist with ECN (RoCE) or IB congestion control; switches mark, adapters do not. */
    bool marks = !p->host && (ib ? v->cc == SIM_CC_IBCC : v->ecn);
    if (marks)
        fmt_count(mark, sizeof(mark), (double)p->ecn_marked);
    else
        snprintf(mark, sizeof(mark), "-");
    fmt_count(drop, sizeof(drop), drops);
    snprintf(util, sizeof(util), "%.0f%%", s->util[pi] * 100);
    enum theme_role role = sel                                 ? ROLE_SELECTED
                           : !p->up || drops > 0               ? ROLE_ERROR
                           : p->paused || p->pausing           ? ROLE_WARN
                           : p->queue_bytes || s->util[pi] > 0 ? ROLE_NORMAL
                                                               : ROLE_DIM;
    char buf[512];
    snprintf(buf, sizeof(buf), "%-*.*s%-*.*s", c->name, c->name - 1, name, c->peer, c->peer - 1,
             peer);
    ui_text(u, y, x, w, role, buf);
    /* A port the lesson names: its name selected. */
    if (port_lit(s, pi))
        ui_text(u, y, x, c->name - 1, ROLE_SELECTED, name);
    int bx = x + c->name + c->peer;
    /* The bar: the queue against the deepest watermark of the fabric; '|' marks this port's
     * watermark. */
    double f = qmax ? (double)p->queue_bytes / (double)qmax : 0;
    ui_hbar(u, y, bx, c->bar, f, p->paused ? ROLE_WARN : ROLE_BAR);
    if (p->watermark_bytes && qmax) {
        int wx = (int)((double)p->watermark_bytes / (double)qmax * c->bar + 0.5) - 1;
        wx = wx < 0 ? 0 : wx >= c->bar ? c->bar - 1 : wx;
        int filled = (int)(f * c->bar);
        if (wx >= filled)
            ui_text(u, y, bx + wx, 1, ROLE_P99, "|");
    }
    int n = snprintf(buf, sizeof(buf), "%*s%*s%*s%*s", c->depth, depth, c->wm, wm, c->pause, pause,
                     c->mark, mark);
    if (c->wide) {
        char prob[16] = "-";
        if (v->ecn && !ib && !p->host)
            snprintf(prob, sizeof(prob), "%.0f%%", p->mark_prob * 100);
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%*s", c->prob, prob);
    }
    n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%*s%*s", c->drop, drop, c->util, util);
    if (c->wide)
        snprintf(buf + n, sizeof(buf) - (size_t)n, "%*.1f", c->gbps, s->util[pi] * p->gbps);
    ui_text(u, y, bx + c->bar + 1, w - (bx + c->bar + 1 - x), role, buf);
}

static void status_line(struct app *a, char *buf, size_t len)
{
    struct fab_state *s = st(a);
    const struct fabric_snap *v = &s->v;
    char sc[48], ph[48] = "";
    scale_text(sc, sizeof(sc), v->ctl.scale);
    if (a->have_run_mix && a->run_mix.quiet_then_loaded)
        snprintf(ph, sizeof(ph), "phase %s  ", v->phase == 0 ? "quiet" : "loaded");
    const char *state = v->finished ? "finished" : v->ctl.paused ? "PAUSED" : "playing";
    snprintf(buf, len, "%ssim time %.3f us  %s, %s%s  %llu events", ph, v->sim_now_ps / 1e6, state,
             sc, v->ctl.skip_idle ? ", skip idle" : "", (unsigned long long)v->events);
}

/* What is left, from the share of the foreground's work done so far: the simulated time at
 * this rate, and the wall time that plays at this scale with the scenario's moments
 * (sim_playback_wall_ns; skipped idle stretches only shorten it). "" while unknown. */
static void left_text(struct app *a, char *buf, size_t len)
{
    struct fab_state *s = st(a);
    const struct fabric_snap *v = &s->v;
    buf[0] = '\0';
    double done = a->snap ? live_pane_sim_done(a->snap) : -1;
    if (v->finished || !(done > 0.02 && done < 1))
        return;
    double now = (double)v->sim_now_ps, total = now / done;
    if (!v->ctl.scale) {
        snprintf(buf, len, "%.0f%% done, ~%.0f us left", done * 100, (total - now) / 1e6);
        return;
    }
    double wall = (sim_playback_wall_ns(v->ctl.scale, v->moments, v->nmoments, (uint64_t)total) -
                   sim_playback_wall_ns(v->ctl.scale, v->moments, v->nmoments, v->sim_now_ps)) /
                  1e9;
    snprintf(buf, len, "%.0f%% done, ~%.0f us and ~%.0f s left", done * 100, (total - now) / 1e6,
             wall);
}

/* When the run is over, its answer on the fabric view: the foreground's p99 in each phase
 * (quiet -> loaded with the ratio) from the results, in the unit it reads best in; false
 * when the results have none. */
static bool result_line(const struct app *a, char *buf, size_t len)
{
    const struct results_run *run = app_results_run(a);
    if (!run || !a->snap || a->snap->fg < 0 || a->snap->fg >= a->snap->nflows)
        return false;
    const char *fg = a->snap->flows[a->snap->fg].name;
    double p99[2] = {NAN, NAN};
    int np = 0;
    for (int p = 0; p < run->nphases && np < 2; p++)
        for (int i = 0; i < run->phases[p].nflows; i++) {
            const struct results_flow *fl = &run->phases[p].flows[i];
            const char *fn = results_str_get(&fl->name);
            if (!fn || strcmp(fn, fg))
                continue;
            for (int k = 0; k < fl->npoints; k++)
                if (results_bool_true(&fl->points[k].measured))
                    results_num_get(&fl->points[k].latency.p99, &p99[np]);
            np++;
        }
    if (np == 0 || isnan(p99[0]))
        return false;
    char x[32], y[32];
    text_lat_auto(x, sizeof(x), p99[0]);
    if (np == 2 && !isnan(p99[1])) {
        text_lat_auto(y, sizeof(y), p99[1]);
        snprintf(buf, len, "Result: %s p99 quiet %s -> loaded %s (%.1fx)", fg, x, y,
                 p99[1] / p99[0]);
    } else {
        snprintf(buf, len, "Result: %s p99 %s (simulated time)", fg, x);
    }
    return true;
}

static int draw_fabric_box(struct app *a, struct ui *u, const struct rect *r)
{
    struct fab_state *s = st(a);
    const struct fabric_snap *v = &s->v;
    bool ib = v->fabric == SIM_FABRIC_IB;
    int nhosts = v->nnodes - count_switches(v), nsw = count_switches(v);
    char what[160];
    snprintf(what, sizeof(what), "%s%s%s%s, %d hosts, %d switch%s",
             ib ? "InfiniBand, credits" : "RoCE", !ib && v->pfc ? ", PFC" : "",
             !ib && v->ecn ? ", ECN" : "",
             v->cc == SIM_CC_DCQCN  ? ", DCQCN"
             : v->cc == SIM_CC_IBCC ? ", IB CC"
                                    : "",
             nhosts, nsw, nsw == 1 ? "" : "es");
    /* The title says how much simulated and wall time is left while the run plays (in both
     * modes): the longest form that fits. */
    char left[96], sep[100] = "";
    left_text(a, left, sizeof(left));
    if (left[0])
        snprintf(sep, sizeof(sep), ", %s", left);
    char t[5][384];
    snprintf(t[0], sizeof(t[0]), "Fabric %s: %s (a: %s)%s", v->topology, what,
             s->active_only ? "all ports" : "active only", sep);
    snprintf(t[1], sizeof(t[1]), "Fabric %s (a: %s)%s", v->topology,
             s->active_only ? "all ports" : "active only", sep);
    snprintf(t[2], sizeof(t[2]), "Fabric %s%s", v->topology, sep);
    snprintf(t[3], sizeof(t[3]), "Fabric %s: %s", v->topology, what);
    snprintf(t[4], sizeof(t[4]), "Fabric %s", v->topology);
    int tk = 0;
    while (tk < 4 && ui_width(t[tk]) > r->w - 6)
        tk++;
    ui_box(u, r, t[tk], true);
    struct rect in = ui_inner(r);
    if (in.h < 1)
        return 0;
    char buf[512];
    status_line(a, buf, sizeof(buf));
    ui_text(u, in.y, in.x, in.w,
            v->finished     ? ROLE_OK
            : v->ctl.paused ? ROLE_WARN
                            : ROLE_NORMAL,
            buf);
    /* The run's answer once it is over (one row taken from the table). */
    char res[256];
    if (v->finished && in.h >= 6 && result_line(a, res, sizeof(res))) {
        ui_text(u, in.y + 1, in.x, in.w, ROLE_INFO, res);
        in.y++;
        in.h--;
    }
    if (in.h < 3)
        return 0;
    s->nhl = lesson_ports(a, s->hl, 16);
    if (!s->table) {
        /* The fabric drawn: tiers, buses, a mark per port; the legend on the last row. */
        uint64_t qm = 0;
        for (int i = 0; i < v->nports; i++)
            qm = v->ports[i].watermark_bytes > qm ? v->ports[i].watermark_bytes : qm;
        struct rect dr = {in.y + 1, in.x, in.h - 2, in.w};
        struct fabric_draw_graph g;
        bool *lit = xalloc_zero((size_t)v->nports + 1, sizeof(bool));
        for (int i = 0; i < v->nports; i++)
            lit[i] = port_lit(s, i);
        fabric_draw_from_sim(v, s->util, qm, u->utf8, lit, &g);
        free(lit);
        fabric_draw_render(u, &dr, &g);
        fabric_draw_free(&g);
        /* The legend: the longest form that fits, never one cut short (the full queue's
         * size is the one number on it). */
        char q[16], leg[4][256];
        live_fmt_queue(q, sizeof(q), qm);
        const char *bars = u->utf8 ? "\u2581-\u2588" : "1-8", *idle = u->utf8 ? "\u00b7" : ".",
                   *held = ib ? "no credits" : "held by PFC";
        snprintf(leg[0], sizeof(leg[0]),
                 "v: port table  %smarks per port: %s queue (full = %s), H %s, X pausing the "
                 "peer, ! down, + traffic, %s idle",
                 s->nhl ? "reversed: the lesson's ports  " : "", bars, q, held, idle);
        snprintf(leg[1], sizeof(leg[1]),
                 "v: table  %s%s queue (full %s), H %s, X pausing, ! down, + traffic, %s idle",
                 s->nhl ? "reversed: lesson's  " : "", bars, q, held, idle);
        snprintf(leg[2], sizeof(leg[2]), "v: table  %s%s queue (full %s)  H %s  X pausing%s",
                 s->nhl ? "reversed: lesson's  " : "", bars, q, ib ? "no credit" : "held",
                 s->nhl ? "" : "  ! down");
        snprintf(leg[3], sizeof(leg[3]), "v: table  %s queue, full %s", bars, q);
        int lk = 0;
        while (lk < 3 && ui_width(leg[lk]) > in.w)
            lk++;
        ui_text(u, in.y + in.h - 1, in.x, in.w, ROLE_DIM, leg[lk]);
        return v->nports;
    }
    struct cols c;
    table_cols(v, in.w, &c);
    draw_header_row(u, in.y + 1, in.x, in.w, &c, ib, v->finished);
    int *idx = xalloc_zero((size_t)v->nports + 1, sizeof(int));
    int n = list_ports(s, idx);
    uint64_t qmax = 0;
    for (int i = 0; i < v->nports; i++)
        if (v->ports[i].watermark_bytes > qmax)
            qmax = v->ports[i].watermark_bytes;
    bool legend = in.h >= 8, detail = in.h >= 10;
    int rows = in.h - 2 - legend - detail;
    ui_list_clamp(&s->ports, n);
    ui_list_follow(&s->ports, rows);
    s->tab_n = n;
    s->tab_row0 = in.y + 2 - (r->y + 1);
    s->tab_rows = rows;
    for (int k = 0; k < rows && s->ports.top + k < n; k++)
        draw_port_row(a, u, in.y + 2 + k, in.x, in.w, &c, idx[s->ports.top + k], qmax,
                      s->ports.top + k == s->ports.sel);
    if (detail && n) {
        port_detail(s, idx[s->ports.sel], in.w, buf, sizeof(buf));
        ui_text(u, in.y + in.h - 1 - legend, in.x, in.w, ROLE_INFO, buf);
    }
    if (n == 0)
        ui_text(u, in.y + 2, in.x, in.w, ROLE_DIM, "(no port active yet: a shows them all)");
    if (legend) {
        char q[16], pos[160];
        live_fmt_queue(q, sizeof(q), qmax);
        int np = snprintf(pos, sizeof(pos), "%d-%d/%d", n ? s->ports.top + 1 : 0,
                          s->ports.top + (rows < n - s->ports.top ? rows : n - s->ports.top), n);
        ui_order_text(&s->order, pos + np, sizeof(pos) - (size_t)np);
        const char *pl = ib ? "nocred: no credits from the peer (port_xmit_wait)"
                            : "held: the peer's PFC pause holds it, XOFF: it pauses the peer";
        snprintf(buf, sizeof(buf), "%s  bar: queue, full at the deepest watermark (%s)  %s", pos, q,
                 pl);
        if (ui_width(buf) > in.w)
            snprintf(buf, sizeof(buf), "%s  bar full = %s  %s", pos, q,
                     ib ? "nocred: no credits (port_xmit_wait)"
                        : "held: paused by the peer, XOFF: pausing it");
        ui_text(u, in.y + in.h - 1, in.x, in.w, ROLE_DIM, buf);
    }
    free(idx);
    return n;
}

static void draw_flows_box(struct app *a, struct ui *u, const struct rect *r)
{
    struct fab_state *s = st(a);
    const struct fabric_snap *v = &s->v;
    struct rect in = ui_inner(r);
    char t[160];
    int shown = v->nflows < in.h - 1 ? v->nflows : in.h - 1;
    snprintf(t, sizeof(t), "Flows%s, in simulated time (Gb/s now; a finished flow's average)",
             shown < v->nflows ? " (the first ones)" : "");
    ui_box(u, r, t, false);
    char buf[512];
    snprintf(buf, sizeof(buf), "%-14s %-12s %-14s %10s %10s  %s", "flow", "path", "operations",
             "Gb/s", "moved MB", "state");
    ui_text(u, in.y, in.x, in.w, ROLE_DIM, buf);
    for (int k = 0; k < v->nflows && k + 1 < in.h; k++) {
        const struct fabric_snap_flow *f = &v->flows[k];
        char path[32], ops[32];
        snprintf(path, sizeof(path), "%s->%s", v->node_names[f->src], v->node_names[f->dst]);
        if (f->target)
            snprintf(ops, sizeof(ops), "%llu/%llu", (unsigned long long)f->st.ops,
                     (unsigned long long)f->target);
        else
            snprintf(ops, sizeof(ops), "%llu (bg)", (unsigned long long)f->st.ops);
        const char *state = f->st.failed                   ? "FAILED"
                            : f->st.done                   ? "done"
                            : f->background && v->finished ? "stopped"
                                                           : "running";
        uint64_t moved = f->st.tx_acked + f->st.rx_bytes;
        double gbps = s->flow_gbps[k];
        if ((f->st.done || v->finished) && f->st.last_done > f->st.first_post)
            gbps = (double)moved * 8e3 / (double)(f->st.last_done - f->st.first_post);
        snprintf(buf, sizeof(buf), "%-14.14s %-12.12s %-14.14s %10.2f %10.3f  %s", f->name, path,
                 ops, gbps, (double)moved / 1e6, state);
        ui_text(u, in.y + 1 + k, in.x, in.w,
                f->st.failed ? ROLE_ERROR
                : f->st.done ? ROLE_OK
                             : ROLE_NORMAL,
                buf);
        if (f->st.failed && f->st.error[0] && in.w > 80)
            ui_text(u, in.y + 1 + k, in.x + 78, in.w - 78, ROLE_ERROR, f->st.error);
    }
}

static void draw_lesson(struct app *a, struct ui *u, const struct rect *r)
{
    struct fab_state *s = st(a);
    struct rect in = ui_inner(r);
    char(*lines)[512] = xalloc_zero(64, sizeof(*lines));
    int n = ui_wrap_lines(a->run_mix.lesson, in.w > 0 ? in.w : 1, lines, 64);
    char t[160];
    if (s->lesson_full)
        snprintf(t, sizeof(t), "Lesson: %s (l: back to the fabric)", a->run_mix.name);
    else if (n > in.h)
        snprintf(t, sizeof(t), "Lesson: %s (l: all of it)", a->run_mix.name);
    else
        snprintf(t, sizeof(t), "Lesson: %s", a->run_mix.name);
    ui_box(u, r, t, false);
    for (int i = 0; i < in.h && i < n && i < 64; i++) {
        if (i == in.h - 1 && n > in.h) {
            char cut[520];
            snprintf(cut, sizeof(cut), "%.*s...", in.w > 3 ? in.w - 3 : 0, lines[i]);
            ui_text(u, in.y + i, in.x, in.w, ROLE_NORMAL, cut);
        } else {
            ui_text(u, in.y + i, in.x, in.w, ROLE_NORMAL, lines[i]);
        }
    }
    free(lines);
}

static void draw_no_sim(struct app *a, struct ui *u, const struct layout *l)
{
    ui_box(u, &l->body, "Simulated fabric", false);
    struct rect in = ui_inner(&l->body);
    int y = in.y + 1, x = in.x + 1, w = in.w - 2, ym = in.y + in.h;
    char m[512];
    if (a->runner && !runner_done(a->runner) && run_has_sim(a))
        ui_paragraph(u, &y, ym, x, w, ROLE_INFO, "The simulation is starting...");
    else if (a->runner && !run_has_sim(a)) {
        snprintf(m, sizeof(m), "The test %s has no simulated flows: there is no fabric to draw.",
                 a->have_run_mix ? a->run_mix.name : "");
        ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, m);
    } else
        ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "No simulated run is active.");
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "");
    ui_paragraph(
        u, &y, ym, x, w, ROLE_NORMAL,
        "Teaching mode runs a test on a simulated RoCE or InfiniBand fabric and draws it "
        "here as it plays: each port's queue, PFC pauses or missing credits, ECN marks and "
        "drops.");
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "");
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL,
                 "Start one: F2 (setup), pick a sim/ preset such as sim/incast-pfc and press S; or "
                 "from a shell: fabtop run --mix sim/incast-pfc (fabtop run --list lists them).");
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "");
    struct sim_ctl_state c = a->playback;
    char sc[48];
    scale_text(sc, sizeof(sc), c.scale);
    snprintf(m, sizeof(m),
             "A run started here plays at %s%s%s: -/+ slower or faster, f full "
             "speed, i skip idle, Space start paused or not.",
             sc, c.skip_idle ? ", skipping idle stretches" : "",
             c.paused ? ", starting paused" : "");
    ui_paragraph(u, &y, ym, x, w, ROLE_INFO, m);
}

static void fabric_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct fab_state *s = st(a);
    if (!s->have || s->from != a->runner)
        follow(a);
    if (!s->have || s->from != a->runner) {
        draw_no_sim(a, u, l);
        return;
    }
    const struct rect *b = &l->body;
    bool lesson = a->have_run_mix && a->run_mix.lesson[0];
    if (lesson && s->lesson_full) {
        draw_lesson(a, u, b);
        return;
    }
    /* The lesson: all of it when it fits in a third of the body, else the start of it. */
    int lh = 0;
    if (lesson) {
        char(*tmp)[512] = xalloc_zero(64, sizeof(*tmp));
        int need = ui_wrap_lines(a->run_mix.lesson, b->w - 2, tmp, 64) + 2;
        free(tmp);
        int cap = b->h / 3 > 5 ? b->h / 3 : 5;
        lh = need < cap ? need : cap;
    }
    /* The flows when there is room for them beside at least 12 port rows. */
    int fh = 0, nf = s->v.nflows < 4 ? s->v.nflows : 4;
    if (s->v.nflows && b->h - lh >= 14 + nf + 3) {
        fh = s->v.nflows + 3;
        if (fh > (b->h - lh) / 3)
            fh = (b->h - lh) / 3;
        if (fh < nf + 3)
            fh = nf + 3;
    }
    struct rect fr = {b->y, b->x, b->h - lh - fh, b->w};
    draw_fabric_box(a, u, &fr);
    if (fh) {
        struct rect flr = {b->y + fr.h, b->x, fh, b->w};
        draw_flows_box(a, u, &flr);
    }
    if (lh) {
        struct rect lr = {b->y + b->h - lh, b->x, lh, b->w};
        draw_lesson(a, u, &lr);
    }
    ui_order_draw(u, l->status.y - 1, l->cols, &s->order, "port or peer name");
}

/* ---- keys ---- */

/* What the next run started here plays at (the keys step through valid scales only). */
static void set_defaults(struct app *a, const struct sim_ctl_state *c)
{
    a->playback = *c;
}

static int fabric_key(struct app *a, int ch)
{
    struct fab_state *s = st(a);
    struct runner *r = a->runner;
    bool on = live(a);
    struct sim_ctl_state c, d = a->playback;
    current_ctl(a, &c);
    char sc[48];
    if (app_order_key(a, &s->order, ch, "Ports") != UI_ORDER_NONE) {
        s->ports.top = s->ports.sel = 0; /* a filter applies as typed */
        return REACT_REDRAW;
    }
    switch (ch) {
    case 'v':
        s->table = !s->table;
        s->ports.top = s->ports.sel = 0;
        return REACT_REDRAW;
    case '+':
    case '=':
    case '-':
    case '_': {
        uint64_t ns = scale_step(c.scale, ch == '+' || ch == '=' ? 1 : -1);
        if (ns)
            s->last_slow = ns;
        if (on)
            runner_playback(r, FABRIC_PLAY_SCALE, ns);
        d.scale = ns;
        set_defaults(a, &d);
        scale_text(sc, sizeof(sc), ns);
        app_message(a, ROLE_INFO, "Playback: %s.", sc);
        follow(a);
        return REACT_REDRAW;
    }
    case 'f': {
        uint64_t ns = c.scale ? 0 : s->last_slow ? s->last_slow : DEFAULT_SCAL;
        if (c.scale)
            s->last_slow = c.scale;
        if (on) {
            runner_playback(r, FABRIC_PLAY_SCALE, ns);
            if (!ns)
                runner_playback(r, FABRIC_PLAY_PAUSE, 0);
        }
        d.scale = ns;
        set_defaults(a, &d);
        scale_text(sc, sizeof(sc), ns);
        app_message(a, ROLE_INFO, "Playback: %s%s.", sc, ns ? "" : " (f: slow motion again)");
        follow(a);
        return REACT_REDRAW;
    }
    case ' ':
    case 'p':
        if (on) {
            runner_playback(r, FABRIC_PLAY_PAUSE, !c.paused);
            app_message(a, ROLE_INFO, "%s",
                        c.paused ? "Playing." : "Paused: n steps 1 us, e one event, Space plays.");
        } else {
            d.paused = !d.paused;
            set_defaults(a, &d);
            app_message(a, ROLE_INFO, "The next run starts %s.", d.paused ? "paused" : "playing");
        }
        follow(a);
        return REACT_REDRAW;
    case 'n':
    case 'e':
        if (!on) {
            app_message(a, ROLE_WARN, "No simulation is running: nothing to step.");
            return REACT_REDRAW;
        }
        if (!c.paused)
            runner_playback(r, FABRIC_PLAY_PAUSE, 1);
        runner_playback(r, FABRIC_PLAY_STEP, ch == 'n' ? STEP_PS : 0);
        follow(a);
        return REACT_REDRAW;
    case 'i':
        if (on)
            runner_playback(r, FABRIC_PLAY_SKIP_IDLE, !c.skip_idle);
        d.skip_idle = !c.skip_idle;
        set_defaults(a, &d);
        app_message(a, ROLE_INFO, "%s",
                    d.skip_idle ? "Skipping idle stretches (nothing queued or on a wire)."
                                : "Idle stretches play at the scale like the rest.");
        follow(a);
        return REACT_REDRAW;
    case 'a':
        s->active_only = !s->active_only;
        s->ports.top = s->ports.sel = 0;
        return REACT_REDRAW;
    case 'l':
        s->lesson_full = !s->lesson_full;
        return REACT_REDRAW;
    case 's':
        if (a->runner && !runner_done(a->runner))
            app_stop_run(a);
        else
            app_message(a, ROLE_WARN, "No test is running.");
        return REACT_REDRAW;
    default:
        /* Up/Down, PgUp/PgDn, Home/End move the port table's selection (its line under the
         * table says the port in words); the drawing has nothing to move. */
        if (ui_nav_step(ch)) {
            if (s->table)
                ui_list_move(&s->ports, s->tab_n, ui_nav_step(ch));
            return REACT_REDRAW;
        }
        return REACT_NONE;
    }
}

/* A click on a row of the port table selects that port (the drawing only takes the focus). */
static int fabric_click(struct app *a, int pane, int row, int col)
{
    (void)pane;
    (void)col;
    struct fab_state *s = st(a);
    int k = row - s->tab_row0;
    if (s->table && k >= 0 && k < s->tab_rows && s->ports.top + k < s->tab_n)
        s->ports.sel = s->ports.top + k;
    return REACT_REDRAW;
}

static int fabric_tick(struct app *a)
{
    return follow(a) ? REACT_REDRAW : REACT_NONE;
}

static void fabric_enter(struct app *a)
{
    follow(a);
}

static const char *fabric_keys(const struct app *a)
{
    const struct fab_state *s = a->vstate[VIEW_FABRIC];
    if (!s->have || s->from != a->runner)
        return "F2 set up a test  Space start paused  -/+ speed  f full speed  i skip idle";
    return "Space pause  n/e step  -/+ speed  f full  i skip idle  l lesson  v table/drawing  "
           "> sort  \\ filter";
}

static void fabric_init(struct app *a)
{
    struct fab_state *s = xalloc_zero(1, sizeof(*s));
    s->order = (struct ui_order){.nsorts = SORT_COUNT, .names = sort_name};
    a->vstate[VIEW_FABRIC] = s;
    s->last_slow = DEFAULT_SCAL;
    /* Runs started in the explorer play in slow motion, skipping idle stretches, so they can
     * be watched here ('f' for full speed). */
    a->playback = (struct sim_ctl_state){.scale = DEFAULT_SCAL, .skip_idle = true, .paused = false};
}

static void fabric_fini(struct app *a)
{
    struct fab_state *s = st(a);
    forget(s);
    free(s);
    a->playback = (struct sim_ctl_state){0}; /* back to the library's default: full speed */
}

const struct view_ops view_fabric = {
    .name = "Fabric",
    .fkey = 6,
    .layout = LAYOUT_SINGLE,
    .init = fabric_init,
    .fini = fabric_fini,
    .enter = fabric_enter,
    .draw = fabric_draw,
    .key = fabric_key,
    .tick = fabric_tick,
    .keys = fabric_keys,
    .click = fabric_click,
};
