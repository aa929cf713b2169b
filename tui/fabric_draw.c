/* fabric_draw: the simulated fabric as a picture of its tiers (fabric_draw.h). */
#include "tui/fabric_draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

const char *fabric_draw_mark(const struct sim_port_snap *p, double util, uint64_t qmax, bool utf8)
{
    static const char *const bars_u[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char *const bars_a[] = {"1", "2", "3", "4", "5", "6", "7", "8"};
    if (!p->up)
        return "!";
    if (p->paused)
        return "H";
    if (p->pausing)
        return "X";
    if (p->queue_bytes && qmax) {
        int k = (int)((double)p->queue_bytes / (double)qmax * 8 + 0.999) - 1;
        k = k < 0 ? 0 : k > 7 ? 7 : k;
        return utf8 ? bars_u[k] : bars_a[k];
    }
    if (util > 0)
        return "+";
    return utf8 ? "\u00b7" : ".";
}

static enum theme_role mark_role(const char *m)
{
    if (!strcmp(m, "!"))
        return ROLE_ERROR;
    if (!strcmp(m, "H") || !strcmp(m, "X"))
        return ROLE_WARN;
    if (!strcmp(m, "+"))
        return ROLE_NORMAL;
    if (!strcmp(m, ".") || !strcmp(m, "\u00b7"))
        return ROLE_DIM;
    return ROLE_BAR;
}

/* One box of a row: a switch, or the hosts under one switch. */
struct box {
    int node;   /* the switch (or, for a host group, the switch it hangs from) */
    bool hosts; /* the hosts under node */
    int x, cx;  /* where it starts and its centre on screen */
};

/* The tier of every node: hosts 0, a switch one more than its lowest neighbour. */
static void tiers(const struct fabric_snap *v, int *lvl)
{
    for (int i = 0; i < v->nnodes; i++)
        lvl[i] = v->node_host[i] ? 0 : -1;
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < v->nports; i++) {
            int a = v->ports[i].node, b = v->ports[i].peer_node;
            if (lvl[a] >= 0 && !v->node_host[b] && (lvl[b] < 0 || lvl[b] > lvl[a] + 1)) {
                lvl[b] = lvl[a] + 1;
                moved = true;
            }
        }
    }
}

/* Does switch a link to node b? */
static bool linked(const struct fabric_snap *v, int a, int b)
{
    for (int i = 0; i < v->nports; i++)
        if (v->ports[i].node == a && v->ports[i].peer_node == b)
            return true;
    return false;
}

/* A box's text and marks at (y, b->x), at most w columns: "leaf0 ^HH v..H.", or for a host
 * group "h0-h7 ....H..." (each host's own port). */
static void draw_box(struct ui *u, int y, int w, const struct fabric_snap *v, const int *lvl,
                     const struct box *b, const double *util, uint64_t qmax)
{
    char name[64];
    int first = -1, last = -1;
    if (b->hosts) {
        for (int i = 0; i < v->nports; i++)
            if (v->ports[i].host && v->ports[i].peer_node == b->node) {
                if (first < 0)
                    first = v->ports[i].node;
                last = v->ports[i].node;
            }
        if (first == last)
            snprintf(name, sizeof(name), "%s", v->node_names[first]);
        else
            snprintf(name, sizeof(name), "%s-%s", v->node_names[first], v->node_names[last]);
    } else {
        snprintf(name, sizeof(name), "%s", v->node_names[b->node]);
    }
    int x = b->x, end = b->x + w;
    ui_text(u, y, x, end - x, b->hosts ? ROLE_NIC : ROLE_SWITCH, name);
    x += ui_width(name);
    /* Up (toward a higher tier) then down; hosts: their own ports. */
    for (int dir = 0; dir < 2 && x < end; dir++) {
        bool any = false;
        for (int i = 0; i < v->nports && x < end; i++) {
            const struct sim_port_snap *p = &v->ports[i];
            bool mine = b->hosts
                            ? p->host && p->peer_node == b->node && dir == 0
                            : p->node == b->node && (dir == 0 ? lvl[p->peer_node] > lvl[b->node]
                                                              : lvl[p->peer_node] < lvl[b->node]);
            if (!mine)
                continue;
            if (!any) {
                const char *arrow = b->hosts   ? " "
                                    : dir == 0 ? (u->utf8 ? " \u2191" : " ^")
                                               : (u->utf8 ? " \u2193" : " v");
                ui_text(u, y, x, end - x, ROLE_DIM, arrow);
                x += ui_width(arrow);
                any = true;
            }
            const char *m = fabric_draw_mark(p, util ? util[i] : 0, qmax, u->utf8);
            ui_text(u, y, x++, 1, mark_role(m), m);
        }
    }
}

