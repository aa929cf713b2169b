/* fabric_draw: a fabric as a picture of its tiers (fabric_draw.h). */
#include "tui/fabric_draw.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "topology/topo_fabric.h"

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

static void graph_alloc(struct fabric_draw_graph *g, int nnodes, int nports)
{
    g->nnodes = nnodes;
    g->nports = nports;
    g->names = xalloc_zero((size_t)nnodes + 1, sizeof(*g->names));
    g->host = xalloc_zero((size_t)nnodes + 1, sizeof(*g->host));
    g->ports = xalloc_zero((size_t)nports + 1, sizeof(*g->ports));
}

void fabric_draw_from_sim(const struct fabric_snap *v, const double *util, uint64_t qmax, bool utf8,
                          const bool *lit, struct fabric_draw_graph *g)
{
    graph_alloc(g, v->nnodes, v->nports);
    for (int i = 0; i < v->nnodes; i++) {
        snprintf(g->names[i], sizeof(g->names[i]), "%s", v->node_names[i]);
        g->host[i] = v->node_host[i];
    }
    for (int i = 0; i < v->nports; i++) {
        const struct sim_port_snap *p = &v->ports[i];
        const char *m = fabric_draw_mark(p, util ? util[i] : 0, qmax, utf8);
        bool sel = lit && lit[i];
        g->ports[i] =
            (struct fabric_draw_port){p->node, p->peer_node, m, sel ? ROLE_SELECTED : mark_role(m)};
    }
}

void fabric_draw_from_ib(const struct topo_fabric *f, int route, bool utf8,
                         struct fabric_draw_graph *g)
{
    /* Only cabled ports: a switch's 36 ports are mostly empty. */
    int n = 0;
    for (int i = 0; i < f->nports; i++)
        n += f->ports[i].remote >= 0;
    graph_alloc(g, f->nnodes, n);
    for (int i = 0; i < f->nnodes; i++) {
        topo_fnode_label(f, i, g->names[i], sizeof(g->names[i]));
        /* "switch 0x0002..." is long: the GUID's last six digits do. */
        if (!strncmp(g->names[i], "switch 0x", 9) && strlen(g->names[i]) > 15)
            memmove(g->names[i] + 3, g->names[i] + strlen(g->names[i]) - 6, 7);
        g->host[i] = f->nodes[i].type != TOPO_FNODE_SWITCH;
        /* A CA by its host: "node01 HCA-1" -> "node01". */
        char *sp = strchr(g->names[i], ' ');
        if (g->host[i] && sp && sp != g->names[i])
            *sp = '\0';
    }
    const struct topo_froute *r = route >= 0 && route < f->nroutes ? &f->routes[route] : NULL;
    int k = 0;
    for (int i = 0; i < f->nports; i++) {
        const struct topo_fport *p = &f->ports[i];
        if (p->remote < 0)
            continue;
        /* On the route: a port a hop leaves by, or the route's source. */
        bool on = r && r->src == i;
        for (int h = 0; r && h < r->nhops; h++) {
            const struct topo_fhop *hp = &f->hops[r->first_hop + h];
            on |= hp->node == p->node && hp->out_port == p->num;
        }
        const char *m = p->state == TOPO_PORT_ACTIVE ? (on ? "*" : "+")
                        : p->state == TOPO_PORT_DOWN ? "!"
                                                     : "?";
        (void)utf8;
        g->ports[k++] = (struct fabric_draw_port){p->node, f->ports[p->remote].node, m,
                                                  on                ? ROLE_SELECTED
                                                  : !strcmp(m, "+") ? ROLE_OK
                                                                    : ROLE_WARN};
    }
}

