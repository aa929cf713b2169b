/* screen: newterm on /dev/null, the app drawn into it, rows read back with mvwinnstr and
 * compared with expected screen files (see screen.h). Line-drawing characters are stored by
 * curses as letters with A_ALTCHARSET; the dump shows them as the box characters a real
 * terminal draws, so expected files read like the screen. */
#include "tests/tui/screen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int screen_open(struct screen *s, const char *term, int rows, int cols, const struct app_opts *o)
{
    memset(s, 0, sizeof(*s));
    struct ft_err err = {0};
    if (app_init(&s->app, o, &err) < 0) {
        failf("app_init: %s", err.msg);
        return -1;
    }
    s->have_app = true;
    s->out = fopen("/dev/null", "w");
    s->in = fopen("/dev/null", "r");
    s->scr = s->out && s->in ? newterm(term ? term : "xterm-256color", s->out, s->in) : NULL;
    if (!s->scr) {
        failf("newterm(%s) failed: is the terminfo entry installed?",
              term ? term : "xterm-256color");
        screen_close(s);
        return -1;
    }
    set_term(s->scr);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    resizeterm(rows, cols);
    ui_setup(&s->app.ui, stdscr, &s->app.theme, s->app.o.no_color);
    return 0;
}

void screen_close(struct screen *s)
{
    if (s->scr) {
        endwin();
        delscreen(s->scr);
        s->scr = NULL;
    }
    if (s->out)
        fclose(s->out);
    if (s->in)
        fclose(s->in);
    s->out = s->in = NULL;
    if (s->have_app)
        app_fini(&s->app);
    s->have_app = false;
}

void screen_resize(struct screen *s, int rows, int cols)
{
    resizeterm(rows, cols);
    app_key(&s->app, KEY_RESIZE);
    screen_draw(s);
}

static int key_code(const char *w, size_t n)
{
    static const struct {
        const char *name;
        int key;
    } names[] = {{"Up", KEY_UP},      {"Down", KEY_DOWN},
                 {"Left", KEY_LEFT},  {"Right", KEY_RIGHT},
                 {"Enter", '\n'},     {"Tab", '\t'},
                 {"BTab", KEY_BTAB},  {"Esc", 27},
                 {"Space", ' '},      {"PgUp", KEY_PPAGE},
                 {"PgDn", KEY_NPAGE}, {"Home", KEY_HOME},
                 {"End", KEY_END},    {"Backspace", KEY_BACKSPACE}};
    if (w[0] == 'F' && n >= 2 && n <= 3 && w[1] >= '0' && w[1] <= '9')
        return KEY_F(atoi(w + 1));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && !strncmp(w, names[i].name, n))
            return names[i].key;
    return (unsigned char)w[0];
}

void screen_keys(struct screen *s, const char *keys)
{
    const char *p = keys;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " ");
        if (p[0] == '/' && n > 1) {
            app_key(&s->app, '/');
            for (size_t i = 1; i < n; i++)
                app_key(&s->app, (unsigned char)p[i]);
            app_key(&s->app, '\n');
        } else {
            app_key(&s->app, key_code(p, n));
        }
        p += n;
    }
}

void screen_draw(struct screen *s)
{
    app_draw(&s->app);
}

/* The box character curses draws for an alternate-charset letter. */
static const char *acs_text(int c)
{
    switch (c) {
    case 'l':
        return "┌";
    case 'k':
        return "┐";
    case 'm':
        return "└";
    case 'j':
        return "┘";
    case 'q':
        return "─";
    case 'x':
        return "│";
    case 't':
        return "├";
    case 'u':
        return "┤";
    case 'v':
        return "┴";
    case 'w':
        return "┬";
    case 'n':
        return "┼";
    case 'a':
        return "▒";
    case '~':
        return "·";
    default:
        return "?";
    }
}

static void row_text(struct strbuf *sb, int y)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    (void)rows;
    size_t start = sb->len;
    for (int x = 0; x < cols; x++) {
        chtype c = mvwinch(stdscr, y, x);
        if (c & A_ALTCHARSET) {
            strbuf_add(sb, acs_text((int)(c & A_CHARTEXT)));
            continue;
        }
        /* mvwinnstr reads from (y, x) to the end of the row, as multibyte text; keep the
         * first character, which is this cell's. */
        char buf[16] = "";
        int n = mvwinnstr(stdscr, y, x, buf, (int)sizeof(buf) - 1);
        if (n <= 0) {
            strbuf_add(sb, " ");
            continue;
        }
        int len = mblen(buf, (size_t)n);
        strbuf_addn(sb, buf, len > 0 ? (size_t)len : 1);
    }
    while (sb->len > start && sb->s[sb->len - 1] == ' ')
        sb->s[--sb->len] = '\0';
}