/* The bus between an upper and a lower row: each lower box's span over the upper boxes it
 * links to, with a tee at every centre. */
static void draw_bus(struct ui *u, int y, const struct rect *in, const struct fabric_snap *v,
                     const struct box *up, int nup, const struct box *lo, int nlo)
{
    char *on = xalloc_zero((size_t)in->w + 1, 1);
    for (int j = 0; j < nlo; j++) {
        int a = lo[j].cx, b = lo[j].cx;
        for (int i = 0; i < nup; i++) {
            bool l = lo[j].hosts ? up[i].node == lo[j].node : linked(v, lo[j].node, up[i].node);
            if (!l)
                continue;
            a = up[i].cx < a ? up[i].cx : a;
            b = up[i].cx > b ? up[i].cx : b;
        }
        for (int x = a; x <= b; x++)
            if (x - in->x >= 0 && x - in->x < in->w)
                on[x - in->x] = 1;
    }
    for (int c = 0; c < in->w; c++) {
        if (!on[c])
            continue;
        bool t = false, d = false;
        for (int i = 0; i < nup; i++)
            t |= up[i].cx == in->x + c;
        for (int j = 0; j < nlo; j++)
            d |= lo[j].cx == in->x + c;
        const char *g = u->utf8 ? (t && d ? "\u253c"
                                   : t    ? "\u2534"
                                   : d    ? "\u252c"
                                          : "\u2500")
                                : (t || d ? "+" : "-");
        ui_text(u, y, in->x + c, 1, ROLE_BORDER, g);
    }
    free(on);
}

/* Place n boxes evenly across in: slot i starts at in->x + i * w / n. */
static void place(struct box *b, int n, const struct rect *in)
{
    for (int i = 0; i < n; i++) {
        b[i].x = in->x + i * in->w / n;
        int w = in->w / n;
        b[i].cx = b[i].x + (w > 12 ? 4 : w / 3);
    }
}

int fabric_draw_topology(struct ui *u, const struct rect *in, const struct fabric_snap *v,
                         const double *util, uint64_t qmax)
{
    if (v->nnodes <= 0 || in->h < 1)
        return 0;
    int *lvl = xalloc_zero((size_t)v->nnodes, sizeof(int));
    tiers(v, lvl);
    int top = 0;
    for (int i = 0; i < v->nnodes; i++)
        top = lvl[i] > top ? lvl[i] : top;
    /* Rows: the top tier first, down to tier 1, then the hosts under each tier-1 switch. */
    int nrows = top + 1;
    struct box **rows = xalloc_zero((size_t)nrows, sizeof(*rows));
    int *nb = xalloc_zero((size_t)nrows, sizeof(int));
    for (int r = 0; r < top; r++) {
        int t = top - r;
        rows[r] = xalloc_zero((size_t)v->nnodes, sizeof(struct box));
        for (int i = 0; i < v->nnodes; i++)
            if (lvl[i] == t)
                rows[r][nb[r]++] = (struct box){.node = i};
    }
    rows[top] = xalloc_zero((size_t)v->nnodes + 1, sizeof(struct box));
    for (int j = 0; top > 0 && j < nb[top - 1]; j++)
        rows[top][nb[top]++] = (struct box){.node = rows[top - 1][j].node, .hosts = true};
    int used = 0;
    for (int r = 0; r < nrows; r++) {
        place(rows[r], nb[r], in);
        if (r > 0 && used < in->h)
            draw_bus(u, in->y + used++, in, v, rows[r - 1], nb[r - 1], rows[r], nb[r]);
        if (used >= in->h)
            break;
        for (int i = 0; i < nb[r]; i++) {
            int w = (i + 1 < nb[r] ? rows[r][i + 1].x : in->x + in->w) - rows[r][i].x - 1;
            draw_box(u, in->y + used, w, v, lvl, &rows[r][i], util, qmax);
        }
        used++;
    }
    for (int r = 0; r < nrows; r++)
        free(rows[r]);
    free(rows);
    free(nb);
    free(lvl);
    return used;
}
