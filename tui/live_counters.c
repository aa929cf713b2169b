/* live_counters: the live view's counters pane: TCP numbers per flow (retransmissions, RTT,
 * congestion window) and the port-wide counters that moved during the test (z: all), by
 * object and source; on a short pane one of the two (c switches); ? explains the selected
 * counter. */
#include "tui/live_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "tui/glossary.h"
#include "tui/live_plot.h"
#include "tui/views.h"

/* A line of the counters pane. */
enum cline_kind { CL_HEAD, CL_OBJECT, CL_TCP, CL_CTR, CL_NOTE };
struct cline {
    enum cline_kind kind;
    int ref;          /* flow (CL_TCP) or counter (CL_CTR, CL_OBJECT) index */
    const char *text; /* CL_HEAD, CL_NOTE */
};

static const char *source_str(enum counters_source src)
{
    static const char *const names[] = {
        [COUNTERS_SRC_IB] = "IB port counters", [COUNTERS_SRC_HW] = "RDMA hw counters",
        [COUNTERS_SRC_NETDEV] = "netdev",       [COUNTERS_SRC_ETHTOOL] = "ethtool",
        [COUNTERS_SRC_QDISC] = "qdisc",         [COUNTERS_SRC_SNMP] = "kernel TCP/IP",
    };
    if (src == COUNTERS_SRC_QP) /* an RDMA counter bound to the test's own QPs
                                   (engine/counters/counters_qp.h) */
        return "this test's queue pairs";
    return (unsigned)src < sizeof(names) / sizeof(names[0]) ? names[src] : "?";
}

static const char *unit_short(const char *unit)
{
    if (!unit)
        return "";
    static const struct {
        const char *unit, *s;
    } m[] = {
        {"bytes", "B"}, {"packets", "pkt"}, {"events", ""}, {"count", ""}, {"segments", "seg"}};
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (!strcmp(unit, m[i].unit))
            return m[i].s;
    return unit;
}

static void ctr_num(char *buf, size_t len, double v, const char *unit, bool valid)
{
    if (!valid) {
        snprintf(buf, len, "n/a");
        return;
    }
    char n[24];
    live_fmt_si(n, sizeof(n), v);
    const char *us = unit_short(unit);
    snprintf(buf, len, "%s%s%s", n, *us ? " " : "", us);
}

/* Keep a blank between columns w wide: a number whose unit does not fit loses the unit
 * ("19.7k frames" -> "19.7k"; the other columns of the row carry it). */
static void ctr_fit(char *buf, int w)
{
    char *sp = strrchr(buf, ' ');
    if ((int)strlen(buf) > w - 1 && sp)
        *sp = '\0';
}

/* By default only counters that moved during the test (or whose state is unknown or odd)
 * are listed: a node has hundreds, nearly all of them still. */
static bool ctr_shown(const struct live_state *s, const struct counters_value *c)
{
    if (c->setting) /* configuration (forwarding, TTL, RTO bounds): only with z */
        return s->all_counters;
    if (s->all_counters || c->saturated || c->reset || c->reset_since_mark ||
        !(c->valid & COUNTERS_V_VALUE))
        return true;
    if (c->kind == COUNTERS_GAUGE)
        return c->value != 0 || ((c->valid & COUNTERS_V_PEAK) && c->peak != 0);
    return !(c->valid & COUNTERS_V_DELTA) || c->delta != 0 ||
           ((c->valid & COUNTERS_V_RATE) && c->rate != 0);
}

/* Flows with TCP_INFO to show (the other transports have none). */
static int tcp_flows(const struct runner_snapshot *snap)
{
    int n = 0;
    for (int i = 0; i < snap->nflows; i++)
        n += !strcmp(snap->flows[i].transport, "tcp");
    return n;
}

