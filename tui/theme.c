/* theme: the compiled-in default, theme files (JSON) found by name or path, colour parsing,
 * down-sampling of 256-colour indexes to 16 or 8 colours, and the order the t key cycles in.
 * No curses here: ui.c turns the resolved colours into colour pairs. */
#include "tui/theme.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/datadir.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

static const char *const role_names[] = {
#define THEME_NAME(name, key, what) key,
    THEME_ROLES(THEME_NAME)
#undef THEME_NAME
};

static const char *const role_whats[] = {
#define THEME_WHAT(name, key, what) what,
    THEME_ROLES(THEME_WHAT)
#undef THEME_WHAT
};

const char *theme_role_name(enum theme_role r)
{
    return (unsigned)r < ROLE_COUNT ? role_names[r] : "?";
}

const char *theme_role_what(enum theme_role r)
{
    return (unsigned)r < ROLE_COUNT ? role_whats[r] : "?";
}

/* The 16 ANSI colours as the xterm defaults draw them, for nearest-colour matching. */
static const unsigned char ansi_rgb[16][3] = {
    {0, 0, 0},     {205, 0, 0},     {0, 205, 0},     {205, 205, 0},   {0, 0, 238}, {205, 0, 205},
    {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0},     {0, 255, 0}, {255, 255, 0},
    {92, 92, 255}, {255, 0, 255},   {0, 255, 255},   {255, 255, 255},
};

/* RGB of a 256-colour index (xterm's 6x6x6 cube and grey ramp). */
static void rgb_of(short c, int *r, int *g, int *b)
{
    if (c < 16) {
        *r = ansi_rgb[c][0];
        *g = ansi_rgb[c][1];
        *b = ansi_rgb[c][2];
    } else if (c < 232) {
        static const int lvl[6] = {0, 95, 135, 175, 215, 255};
        int i = c - 16;
        *r = lvl[i / 36];
        *g = lvl[(i / 6) % 6];
        *b = lvl[i % 6];
    } else {
        *r = *g = *b = 8 + 10 * (c - 232);
    }
}