void fabric_draw_from_lldp(const struct topo_fabric *f, const char *host,
                           struct fabric_draw_graph *g)
{
    /* Node 0 is this host; then one node per neighbour system (by name, else chassis). */
    graph_alloc(g, f->nneighbours + 1, 2 * f->nneighbours);
    snprintf(g->names[0], sizeof(g->names[0]), "%s", host && *host ? host : "this host");
    g->host[0] = true;
    int nn = 1, np = 0;
    for (int i = 0; i < f->nneighbours; i++) {
        const struct topo_neighbour *nb = &f->neighbours[i];
        const char *who = nb->sysname[0] ? nb->sysname : nb->chassis_id;
        int k = 1;
        while (k < nn && strcmp(g->names[k], who))
            k++;
        if (k == nn)
            snprintf(g->names[nn++], sizeof(g->names[0]), "%s", who);
        g->ports[np++] = (struct fabric_draw_port){0, k, "+", ROLE_OK};
        g->ports[np++] = (struct fabric_draw_port){k, 0, "+", ROLE_OK};
    }
    g->nnodes = nn;
    g->nports = np;
}

void fabric_draw_free(struct fabric_draw_graph *g)
{
    free(g->names);
    free(g->host);
    free(g->ports);
    memset(g, 0, sizeof(*g));
}

/* One box of a row: a switch, or the hosts under one switch. */
struct box {
    int node;   /* the switch (or, for a host group, the switch it hangs from) */
    bool hosts; /* the hosts under node */
    int x, cx;  /* where it starts and its centre on screen */
};

/* The tier of every node: hosts 0, a switch one more than its lowest neighbour. */
static void tiers(const struct fabric_draw_graph *g, int *lvl)
{
    for (int i = 0; i < g->nnodes; i++)
        lvl[i] = g->host[i] ? 0 : -1;
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < g->nports; i++) {
            int a = g->ports[i].node, b = g->ports[i].peer;
            if (lvl[a] >= 0 && !g->host[b] && (lvl[b] < 0 || lvl[b] > lvl[a] + 1)) {
                lvl[b] = lvl[a] + 1;
                moved = true;
            }
        }
    }
}

/* Does switch a link to node b? */
static bool linked(const struct fabric_draw_graph *g, int a, int b)
{
    for (int i = 0; i < g->nports; i++)
        if (g->ports[i].node == a && g->ports[i].peer == b)
            return true;
    return false;
}

/* A box's text and marks at (y, b->x), at most w columns: "leaf0 ^HH v..H.", or for a host
 * group "h0-h7 ....H..." (each host's own port). */
/* Is port p one of box b's, in direction dir (0 up or a host's own, 1 down)? */
static bool box_port(const struct fabric_draw_graph *g, const int *lvl, const struct box *b,
                     const struct fabric_draw_port *p, int dir)
{
    if (b->hosts)
        return g->host[p->node] && p->peer == b->node && dir == 0;
    return p->node == b->node &&
           (dir == 0 ? lvl[p->peer] > lvl[b->node] : lvl[p->peer] < lvl[b->node]);
}

/* A host group's name: "h0-7", "node01-08" (the last name's part after what both share,
 * digits and all), or the one host's name. */
static void group_name(const char *first, const char *last, char *buf, size_t len)
{
    size_t p = 0;
    while (first[p] && first[p] == last[p])
        p++;
    while (p > 0 && isdigit((unsigned char)first[p - 1]))
        p--;
    if (!strcmp(first, last))
        snprintf(buf, len, "%s", first);
    else
        snprintf(buf, len, "%s-%s", first, last + p);
}

/* A box's text and marks at (y, b->x), at most w columns: "leaf0 ^HH v..H.", or for a host
 * group "h0-7 ....H..." (each host's own port); without the blanks when that fits and the
 * spaced form does not. */
