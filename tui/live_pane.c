/* live_pane: what the live view's panes share: a flow's latency kind in words, Gb/s
 * formatting, a box with the first title that fits, columns of vertical bars. */
#include "tui/live_pane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct mix_flow *spec_of(const struct app *a, int i)
{
    return a->have_run_mix && i >= 0 && i < a->run_mix.nflows ? &a->run_mix.flows[i] : NULL;
}

enum mix_latency_kind live_pane_kind_of(const struct app *a, int i)
{
    const struct mix_flow *f = spec_of(a, i);
    return f ? mix_latency_kind_of(f) : MIX_LAT_NONE;
}

const char *live_pane_kind_words(enum mix_latency_kind k, bool brief)
{
    switch (k) {
    case MIX_LAT_HALF_RTT:
        return brief ? "half RTT" : "half round trip";
    case MIX_LAT_RTT:
        return "round trip";
    case MIX_LAT_PER_OP:
        return "per operation";
    case MIX_LAT_PER_REQUEST:
        return brief ? "per request" : "per request (first descriptor to notification)";
    default:
        return "no latency";
    }
}

void live_pane_fmt_gbps(char *buf, size_t len, double g)
{
    if (isnan(g))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, g < 10 ? "%.3f" : g < 100 ? "%.2f" : "%.1f", g);
}

/* Columns of vertical bars (fractions of height rows), one text call per row rather than
 * one per cell: a frame at 132x43 is drawn in well under a millisecond. The glyphs match
 * ui_vbar's (eighth blocks in UTF-8, '#' from half a row otherwise). */
void live_pane_vbars(struct ui *u, int y_bottom, int x, int height, const double *frac, int n,
                     enum theme_role role)
{
    static const char *const eighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    char row[4 * 512 + 1];
    n = n > 512 ? 512 : n;
    for (int i = 0; i < height; i++) {
        size_t len = 0;
        for (int c = 0; c < n; c++) {
            double f = frac[c] > 1 ? 1 : frac[c] > 0 ? frac[c] : 0;
            int k = (int)(f * height * 8 + 0.5) - i * 8;
            k = k < 0 ? 0 : k > 8 ? 8 : k;
            const char *g = u->utf8 ? eighths[k] : k >= 4 ? "#" : " ";
            size_t gl = strlen(g);
            memcpy(row + len, g, gl);
            len += gl;
        }
        row[len] = '\0';
        ui_text(u, y_bottom - i, x, n, role, row);
    }
}

/* The first title that fits the box. */
void live_pane_box(struct ui *u, const struct rect *r, bool focus, const char *const *variants,
                   int n)
{
    int i = 0;
    while (i < n - 1 && ui_width(variants[i]) > r->w - 6)
        i++;
    ui_box(u, r, variants[i], focus);
}

int live_pane_sel_move(struct live_state *s, int pane, int d)
{
    bool moved = ui_list_move(&s->list[pane], s->nsel[pane], d);
    if (pane == LIVE_EV)
        s->ev_follow = s->list[pane].sel >= s->nsel[pane] - 1;
    return moved || pane == LIVE_EV ? REACT_REDRAW : REACT_HANDLED;
}

double live_pane_sim_flow_done(const struct snap_flow *f, const struct fabric_snap_flow *ff)
{
    if (ff->background || !ff->target)
        return -1;
    double d = f->size ? (double)ff->st.tx_acked / ((double)ff->target * (double)f->size)
                       : (double)ff->st.ops / (double)ff->target;
    return d < 0 ? 0 : d > 1 ? 1 : d;
}

double live_pane_sim_done(const struct runner_snapshot *snap)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < snap->nflows; i++) {
        const struct fabric_snap_flow *ff = fabric_snap_flow(snap->fabric, snap->flows[i].name);
        double d = ff ? live_pane_sim_flow_done(&snap->flows[i], ff) : -1;
        if (d >= 0) {
            sum += d;
            n++;
        }
    }
    return n ? sum / n : -1;
}