short theme_downsample(short c, int ncolors)
{
    if (c < 0 || c > 255)
        return -1;
    if (ncolors >= 256 || c < ncolors)
        return c;
    int n = ncolors >= 16 ? 16 : 8;
    /* With 8 colours, bright ones become their normal ones; bright black (grey) becomes
     * white rather than black, so grey text stays visible on a dark background. */
    if (n == 8 && c < 16)
        return c == 8 ? 7 : (short)(c - 8);
    int r, g, b;
    rgb_of(c, &r, &g, &b);
    int hi = r > g ? (r > b ? r : b) : (g > b ? g : b);
    int lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
    /* A grey must stay a grey: nearest by distance alone turns mid-grey into yellow. */
    bool grey = hi - lo < 32;
    if (grey && n == 8)
        return (r + g + b) / 3 < 128 ? 0 : 7;
    int best = 0, bestd = 1 << 30;
    for (int i = 0; i < n; i++) {
        bool grey_i = i == 0 || i == 7 || i == 8 || i == 15;
        if (grey && !grey_i)
            continue;
        int dr = r - ansi_rgb[i][0], dg = g - ansi_rgb[i][1], db = b - ansi_rgb[i][2];
        int d = dr * dr + dg * dg + db * db;
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    return (short)best;
}

/* Black or white, whichever stands out more on background colour bg (an index below n). */
static short contrast_with(short bg, int ncolors)
{
    int r, g, b;
    rgb_of(bg, &r, &g, &b);
    bool light = 299 * r + 587 * g + 114 * b > 128 * 1000;
    return light ? 0 : ncolors >= 16 ? 15 : 7;
}

void theme_resolve(const struct theme_style *s, int ncolors, bool default_colors, short *fg,
                   short *bg)
{
    short f = theme_downsample(s->fg, ncolors), b = theme_downsample(s->bg, ncolors);
    if (!default_colors) {
        /* Without use_default_colors() -1 is not a colour: white on black, like a console. */
        if (f < 0)
            f = 7;
        if (b < 0)
            b = 0;
    }
    /* Two different colours that fell onto the same one would hide the text. */
    if (f >= 0 && f == b && s->fg != s->bg)
        f = contrast_with(b, ncolors);
    *fg = f;
    *bg = b;
}

int theme_parse_color(const char *s, short *out)
{
    static const char *const names[] = {"black", "red",     "green", "yellow",
                                        "blue",  "magenta", "cyan",  "white"};
    if (!strcmp(s, "default") || !strcmp(s, "none")) {
        *out = -1;
        return 0;
    }
    for (int i = 0; i < 8; i++) {
        if (!strcmp(s, names[i])) {
            *out = (short)i;
            return 0;
        }
        char b[24];
        snprintf(b, sizeof(b), "bright%s", names[i]);
        if (!strcmp(s, b)) {
            *out = (short)(i + 8);
            return 0;
        }
    }
    if (!strcmp(s, "gray") || !strcmp(s, "grey")) {
        *out = 8;
        return 0;
    }
    if (s[0] == '#') {
        if (strlen(s) != 7 || strspn(s + 1, "0123456789abcdefABCDEF") != 6)
            return -EINVAL;
        long v = strtol(s + 1, NULL, 16);
        int r = (int)(v >> 16) & 255, g = (int)(v >> 8) & 255, b = (int)v & 255;
        /* Nearest in the 256-colour palette. */
        int best = 0, bestd = 1 << 30;
        for (short c = 0; c < 256; c++) {
            int cr, cg, cb;
            rgb_of(c, &cr, &cg, &cb);
            int d = (r - cr) * (r - cr) + (g - cg) * (g - cg) + (b - cb) * (b - cb);
            if (d < bestd) {
                bestd = d;
                best = c;
            }
        }
        *out = (short)best;
        return 0;
    }
    size_t digits = strspn(s, "0123456789");
    long v = digits && digits <= 3 && !s[digits] ? strtol(s, NULL, 10) : -1;
    if (v >= 0 && v <= 255) {
        *out = (short)v;
        return 0;
    }
    return -EINVAL;
}

static void set(struct theme *t, enum theme_role r, short fg, short bg, unsigned attrs,
                unsigned mono)
{
    t->role[r] = (struct theme_style){fg, bg, attrs, mono};
}

void theme_default(struct theme *t)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "default");
    for (int r = 0; r < ROLE_COUNT; r++)
        set(t, (enum theme_role)r, -1, -1, 0, 0);
    set(t, ROLE_DIM, 8, -1, 0, THEME_A_DIM);
    set(t, ROLE_HEADER, 15, 4, THEME_A_BOLD, THEME_A_REVERSE | THEME_A_BOLD);
    set(t, ROLE_TAB, 7, -1, 0, 0);
    set(t, ROLE_TAB_ACTIVE, 0, 6, THEME_A_BOLD, THEME_A_REVERSE);
    set(t, ROLE_STATUS, 0, 7, 0, THEME_A_REVERSE);
    set(t, ROLE_BORDER, 8, -1, 0, 0);
    set(t, ROLE_BORDER_FOCUS, 6, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_SELECTED, 0, 6, 0, THEME_A_REVERSE);
    set(t, ROLE_OK, 2, -1, 0, 0);
    set(t, ROLE_WARN, 3, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_ERROR, 1, -1, THEME_A_BOLD, THEME_A_BOLD | THEME_A_UNDERLINE);
    set(t, ROLE_INFO, 6, -1, 0, 0);
    set(t, ROLE_GPU, 10, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_NIC, 14, -1, 0, 0);
    set(t, ROLE_SWITCH, 13, -1, 0, 0);
    set(t, ROLE_BAR, 6, -1, 0, 0);
    set(t, ROLE_BAR_LOADED, 3, -1, 0, 0);
    /* Markers are told apart by hue, never by the good/bad colours. */
    set(t, ROLE_P50, 14, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_P99, 13, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_P999, 15, -1, THEME_A_BOLD | THEME_A_UNDERLINE, THEME_A_UNDERLINE);
    set(t, ROLE_BETTER, 2, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_WORSE, 3, -1, THEME_A_BOLD, THEME_A_UNDERLINE);
    set(t, ROLE_MUCH_WORSE, 1, -1, THEME_A_BOLD, THEME_A_BOLD | THEME_A_UNDERLINE);
    set(t, ROLE_DIFF, 0, 3, THEME_A_BOLD, THEME_A_REVERSE);
    set(t, ROLE_INPUT, 15, 8, 0, THEME_A_UNDERLINE);
    set(t, ROLE_KEY, 0, 6, THEME_A_BOLD, THEME_A_REVERSE);
}

