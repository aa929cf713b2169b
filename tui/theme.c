/* theme: the compiled-in default, theme files (JSON), colour parsing and down-sampling. */
#include "tui/theme.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"

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
    if (c < 0 || ncolors >= 256 || c < ncolors)
        return c;
    int r, g, b;
    rgb_of(c, &r, &g, &b);
    int best = 0, bestd = 1 << 30;
    for (int i = 0; i < ncolors && i < 16; i++) {
        int dr = r - ansi_rgb[i][0], dg = g - ansi_rgb[i][1], db = b - ansi_rgb[i][2];
        int d = dr * dr + dg * dg + db * db;
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    return (short)best;
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
    if (s[0] == '#' && strlen(s) == 7) {
        char *end;
        long v = strtol(s + 1, &end, 16);
        if (*end)
            return -EINVAL;
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
    char *end;
    long v = strtol(s, &end, 10);
    if (*s && !*end && v >= 0 && v <= 255) {
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
    set(t, ROLE_P50, 2, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_P99, 3, -1, THEME_A_BOLD, THEME_A_BOLD);
    set(t, ROLE_P999, 1, -1, THEME_A_BOLD, THEME_A_UNDERLINE);
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
        struct theme_style *st = &t->role[idx];
        const char *fg = jsonutil_str(r, "fg"), *bg = jsonutil_str(r, "bg");
        if ((fg && theme_parse_color(fg, &st->fg) < 0) ||
            (bg && theme_parse_color(bg, &st->bg) < 0))
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
            return ft_err_set(err, -EINVAL, "%s: role \"%s\": mono must be a list of attributes",
                              what, r->string);
    }
    jsonutil_strcpy(doc, "name", t->name, sizeof(t->name));
    return 0;
}

static int theme_dirs(char dirs[3][512])
{
    int n = 0;
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(dirs[n++], 512, "%s/fabtop/themes", xdg);
    else if (home && *home)
        snprintf(dirs[n++], 512, "%s/.config/fabtop/themes", home);
    snprintf(dirs[n++], 512, "%s", FABTOP_THEME_INSTALL_DIR);
    snprintf(dirs[n++], 512, "%s", FABTOP_THEME_SOURCE_DIR);
    return n;
}

int theme_load(const char *name_or_path, struct theme *t, struct ft_err *err)
{
    theme_default(t);
    char path[700] = "";
    if (strchr(name_or_path, '/') || strstr(name_or_path, ".json")) {
        snprintf(path, sizeof(path), "%s", name_or_path);
    } else {
        char dirs[3][512];
        int n = theme_dirs(dirs);
        for (int i = 0; i < n && !path[0]; i++) {
            char p[700];
            snprintf(p, sizeof(p), "%s/%s.json", dirs[i], name_or_path);
            if (fsu_exists("/", p))
                snprintf(path, sizeof(path), "%s", p);
        }
        if (!path[0])
            return ft_err_set(err, -ENOENT, "theme '%s' not found", name_or_path);
    }
    cJSON *doc;
    int rc = jsonutil_load(path, &doc, err);
    if (rc < 0)
        return rc;
    struct theme tmp;
    theme_default(&tmp);
    rc = theme_from_json(doc, path, &tmp, err);
    cJSON_Delete(doc);
    if (rc == 0)
        *t = tmp;
    return rc;
}

char **theme_list(void)
{
    char dirs[3][512];
    int n = theme_dirs(dirs), count = 0;
    char **out = xcalloc(1, sizeof(char *));
    for (int i = 0; i < n; i++) {
        char **names;
        int k = fsu_list("/", dirs[i], &names);
        for (int j = 0; j < k; j++) {
            size_t len = strlen(names[j]);
            if (len < 6 || strcmp(names[j] + len - 5, ".json"))
                continue;
            names[j][len - 5] = '\0';
            bool dup = false;
            for (int d = 0; d < count; d++)
                dup |= !strcmp(out[d], names[j]);
            if (dup)
                continue;
            out = xrealloc(out, (size_t)(count + 2) * sizeof(char *));
            out[count++] = xstrdup(names[j]);
            out[count] = NULL;
        }
        if (k >= 0)
            fsu_free_list(names);
    }
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
