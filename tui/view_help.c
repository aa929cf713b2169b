/* view_help: the keys, then the glossary of every term and counter on screen (press ? on
 * a counter in the live view to jump to its entry). Scrollable; / searches. */
/* strcasestr is a GNU extension. */
#define _GNU_SOURCE
#include "tui/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "tui/glossary.h"
#include "tui/ui_list.h"

struct help_state {
    struct ui_list scroll; /* top only: the text scrolls, nothing is selected */
    struct ui_search search;
    struct strbuf text; /* rendered at the width last drawn */
    int width;
};

static struct help_state *st(struct app *a)
{
    return a->vstate[VIEW_HELP];
}

static const char *const key_lines[] = {
    "Keys (htop/nvtop style; every view lists its own keys in the bottom line)",
    "  F1 or 1, ? this help           F2 or 2    test setup",
    "  F3 or 3    topology            F4 or 4    live run",
    "  F5 or 5    results, compare    F6 or 6    simulated fabric",
    "  F7 or 7    rack sweep          F10 or q   quit",
    "  (digit n is Fn, the tabs run F1 to F7; in the setup form digits go to the field)",
    "  Tab        next pane           Shift-Tab  previous pane",
    "  Up/Down, j/k   move            PgUp/PgDn  page",
    "  Enter      open / go to        /          search, n next",
    "  t          next colour theme (remembered for the next start)",
    "  mouse      click a tab, a row or a key of the bottom line; the wheel scrolls the "
    "pane under it (fabtop --no-mouse leaves the mouse to the terminal)",
    "Topology: m toggles the affinity matrix (in its pane Left/Right scroll the columns, the "
    "heads stay); Tab to the lint list shows the selected finding whole with its fix; Enter "
    "on a finding jumps to its object.",
    "Colours of changes (live l/q column, compare B/A): green better, yellow worse by 10 % up "
    "to 2x, red worse by 2x or more; within 10 % no colour. Latency lower is better, goodput "
    "higher. The p50/p99/p99.9 markers are told apart by hue only: they rate nothing.",
    "Setup: S starts the test, D a fault drill of its mix with the Drill field's fault at 1 s "
    "(Left/Right: peer-stall, peer-kill, blackhole, rank-loss, link-down; Enter types FOR x "
    "TIMES); below the form what D does, or the reason a mix cannot take the fault. Blackhole "
    "is the agent's (verbs ping-pongs: their queue pairs to the error state), rank-loss kills "
    "a victim agent of NCCL ranks; a link-down or a blackhole of TCP needs a namespace or "
    "netdev of the drill's own: D starts nothing, writes the mix and the Drill field shows "
    "the fabtop drill line to run. F4 shows each "
    "repetition's detection and recovery, w saves the drill. C runs the handshake doctor "
    "against the Peer field's agent (both ends' facts side by side, with an RDMA endpoint its "
    "port, GIDs and DCB and a queue pair walked to RTS), in a panel over the form: Up/Down "
    "scroll it, Esc returns to the form.",
    "Live run: p pauses the display, s stops the test, w saves the results, ? on a counter "
    "explains it; in the percentile table (Tab to it), Left/Right picks the flow whose "
    "histogram is shown; y switches the counts between log and linear, d between the "
    "histogram and the CDF; in the loaded phase the quiet phase's distribution is drawn as "
    "dots on the same axis (shares of each phase's samples).",
    "Results: Space marks a result for comparison, c compares the two marked, Enter opens; > "
    "(or F6) and < sort the list (mix, peer, status, highest p99, highest goodput), \\ or / "
    "filters it by any text of the row.",
    "Sweep (fabtop --results SWEEP.json, --attach FILE): arrows move over the matrix, b/l/p "
    "bandwidth, latency p50, p99; Left of the first column the rank itself; Tab to the verdicts, "
    "Enter jumps to the cell; > (or F6) and < sort the verdicts (state, kind, ratio), \\ or / "
    "filters them.",
    "Fabric (sim runs): Space pauses, n steps 1 us and e one event, -/+ slower/faster "
    "(1 us per 10 us to 100 ms), f full speed, i skips idle stretches, a active ports, l the "
    "lesson; v switches between the fabric drawn (tiers, buses, a mark per port: a queue bar, "
    "H held, X pausing its peer, ! down) and the port table; > (or F6) and < sort the ports (name, "
    "queue, watermark, pause, drops, util), \\ "
    "or / filters them by port or peer name; Up/Down (or a click) select a port, said in words "
    "under the table.",
    "",
    "Command-line equivalents: fabtop topo [--matrix|--lint|--json], fabtop run --mix NAME,",
    "fabtop serve, fabtop compare A.json B.json, fabtop --input FILE, fabtop --results FILE,",
    "fabtop --attach FILE (a running sweep's document, re-read when it changes).",
    "",
    "Glossary",
};

/* Wrap text to width with a hanging indent. */
static void wrap(struct strbuf *sb, const char *lead, const char *text, int width)
{
    int col = (int)strlen(lead);
    strbuf_add(sb, lead);
    const char *s = text;
    while (*s) {
        size_t w = strcspn(s, " ");
        if (col + (int)w > width && col > 8) {
            strbuf_add(sb, "\n        ");
            col = 8;
        }
        strbuf_addn(sb, s, w);
        col += (int)w;
        s += w;
        if (*s == ' ') {
            strbuf_add(sb, " ");
            col++;
            s++;
        }
    }
    strbuf_add(sb, "\n");
}