static void draw_box(struct ui *u, int y, int w, const struct fabric_draw_graph *g, const int *lvl,
                     const struct box *b)
{
    char name[96];
    int first = -1, last = -1;
    if (b->hosts) {
        for (int i = 0; i < g->nports; i++)
            if (g->host[g->ports[i].node] && g->ports[i].peer == b->node) {
                if (first < 0)
                    first = g->ports[i].node;
                last = g->ports[i].node;
            }
        if (first < 0)
            return;
        group_name(g->names[first], g->names[last], name, sizeof(name));
    } else {
        snprintf(name, sizeof(name), "%s", g->names[b->node]);
    }
    int marks[2] = {0, 0};
    for (int dir = 0; dir < 2; dir++)
        for (int i = 0; i < g->nports; i++)
            marks[dir] += box_port(g, lvl, b, &g->ports[i], dir);
    int need = ui_width(name) + (marks[0] ? 2 + marks[0] : 0) + (marks[1] ? 2 + marks[1] : 0);
    bool tight = need > w;
    int x = b->x, end = b->x + w;
    ui_text(u, y, x, end - x, b->hosts ? ROLE_NIC : ROLE_SWITCH, name);
    x += ui_width(name);
    /* Up (toward a higher tier) then down; hosts: their own ports. */
    for (int dir = 0; dir < 2 && x < end; dir++) {
        if (!marks[dir])
            continue;
        const char *arrow = b->hosts   ? " "
                            : dir == 0 ? (u->utf8 ? "\u2191" : "^")
                                       : (u->utf8 ? "\u2193" : "v");
        if (!tight && !b->hosts)
            ui_text(u, y, x++, 1, ROLE_DIM, " ");
        ui_text(u, y, x, end - x, ROLE_DIM, arrow);
        x += ui_width(arrow);
        for (int i = 0; i < g->nports && x < end; i++)
            if (box_port(g, lvl, b, &g->ports[i], dir))
                ui_text(u, y, x++, 1, g->ports[i].role, g->ports[i].mark);
    }
}

/* The bus between an upper and a lower row: each lower box's span over the upper boxes it
 * links to, with a tee at every centre. */
static void draw_bus(struct ui *u, int y, const struct rect *in, const struct fabric_draw_graph *g,
                     const struct box *up, int nup, const struct box *lo, int nlo)
{
    char *on = xalloc_zero((size_t)in->w + 1, 1);
    for (int j = 0; j < nlo; j++) {
        int a = lo[j].cx, b = lo[j].cx;
        for (int i = 0; i < nup; i++) {
            bool l = lo[j].hosts ? up[i].node == lo[j].node : linked(g, lo[j].node, up[i].node);
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
        const char *glyph = u->utf8 ? (t && d ? "\u253c"
                                       : t    ? "\u2534"
                                       : d    ? "\u252c"
                                              : "\u2500")
                                    : (t || d ? "+" : "-");
        ui_text(u, y, in->x + c, 1, ROLE_BORDER, glyph);
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

int fabric_draw_render(struct ui *u, const struct rect *in, const struct fabric_draw_graph *g)
{
    if (g->nnodes <= 0 || in->h < 1)
        return 0;
    int *lvl = xalloc_zero((size_t)g->nnodes, sizeof(int));
    tiers(g, lvl);
    int top = 0;
    for (int i = 0; i < g->nnodes; i++)
        top = lvl[i] > top ? lvl[i] : top;
    /* Rows: the top tier first, down to tier 1, then the hosts under each tier-1 switch. */
    int nrows = top + 1;
    struct box **rows = xalloc_zero((size_t)nrows, sizeof(*rows));
    int *nb = xalloc_zero((size_t)nrows, sizeof(int));
    for (int r = 0; r < top; r++) {
        int t = top - r;
        rows[r] = xalloc_zero((size_t)g->nnodes, sizeof(struct box));
        for (int i = 0; i < g->nnodes; i++)
            if (lvl[i] == t)
                rows[r][nb[r]++] = (struct box){.node = i};
    }
    rows[top] = xalloc_zero((size_t)g->nnodes + 1, sizeof(struct box));
    for (int j = 0; top > 0 && j < nb[top - 1]; j++)
        rows[top][nb[top]++] = (struct box){.node = rows[top - 1][j].node, .hosts = true};
    int used = 0;
    for (int r = 0; r < nrows; r++) {
        place(rows[r], nb[r], in);
        if (r > 0 && used < in->h)
            draw_bus(u, in->y + used++, in, g, rows[r - 1], nb[r - 1], rows[r], nb[r]);
        if (used >= in->h)
            break;
        for (int i = 0; i < nb[r]; i++) {
            int w = (i + 1 < nb[r] ? rows[r][i + 1].x : in->x + in->w) - rows[r][i].x - 1;
            draw_box(u, in->y + used, w, g, lvl, &rows[r][i]);
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