static const struct {
    const char *name;
    unsigned bit;
} attr_names[] = {{"bold", THEME_A_BOLD},
                  {"underline", THEME_A_UNDERLINE},
                  {"reverse", THEME_A_REVERSE},
                  {"dim", THEME_A_DIM},
                  {"standout", THEME_A_STANDOUT}};

static int parse_attrs(const cJSON *a, unsigned *out)
{
    *out = 0;
    const cJSON *it;
    if (!cJSON_IsArray(a))
        return -EINVAL;
    cJSON_ArrayForEach(it, a)
    {
        bool found = false;
        for (size_t i = 0; cJSON_IsString(it) && i < sizeof(attr_names) / sizeof(*attr_names); i++)
            if (!strcmp(it->valuestring, attr_names[i].name)) {
                *out |= attr_names[i].bit;
                found = true;
            }
        if (!found)
            return -EINVAL;
    }
    return 0;
}

/* A colour member: a string (name, "208", "#ff8700") or a number 0-255; absent keeps *out. */
static int parse_color_member(const cJSON *role, const char *key, short *out)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(role, key);
    if (!c)
        return 0;
    if (cJSON_IsString(c))
        return theme_parse_color(c->valuestring, out);
    if (cJSON_IsNumber(c) && c->valuedouble >= 0 && c->valuedouble <= 255 &&
        c->valuedouble == (double)c->valueint) {
        *out = (short)c->valueint;
        return 0;
    }
    return -EINVAL;
}

static int role_from_json(const cJSON *r, const char *what, struct theme_style *st,
                          struct ft_err *err)
{
    if (!cJSON_IsObject(r))
        return ft_err_set(err, -EINVAL,
                          "%s: role \"%s\" must be an object {\"fg\", \"bg\", \"attrs\", \"mono\"}",
                          what, r->string);
    const cJSON *m;
    cJSON_ArrayForEach(m, r)
    {
        if (strcmp(m->string, "fg") && strcmp(m->string, "bg") && strcmp(m->string, "attrs") &&
            strcmp(m->string, "mono"))
            return ft_err_set(err, -EINVAL,
                              "%s: role \"%s\": unknown key \"%s\" (fg, bg, attrs, mono)", what,
                              r->string, m->string);
    }
    if (parse_color_member(r, "fg", &st->fg) < 0 || parse_color_member(r, "bg", &st->bg) < 0)
        return ft_err_set(err, -EINVAL,
                          "%s: role \"%s\": colours are names (red, brightblue, default), "
                          "0-255 or #rrggbb",
                          what, r->string);
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(r, "attrs");
    if (at && parse_attrs(at, &st->attrs) < 0)
        return ft_err_set(err, -EINVAL,
                          "%s: role \"%s\": attrs must be a list of bold, underline, "
                          "reverse, dim, standout",
                          what, r->string);
    const cJSON *mo = cJSON_GetObjectItemCaseSensitive(r, "mono");
    if (mo && parse_attrs(mo, &st->mono) < 0)
        return ft_err_set(err, -EINVAL,
                          "%s: role \"%s\": mono must be a list of bold, underline, reverse, "
                          "dim, standout",
                          what, r->string);
    return 0;
}