/* The pane's lines: the TCP section and/or the counters section. */
static int build_clines(struct app *a, struct live_state *s, int h, struct cline *out, int max,
                        bool *both)
{
    const struct runner_snapshot *snap = a->snap;
    int nctr = 0;
    for (int i = 0; i < snap->ncounters; i++)
        nctr += ctr_shown(s, &snap->counters[i]);
    s->ctr_moved = nctr;
    s->ctr_total = snap->ncounters;
    int ntcp = tcp_flows(snap);
    bool tcp = ntcp > 0, ctr = true;
    *both = !tcp || snap->ncounters == 0 || h >= 1 + ntcp + 1 + 5;
    if (!*both) {
        tcp = s->ctr_tcp;
        ctr = !s->ctr_tcp;
    }
    int n = 0;
    if (tcp && n < max) {
        out[n++] = (struct cline){CL_HEAD, -1, "TCP per flow"};
        for (int i = 0; i < snap->nflows && n < max; i++)
            if (!strcmp(snap->flows[i].transport, "tcp"))
                out[n++] = (struct cline){CL_TCP, i, NULL};
    }
    if (ctr && n < max) {
        if (snap->ncounters == 0) {
            out[n++] = (struct cline){CL_NOTE, -1, "counters: n/a (none sampled)"};
            return n;
        }
        out[n++] = (struct cline){CL_HEAD, -1, "port-wide"};
        if (nctr == 0 && n < max)
            out[n++] = (struct cline){CL_NOTE, -1, "(none moved during the test; z: all)"};
        const char *obj = NULL;
        enum counters_source src = COUNTERS_SRC_COUNT;
        for (int i = 0; i < snap->ncounters && n < max; i++) {
            const struct counters_value *c = &snap->counters[i];
            if (!ctr_shown(s, c))
                continue;
            /* A heading per object and source: a RoCE NIC's IB port counters and its
             * ethtool pause counters are headed each by their own source. */
            if ((!obj || strcmp(obj, c->object) || src != c->source) && n < max) {
                out[n++] = (struct cline){CL_OBJECT, i, NULL};
                obj = c->object;
                src = c->source;
            }
            if (n < max)
                out[n++] = (struct cline){CL_CTR, i, NULL};
        }
    }
    return n;
}