/* Replace the first from in the line that starts at sb->s[start] with to. */
static void replace_in(struct strbuf *sb, size_t start, const char *from, const char *to)
{
    char *at = from && *from ? strstr(sb->s + start, from) : NULL;
    if (!at)
        return;
    char *rest = xalloc_strdup(at + strlen(from));
    sb->len = (size_t)(at - sb->s);
    sb->s[sb->len] = '\0';
    strbuf_add(sb, to);
    strbuf_add(sb, rest);
    free(rest);
}

char *screen_dump(struct screen *s)
{
    (void)s;
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    (void)cols;
    struct strbuf sb;
    strbuf_init(&sb);
    for (int y = 0; y < rows; y++) {
        size_t start = sb.len;
        row_text(&sb, y);
        if (y == 0) {
            replace_in(&sb, start, " " FABTOP_VERSION " ", " @VERSION@ ");
        }
        strbuf_add(&sb, "\n");
    }
    return sb.s; /* the caller frees it */
}

void screen_row(struct screen *s, int y, char *buf, size_t len)
{
    (void)s;
    struct strbuf sb;
    strbuf_init(&sb);
    row_text(&sb, y);
    snprintf(buf, len, "%s", sb.s);
    strbuf_free(&sb);
}

int screen_find_row(struct screen *s, const char *needle)
{
    int rows = getmaxy(stdscr);
    for (int y = 0; y < rows; y++) {
        char buf[2048];
        screen_row(s, y, buf, sizeof(buf));
        if (strstr(buf, needle))
            return y;
    }
    return -1;
}

attr_t screen_attr(struct screen *s, int y, int x)
{
    (void)s;
    return (attr_t)(mvwinch(stdscr, y, x) & (A_ATTRIBUTES & ~A_ALTCHARSET));
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    struct strbuf sb;
    strbuf_init(&sb);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_addn(&sb, buf, n);
    fclose(f);
    return sb.s; /* the caller frees it */
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Print the lines that differ, numbered from 1. */
static void print_diff(const char *want, const char *got)
{
    int line = 1, shown = 0;
    while ((*want || *got) && shown < 12) {
        size_t nw = strcspn(want, "\n"), ng = strcspn(got, "\n");
        if (nw != ng || memcmp(want, got, nw)) {
            fprintf(stderr, "  line %2d expected: %.*s\n  line %2d actual:   %.*s\n", line, (int)nw,
                    want, line, (int)ng, got);
            shown++;
        }
        want += nw + (want[nw] == '\n');
        got += ng + (got[ng] == '\n');
        line++;
    }
}

static char actual_dir[1024] = ".";

void screen_set_actual_dir(const char *dir)
{
    snprintf(actual_dir, sizeof(actual_dir), "%s", dir);
}

bool screen_matches(struct screen *s, const char *name)
{
    char *got = screen_dump(s);
    /* The test's own directory (a path made with mkdtemp) as $TMP, as the screens of a
     * run in a fresh directory show it. */
    struct strbuf sb;
    strbuf_init(&sb);
    size_t nd = strlen(actual_dir);
    for (const char *p = got; *p;) {
        const char *hit = nd > 1 ? strstr(p, actual_dir) : NULL;
        if (!hit) {
            strbuf_addn(&sb, p, strlen(p));
            break;
        }
        strbuf_addn(&sb, p, (size_t)(hit - p));
        strbuf_addn(&sb, "$TMP", 4);
        p = hit + nd;
    }
    free(got);
    bool same = screen_text_matches(sb.s ? sb.s : "", name);
    strbuf_free(&sb);
    return same;
}

bool screen_text_matches(const char *got, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s.txt", TUI_EXPECTED_DIR, name);
    const char *upd = getenv("UPDATE_EXPECTED");
    if (upd && !strcmp(upd, "1")) {
        bool ok = write_file(path, got);
        if (!ok)
            failf("cannot write %s", path);
        else
            fprintf(stderr, "wrote %s: review it before committing\n", path);
        return ok;
    }
    char *want = read_file(path);
    bool same = want && !strcmp(want, got);
    if (!same) {
        char actual[1200];
        snprintf(actual, sizeof(actual), "%s/%s.actual.txt", actual_dir, name);
        write_file(actual, got);
        if (!want)
            failf("%s: missing (UPDATE_EXPECTED=1 writes it; the screen is in %s)", path, actual);
        else {
            failf("%s: the screen differs (whole screen in %s):", path, actual);
            print_diff(want, got);
        }
    }
    free(want);
    return same;
}