/* Roles the file leaves out keep the compiled-in default's look. */
static int theme_from_json(const cJSON *doc, const char *what, struct theme *t, struct ft_err *err)
{
    const cJSON *roles = cJSON_GetObjectItemCaseSensitive(doc, "roles");
    if (!cJSON_IsObject(doc) || !cJSON_IsObject(roles))
        return ft_err_set(err, -EINVAL,
                          "%s: not a fabtop theme (needs a \"roles\" object mapping role names "
                          "to {\"fg\", \"bg\", \"attrs\", \"mono\"})",
                          what);
    const cJSON *r;
    cJSON_ArrayForEach(r, roles)
    {
        int idx = -1;
        for (int i = 0; i < ROLE_COUNT; i++)
            if (!strcmp(r->string, role_names[i]))
                idx = i;
        if (idx < 0)
            return ft_err_set(err, -EINVAL, "%s: unknown role \"%s\"", what, r->string);
        int rc = role_from_json(r, what, &t->role[idx], err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int theme_dirs(char dirs[DATADIR_MAX][DATADIR_LEN])
{
    return datadir_search("themes", FABTOP_THEME_SOURCE_DIR, dirs);
}

/* The theme's name: the file name without directory and ".json". */
static void name_of_path(const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".json"))
        n -= 5;
    snprintf(buf, len, "%.*s", (int)n, b);
}

int theme_load(const char *name_or_path, struct theme *t, struct ft_err *err)
{
    theme_default(t);
    char path[700] = "";
    if (strchr(name_or_path, '/') || strstr(name_or_path, ".json")) {
        snprintf(path, sizeof(path), "%s", name_or_path);
    } else {
        char dirs[DATADIR_MAX][DATADIR_LEN];
        int n = theme_dirs(dirs);
        for (int i = 0; i < n && !path[0]; i++) {
            char p[700];
            snprintf(p, sizeof(p), "%s/%s.json", dirs[i], name_or_path);
            if (fsutil_exists("/", p))
                snprintf(path, sizeof(path), "%s", p);
        }
        /* The compiled-in default needs no file. */
        if (!path[0] && !strcmp(name_or_path, "default"))
            return 0;
        if (!path[0]) {
            char **names = theme_list();
            struct strbuf sb;
            strbuf_init(&sb);
            for (char **p = names; *p; p++)
                strbuf_printf(&sb, "%s%s", p == names ? "" : ", ", *p);
            int rc =
                ft_err_set(err, -ENOENT, "theme '%s' not found (themes: %s)", name_or_path, sb.s);
            strbuf_free(&sb);
            theme_free_names(names);
            return rc;
        }
    }
    cJSON *doc;
    int rc = jsonutil_load(path, &doc, err);
    if (rc < 0)
        return rc;
    struct theme tmp;
    theme_default(&tmp);
    rc = theme_from_json(doc, path, &tmp, err);
    cJSON_Delete(doc);
    if (rc == 0) {
        name_of_path(path, tmp.name, sizeof(tmp.name));
        *t = tmp;
    }
    return rc;
}

/* "default" first, then by name. */
static int name_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    bool dx = !strcmp(x, "default"), dy = !strcmp(y, "default");
    if (dx != dy)
        return dx ? -1 : 1;
    return strcmp(x, y);
}

char **theme_list(void)
{
    char dirs[DATADIR_MAX][DATADIR_LEN];
    int n = theme_dirs(dirs), count = 1;
    /* The compiled-in default is always there, with or without a file. */
    char **out = xalloc_zero(2, sizeof(char *));
    out[0] = xalloc_strdup("default");
    for (int i = 0; i < n; i++)
        fsutil_add_json_names(dirs[i], "", &out, &count);
    qsort(out, (size_t)count, sizeof(char *), name_cmp);
    return out;
}

void theme_free_names(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}

int theme_next(struct theme *t, struct ft_err *err)
{
    char **names = theme_list();
    int n = 0, cur = -1;
    for (; names[n]; n++)
        if (!strcmp(names[n], t->name))
            cur = n;
    int rc = 0;
    bool loaded = false;
    /* From the one after the current theme round to the current one itself. */
    for (int k = 1; k <= n && !loaded; k++) {
        struct theme tmp;
        struct ft_err e = {0};
        int r = theme_load(names[(cur + k) % n], &tmp, &e);
        if (r == 0) {
            *t = tmp;
            loaded = true;
        } else if (rc == 0) {
            rc = ft_err_set(err, r, "%s", e.msg);
        }
    }
    if (!loaded)
        theme_default(t);
    theme_free_names(names);
    return rc;
}

enum theme_role theme_role_of_change(enum compare_change c)
{
    switch (c) {
    case COMPARE_CHANGE_BETTER:
        return ROLE_BETTER;
    case COMPARE_CHANGE_WORSE:
        return ROLE_WORSE;
    case COMPARE_CHANGE_MUCH_WORSE:
        return ROLE_MUCH_WORSE;
    default:
        return ROLE_NORMAL;
    }
}