static void render(struct app *a, int width)
{
    struct help_state *h = st(a);
    strbuf_reset(&h->text);
    /* Lines wider than the pane wrap (80x24 leaves 78 columns) instead of being cut. */
    for (size_t i = 0; i < sizeof(key_lines) / sizeof(key_lines[0]); i++)
        if ((int)strlen(key_lines[i]) > width)
            wrap(&h->text, "", key_lines[i], width);
        else
            strbuf_printf(&h->text, "%s\n", key_lines[i]);
    int n;
    const struct glossary_entry *g = glossary_all(&n);
    for (int i = 0; i < n; i++) {
        char lead[160], label[140];
        glossary_label(&g[i], label, sizeof(label));
        snprintf(lead, sizeof(lead), "  %s: ", label);
        wrap(&h->text, lead, g[i].text, width);
    }
    h->width = width;
}

static void help_init(struct app *a)
{
    struct help_state *h = xalloc_zero(1, sizeof(*h));
    strbuf_init(&h->text);
    a->vstate[VIEW_HELP] = h;
}

static void help_fini(struct app *a)
{
    struct help_state *h = st(a);
    strbuf_free(&h->text);
    free(h);
}

static int line_count(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void find(struct app *a, bool from_next);

static void help_draw(struct app *a, struct ui *u, const struct layout *l)
{
    struct help_state *h = st(a);
    const struct rect *r = &l->pane[0];
    struct rect in = ui_inner(r);
    if (h->width != in.w) {
        /* Wrapped anew, the lines move: the term searched for (? on a counter) is found
         * again, else its entry would scroll off above. */
        render(a, in.w);
        if (h->search.text[0] && !h->search.active) {
            h->scroll.top = 0;
            find(a, false);
        }
    }
    ui_box(u, r, "Help and glossary", true);
    int total = line_count(h->text.s);
    ui_list_fit(&h->scroll, total, in.h);
    int line = 0, row = 0;
    for (const char *s = h->text.s; *s && row < in.h;) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (line >= h->scroll.top) {
            char buf[512];
            snprintf(buf, sizeof(buf), "%.*s", (int)n, s);
            bool heading = buf[0] && buf[0] != ' ';
            enum theme_role role = heading ? ROLE_HEADER : ROLE_NORMAL;
            if (h->search.text[0] && !h->search.active && strcasestr(buf, h->search.text))
                role = ROLE_SELECTED;
            ui_text(u, in.y + row, in.x, in.w, role, buf);
            row++;
        }
        line++;
        s += n + (e ? 1 : 0);
    }
    ui_search_draw(u, l->status.y - 1, &h->search);
}

/* Line i of the rendered text. */
static const char *text_line(void *ctx, int i, char *buf, size_t len)
{
    const char *s = ((struct help_state *)ctx)->text.s;
    for (; i > 0 && (s = strchr(s, '\n')); i--)
        s++;
    if (!s)
        return NULL;
    const char *e = strchr(s, '\n');
    snprintf(buf, len, "%.*s", (int)(e ? (size_t)(e - s) : strlen(s)), s);
    return buf;
}

/* Scroll to the next line containing the search text (from the top line itself, or the
 * line below it for n); the help does not wrap around. */
static void find(struct app *a, bool from_next)
{
    struct help_state *h = st(a);
    int line = ui_list_find(line_count(h->text.s), h->scroll.top + (from_next ? 1 : 0), false,
                            h->search.text, text_line, h);
    if (line >= 0) {
        h->scroll.top = line;
        return;
    }
    app_message(a, ROLE_WARN, "'%s' not found below", h->search.text);
}

void help_show_term(struct app *a, const char *term)
{
    struct help_state *h = st(a);
    /* Its entry's line: "  TERM: " at the start (a bare "TERM: " is also found inside
     * "  half TERM: "). */
    snprintf(h->search.text, sizeof(h->search.text), "  %s: ", term);
    app_switch(a, VIEW_HELP);
    if (!h->width)
        render(a, a->ui.cols > 4 ? a->ui.cols - 4 : 76);
    h->scroll.top = 0;
    find(a, false);
}

static int help_key(struct app *a, int ch)
{
    struct help_state *h = st(a);
    if (h->search.active) {
        /* Esc closes the line and forgets what was typed (no line stays marked). */
        enum ui_search_step st = ui_search_key(&h->search, ch);
        if (st == UI_SEARCH_ENTER)
            find(a, false);
        else if (st == UI_SEARCH_ESC)
            h->search.text[0] = '\0';
        return REACT_REDRAW;
    }
    /* Up/Down, PgUp/PgDn (Space too), Home scroll; the help has no End. */
    int d = ch == ' ' ? 10 : ch == KEY_END || ch == 'G' ? 0 : ui_nav_step(ch);
    if (d) {
        ui_list_scroll(&h->scroll, d);
        return REACT_REDRAW;
    }
    switch (ch) {
    case '/':
        ui_search_start(&h->search);
        return REACT_REDRAW;
    case 'n':
        find(a, true);
        return REACT_REDRAW;
    case 27:
        app_switch(a, a->prev);
        return REACT_REDRAW;
    case '?':
        return REACT_HANDLED;
    default:
        return REACT_NONE;
    }
}

static const char *help_keys(const struct app *a)
{
    (void)a;
    return "Up/Down scroll  PgUp/PgDn page  / search  n next  Esc back";
}

const struct view_ops view_help = {
    .name = "Help",
    .fkey = 1,
    .layout = LAYOUT_SINGLE,
    .init = help_init,
    .fini = help_fini,
    .draw = help_draw,
    .key = help_key,
    .keys = help_keys,
};