static void draw_ctr(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                     bool focus)
{
    const struct runner_snapshot *snap = a->snap;
    struct rect in = ui_inner(r);
    int maxl = snap->ncounters * 2 + snap->nflows + 8;
    struct cline *lines = xalloc_zero((size_t)maxl, sizeof(*lines));
    bool both;
    int n = build_clines(a, s, in.h, lines, maxl, &both);
    char t[3][128];
    if (!tcp_flows(snap)) {
        snprintf(t[0], sizeof(t[0]), "Counters, port-wide (? explains)");
        snprintf(t[1], sizeof(t[1]), "Counters, port-wide");
    } else if (both && snap->ncounters)
        snprintf(t[0], sizeof(t[0]), "TCP per flow; counters, port-wide (? explains)");
    else if (both)
        snprintf(t[0], sizeof(t[0]), "TCP per flow (? explains)");
    else if (s->ctr_tcp)
        snprintf(t[0], sizeof(t[0]), "TCP per flow (c: port-wide counters)");
    else
        snprintf(t[0], sizeof(t[0]), "Counters, port-wide (c: TCP, ? explains)");
    if (tcp_flows(snap))
        snprintf(t[1], sizeof(t[1]), "%s",
                 both         ? "TCP; counters, port-wide"
                 : s->ctr_tcp ? "TCP per flow (c)"
                              : "Counters, port-wide (c)");
    live_pane_box(u, r, focus, (const char *const[]){t[0], t[1]}, 2);
    if (in.h < 1 || in.w < 20) {
        free(lines);
        return;
    }
    /* Selection runs over TCP and counter lines only. */
    int nsel = 0, sel_line = -1;
    for (int i = 0; i < n; i++)
        if (lines[i].kind == CL_TCP || lines[i].kind == CL_CTR) {
            if (nsel == s->list[LIVE_CTR].sel)
                sel_line = i;
            nsel++;
        }
    s->nsel[LIVE_CTR] = nsel;
    if (nsel && s->list[LIVE_CTR].sel >= nsel) {
        s->list[LIVE_CTR].sel = nsel - 1;
        for (int i = n - 1; i >= 0; i--)
            if (lines[i].kind == CL_TCP || lines[i].kind == CL_CTR) {
                sel_line = i;
                break;
            }
    }
    s->sel_term[0] = '\0';
    if (sel_line >= 0) {
        if (lines[sel_line].kind == CL_CTR) {
            /* The glossary entry of this counter's own source ("rx_bytes (netdev)"). */
            const struct counters_value *c = &snap->counters[lines[sel_line].ref];
            const struct glossary_entry *g = glossary_counter(c->source, c->name);
            if (g)
                glossary_label(g, s->sel_term, sizeof(s->sel_term));
            else
                snprintf(s->sel_term, sizeof(s->sel_term), "%s", c->name);
        } else
            snprintf(s->sel_term, sizeof(s->sel_term), "retrans");
    }
    /* The list scrolls over lines, the selection over items: up to a selection, its
     * heading comes into view with it; the end of the list stays at the bottom. */
    struct ui_list *sc = &s->list[LIVE_CTR];
    if (sel_line >= 0 && sel_line < sc->top)
        sc->top =
            sel_line > 0 && lines[sel_line - 1].kind != CL_TCP && lines[sel_line - 1].kind != CL_CTR
                ? sel_line - 1
                : sel_line;
    if (sel_line >= sc->top + in.h)
        sc->top = sel_line - in.h + 1;
    ui_list_fit(sc, n, in.h);
    if (sel_line >= 0 && sel_line < sc->top)
        sc->top = sel_line;
    int top = sc->top;
    /* For clicks: each row's selection number (the selectable lines above it), -1 for a
     * heading or a note. */
    int k = 0;
    for (int i = 0; i < top && i < n; i++)
        k += lines[i].kind == CL_TCP || lines[i].kind == CL_CTR;
    for (int row = 0; row < LIVE_MAX_CLICK_ROWS; row++) {
        bool pick = row < in.h && top + row < n &&
                    (lines[top + row].kind == CL_TCP || lines[top + row].kind == CL_CTR);
        s->ctr_row_sel[row] = pick ? k++ : -1;
    }
    bool wide = in.w >= 56;
    const int numw = wide ? 12 : 10, tcpw = wide ? 10 : 8;
    for (int row = 0; row < in.h && top + row < n; row++) {
        const struct cline *l = &lines[top + row];
        int y = in.y + row;
        bool sel = focus && top + row == sel_line;
        char buf[256];
        switch (l->kind) {
        case CL_HEAD:
            if (!strcmp(l->text, "TCP per flow")) {
                int nw = in.w - 3 * tcpw;
                snprintf(buf, sizeof(buf), "%-*.*s%*s%*s%*s", nw, nw, "flow", tcpw, "retrans", tcpw,
                         "RTT us", tcpw, "cwnd");
            } else {
                int nw = in.w - (wide ? 3 : 2) * numw;
                /* The simulator's rates are averages per simulated second. */
                bool sim = snap->ncounters > 0 && snap->counters[0].simulated;
                const char *per = sim ? "per sim s" : "per s";
                char what[96];
                if (s->all_counters)
                    snprintf(what, sizeof(what), "all %d counters%s", s->ctr_total,
                             wide ? " (z: moved)" : "");
                else
                    snprintf(what, sizeof(what), "%d/%d moved%s", s->ctr_moved, s->ctr_total,
                             wide ? " (z: all)" : "");
                if (wide)
                    snprintf(buf, sizeof(buf), "%-*.*s%*s%*s%*s", nw, nw, what, numw, "total", numw,
                             per, numw, "in test");
                else
                    snprintf(buf, sizeof(buf), "%-*.*s%*s%*s", nw, nw, what, numw, per, numw,
                             "in test");
            }
            ui_text(u, y, in.x, in.w, ROLE_DIM, buf);
            break;
        case CL_NOTE:
            ui_text(u, y, in.x, in.w, ROLE_DIM, l->text);
            break;
        case CL_OBJECT: {
            const struct counters_value *c = &snap->counters[l->ref];
            snprintf(buf, sizeof(buf), "%s (%s%s)", c->object, c->simulated ? "simulated, " : "",
                     source_str(c->source));
            ui_text(u, y, in.x, in.w, ROLE_INFO, buf);
            break;
        }
        case CL_TCP: {
            const struct snap_flow *f = &snap->flows[l->ref];
            char rt[24] = "n/a", rtt[24] = "n/a", cw[24] = "n/a";
            bool ok = f->wire.valid;
            if (ok) {
                snprintf(rt, sizeof(rt), "%llu", (unsigned long long)f->wire.retrans);
                snprintf(rtt, sizeof(rtt), "%.1f", f->wire.rtt_us);
                /* Whole KiB: fits the column; the window is hundreds of KiB or more. */
                double kib = f->wire.cwnd_bytes / 1024.0;
                if (kib < 10000)
                    snprintf(cw, sizeof(cw), "%.0fKiB", kib);
                else
                    snprintf(cw, sizeof(cw), "%.0fMiB", kib / 1024);
            }
            int nw = in.w - 3 * tcpw;
            snprintf(buf, sizeof(buf), " %-*.*s%*s%*s%*s", nw - 1, nw - 1, f->name, tcpw, rt, tcpw,
                     rtt, tcpw, cw);
            enum theme_role role = sel                   ? ROLE_SELECTED
                                   : !ok                 ? ROLE_DIM
                                   : f->wire.retrans > 0 ? ROLE_WARN
                                                         : ROLE_NORMAL;
            ui_text_pad(u, y, in.x, in.w, role, buf);
            break;
        }
        case CL_CTR: {
            const struct counters_value *c = &snap->counters[l->ref];
            char val[32], rate[32], delta[32];
            bool gauge = c->kind == COUNTERS_GAUGE;
            ctr_num(val, sizeof(val), c->value, c->unit, c->valid & COUNTERS_V_VALUE);
            /* A gauge is a level: its value where a rate would be, its peak in the test. */
            if (gauge)
                snprintf(rate, sizeof(rate), "%s", val);
            else
                ctr_num(rate, sizeof(rate), c->rate, c->unit, c->valid & COUNTERS_V_RATE);
            if (c->saturated) {
                snprintf(delta, sizeof(delta), "saturated");
            } else if (gauge) {
                char pk[32];
                ctr_num(pk, sizeof(pk), c->peak, c->unit, c->valid & COUNTERS_V_PEAK);
                snprintf(delta, sizeof(delta), "max %s", pk);
                if ((int)strlen(delta) > numw - 1)
                    snprintf(delta, sizeof(delta), "%s", pk);
            } else {
                ctr_num(delta, sizeof(delta), c->delta, c->unit, c->valid & COUNTERS_V_DELTA);
            }
            ctr_fit(val, numw);
            ctr_fit(rate, numw);
            ctr_fit(delta, numw);
            int nw = in.w - (wide ? 3 : 2) * numw;
            char name[80];
            snprintf(name, sizeof(name), " %s%s", c->name,
                     c->reset || c->reset_since_mark ? " (reset)" : "");
            if (wide)
                snprintf(buf, sizeof(buf), "%-*.*s%*s%*s%*s", nw, nw, name, numw, val, numw, rate,
                         numw, delta);
            else
                snprintf(buf, sizeof(buf), "%-*.*s%*s%*s", nw, nw, name, numw, rate, numw, delta);
            bool bad = c->error_like && (c->valid & COUNTERS_V_DELTA) && c->delta > 0;
            enum theme_role role = sel                                               ? ROLE_SELECTED
                                   : bad                                             ? ROLE_ERROR
                                   : c->saturated || c->reset || c->reset_since_mark ? ROLE_WARN
                                   : !(c->valid & COUNTERS_V_VALUE)                  ? ROLE_DIM
                                                                                     : ROLE_NORMAL;
            ui_text_pad(u, y, in.x, in.w, role, buf);
            break;
        }
        }
    }
    free(lines);
}

/* ? explains the selected counter (or TCP retransmissions). */
static int key_ctr(struct app *a, struct live_state *s, int ch)
{
    if (ch == '?' && a->snap && s->sel_term[0]) {
        help_show_term(a, s->sel_term);
        return REACT_REDRAW;
    }
    return REACT_NONE;
}

/* A click on a counter's (or a flow's TCP) row selects it, for ? to explain. */
static int click_ctr(struct app *a, struct live_state *s, int row, int col)
{
    (void)a;
    (void)col;
    if (row >= 0 && row < LIVE_MAX_CLICK_ROWS && s->ctr_row_sel[row] >= 0)
        s->list[LIVE_CTR].sel = s->ctr_row_sel[row];
    return REACT_REDRAW;
}

const struct live_pane live_counters_pane = {.draw = draw_ctr, .key = key_ctr, .click = click_ctr};
