/* test_theme: colour parsing, down-sampling to 16 and 8 colours and the pair fallbacks; the
 * shipped themes (every role mapped with fg, bg, attrs and mono; readable at 256, 16 and 8
 * colours; default.json is the compiled-in default); malformed themes give one message and
 * the default; the list and the order the t key cycles in. No terminal needed. */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "tui/theme.h"

static const char *const shipped[] = {"default", "high-contrast", "light", "monochrome"};
static char tmpdir[256];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_parse_color(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        short want;
    } ok[] = {{"default", -1},     {"none", -1},     {"black", 0},       {"red", 1},
              {"white", 7},        {"gray", 8},      {"grey", 8},        {"brightred", 9},
              {"brightwhite", 15}, {"0", 0},         {"208", 208},       {"255", 255},
              {"#ff8700", 208},    {"#000000", 0},   {"#ffffff", 15},    {"#FF0000", 9},
              {"#5f87af", 67},     {"#080808", 232}, {"brightcyan", 14}, {"007", 7}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        short c = -7;
        if (theme_parse_color(ok[i].s, &c) != 0)
            fail_msg("\"%s\" refused", ok[i].s);
        if (c != ok[i].want)
            fail_msg("\"%s\" is %d, want %d", ok[i].s, c, ok[i].want);
    }
    static const char *const bad[] = {"",        "256",  "-1",  "+5",    " 5",       "5 ",
                                      "12a",     "redd", "Red", "#ff",   "#ff87001", "#gg0000",
                                      "#-12345", "0x10", "1e2", "bright"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        short c = -7;
        if (theme_parse_color(bad[i], &c) != -EINVAL)
            fail_msg("\"%s\" accepted as %d", bad[i], c);
    }
}

static void test_downsample(void **state)
{
    (void)state;
    /* Kept where the terminal has them. */
    assert_int_equal(theme_downsample(-1, 8), -1);
    assert_int_equal(theme_downsample(208, 256), 208);
    assert_int_equal(theme_downsample(9, 16), 9);
    assert_int_equal(theme_downsample(3, 8), 3);
    /* Outside the palette: no colour. */
    assert_int_equal(theme_downsample(256, 256), -1);
    /* Cube and grey ramp to the nearest of 16 and of 8. */
    assert_int_equal(theme_downsample(196, 16), 9); /* #ff0000 */
    assert_int_equal(theme_downsample(196, 8), 1);
    assert_int_equal(theme_downsample(21, 8), 4);    /* #0000ff */
    assert_int_equal(theme_downsample(46, 16), 10);  /* #00ff00 */
    assert_int_equal(theme_downsample(232, 16), 0);  /* near black */
    assert_int_equal(theme_downsample(231, 16), 15); /* #ffffff */
    assert_int_equal(theme_downsample(231, 8), 7);
    /* Greys stay grey: black, grey, white or bright white; with 8, black or white. */
    assert_int_equal(theme_downsample(255, 16), 7); /* #eeeeee */
    assert_int_equal(theme_downsample(240, 16), 8); /* #585858 */
    assert_int_equal(theme_downsample(244, 16), 8); /* #808080 */
    assert_int_equal(theme_downsample(102, 16), 8); /* #878787, in the cube */
    assert_int_equal(theme_downsample(240, 8), 0);
    assert_int_equal(theme_downsample(244, 8), 7);
    assert_int_equal(theme_downsample(252, 8), 7);
    /* Bright colours onto their normal ones with 8; grey onto white. */
    for (short c = 9; c < 16; c++)
        assert_int_equal(theme_downsample(c, 8), c - 8);
    assert_int_equal(theme_downsample(8, 8), 7);
    /* Colours stay colours. */
    assert_int_equal(theme_downsample(130, 8), 1);  /* #af5f00 */
    assert_int_equal(theme_downsample(136, 16), 3); /* #af8700 */
    assert_int_equal(theme_downsample(25, 8), 4);   /* #005faf */
    assert_int_equal(theme_downsample(80, 8), 6);   /* #5fd7d7 */
    /* Every index lands inside the palette asked for. */
    for (short c = 0; c < 256; c++) {
        assert_true(theme_downsample(c, 8) >= 0 && theme_downsample(c, 8) < 8);
        assert_true(theme_downsample(c, 16) >= 0 && theme_downsample(c, 16) < 16);
    }
}

static void test_resolve(void **state)
{
    (void)state;
    struct theme_style s = {15, 8, 0, 0}; /* bright white on grey: white on white with 8 */
    short fg, bg;
    theme_resolve(&s, 256, true, &fg, &bg);
    assert_int_equal(fg, 15);
    assert_int_equal(bg, 8);
    theme_resolve(&s, 16, true, &fg, &bg);
    assert_int_equal(fg, 15);
    assert_int_equal(bg, 8);
    theme_resolve(&s, 8, true, &fg, &bg);
    assert_int_equal(bg, 7);
    assert_int_equal(fg, 0);
    /* Dark on dark becomes white. */
    struct theme_style d = {232, 0, 0, 0};
    theme_resolve(&d, 16, true, &fg, &bg);
    assert_int_equal(bg, 0);
    assert_int_equal(fg, 15);
    theme_resolve(&d, 8, true, &fg, &bg);
    assert_int_equal(fg, 7);
    /* The same colour on purpose stays (a solid block). */
    struct theme_style same = {4, 4, 0, 0};
    theme_resolve(&same, 8, true, &fg, &bg);
    assert_int_equal(fg, 4);
    assert_int_equal(bg, 4);
    /* Without default colours, -1 is white on black. */
    struct theme_style def = {-1, -1, 0, 0};
    theme_resolve(&def, 8, false, &fg, &bg);
    assert_int_equal(fg, 7);
    assert_int_equal(bg, 0);
    theme_resolve(&def, 8, true, &fg, &bg);
    assert_int_equal(fg, -1);
    assert_int_equal(bg, -1);
    struct theme_style black_bg = {-1, 0, 0, 0};
    theme_resolve(&black_bg, 8, false, &fg, &bg);
    assert_int_equal(fg, 7);
    assert_int_equal(bg, 0);
}

/* Every shipped file maps every role with all four keys, and nothing else. */
static void test_shipped_complete(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof(shipped) / sizeof(shipped[0]); t++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s.json", THEME_SOURCE_DIR, shipped[t]);
        cJSON *doc;
        struct ft_err err = {0};
        if (jsonutil_load(path, &doc, &err) < 0)
            fail_msg("%s", err.msg);
        const char *name = jsonutil_str(doc, "name");
        assert_non_null(name);
        assert_string_equal(name, shipped[t]);
        assert_non_null(jsonutil_str(doc, "description"));
        const cJSON *roles = cJSON_GetObjectItemCaseSensitive(doc, "roles");
        assert_true(cJSON_IsObject(roles));
        assert_int_equal(cJSON_GetArraySize(roles), ROLE_COUNT);
        for (int r = 0; r < ROLE_COUNT; r++) {
            const char *rn = theme_role_name((enum theme_role)r);
            const cJSON *ro = cJSON_GetObjectItemCaseSensitive(roles, rn);
            if (!cJSON_IsObject(ro))
                fail_msg("%s: role %s missing", path, rn);
            assert_int_equal(cJSON_GetArraySize(ro), 4);
            assert_non_null(jsonutil_str(ro, "fg"));
            assert_non_null(jsonutil_str(ro, "bg"));
            assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(ro, "attrs")));
            assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(ro, "mono")));
        }
        cJSON_Delete(doc);
    }
}

/* Loaded, each role readable at 256, 16 and 8 colours and without colour. */
static void test_shipped_load(void **state)
{
    (void)state;
    static const int ncolors[] = {256, 16, 8};
    for (size_t t = 0; t < sizeof(shipped) / sizeof(shipped[0]); t++) {
        struct theme th;
        struct ft_err err = {0};
        if (theme_load(shipped[t], &th, &err) != 0)
            fail_msg("%s: %s", shipped[t], err.msg);
        assert_string_equal(th.name, shipped[t]);
        for (int r = 0; r < ROLE_COUNT; r++) {
            const struct theme_style *s = &th.role[r];
            for (size_t k = 0; k < 3; k++)
                for (int defaults = 0; defaults < 2; defaults++) {
                    short fg, bg;
                    theme_resolve(s, ncolors[k], defaults, &fg, &bg);
                    if (fg >= 0 && fg == bg)
                        fail_msg("%s: %s is %d on %d at %d colours", shipped[t],
                                 theme_role_name((enum theme_role)r), fg, bg, ncolors[k]);
                }
        }
        /* Without colour, what must stand out still does. */
        assert_true(th.role[ROLE_SELECTED].mono & THEME_A_REVERSE);
        assert_true(th.role[ROLE_HEADER].mono & (THEME_A_REVERSE | THEME_A_BOLD));
        assert_true(th.role[ROLE_STATUS].mono & THEME_A_REVERSE);
        assert_true(th.role[ROLE_ERROR].mono & (THEME_A_BOLD | THEME_A_UNDERLINE));
        assert_true(th.role[ROLE_WARN].mono & (THEME_A_BOLD | THEME_A_UNDERLINE));
        assert_true(th.role[ROLE_BORDER_FOCUS].mono != th.role[ROLE_BORDER].mono);
        /* Colour is judgement (issue 21): the change roles are three looks; worse and much
         * worse differ without colour too; the percentile markers share no colour with
         * the good/bad roles (where the theme has colour at all). */
        assert_true(th.role[ROLE_WORSE].mono != th.role[ROLE_MUCH_WORSE].mono);
        static const enum theme_role marks[] = {ROLE_P50, ROLE_P99, ROLE_P999};
        static const enum theme_role judge[] = {ROLE_OK,     ROLE_WARN,  ROLE_ERROR,
                                                ROLE_BETTER, ROLE_WORSE, ROLE_MUCH_WORSE};
        for (size_t m = 0; m < 3; m++)
            for (size_t j = 0; j < 6; j++) {
                short mf, mb, jf, jb;
                theme_resolve(&th.role[marks[m]], 256, true, &mf, &mb);
                theme_resolve(&th.role[judge[j]], 256, true, &jf, &jb);
                if (mf >= 0 && mf == jf && mb == jb)
                    fail_msg("%s: %s has the colour of %s", shipped[t], theme_role_name(marks[m]),
                             theme_role_name(judge[j]));
            }
    }
}

/* Which role shows which change. */
static void test_change_roles(void **state)
{
    (void)state;
    assert_int_equal(theme_role_of_change(COMPARE_CHANGE_NONE), ROLE_NORMAL);
    assert_int_equal(theme_role_of_change(COMPARE_CHANGE_BETTER), ROLE_BETTER);
    assert_int_equal(theme_role_of_change(COMPARE_CHANGE_WORSE), ROLE_WORSE);
    assert_int_equal(theme_role_of_change(COMPARE_CHANGE_MUCH_WORSE), ROLE_MUCH_WORSE);
    /* 3.86x and 44.55x worse latency look the same (much worse), 1.5x does not. */
    assert_int_equal(theme_role_of_change(compare_change_of(true, 3.86)), ROLE_MUCH_WORSE);
    assert_int_equal(theme_role_of_change(compare_change_of(true, 44.55)), ROLE_MUCH_WORSE);
    assert_int_equal(theme_role_of_change(compare_change_of(true, 1.5)), ROLE_WORSE);
}

static void test_default_file_is_default(void **state)
{
    (void)state;
    struct theme file, built;
    struct ft_err err = {0};
    assert_int_equal(theme_load(THEME_SOURCE_DIR "/default.json", &file, &err), 0);
    theme_default(&built);
    for (int r = 0; r < ROLE_COUNT; r++) {
        const struct theme_style *a = &file.role[r], *b = &built.role[r];
        if (a->fg != b->fg || a->bg != b->bg || a->attrs != b->attrs || a->mono != b->mono)
            fail_msg("default.json differs from theme_default() in %s",
                     theme_role_name((enum theme_role)r));
    }
    assert_string_equal(file.name, "default");
}

static void test_monochrome_has_no_colour(void **state)
{
    (void)state;
    struct theme th;
    assert_int_equal(theme_load("monochrome", &th, NULL), 0);
    for (int r = 0; r < ROLE_COUNT; r++) {
        assert_int_equal(th.role[r].fg, -1);
        assert_int_equal(th.role[r].bg, -1);
        /* The same look with and without a colour terminal. */
        assert_int_equal(th.role[r].attrs, th.role[r].mono);
    }
}

/* A bad file: -errno, one message naming the file and the problem, and the default. */
static void expect_bad(const char *text, int want_rc, const char *want_msg)
{
    write_text("t.json", text);
    struct theme th;
    struct ft_err err = {0};
    int rc = theme_load("./t.json", &th, &err);
    if (rc != want_rc)
        fail_msg("%s: rc %d, want %d (%s)", text, rc, want_rc, err.msg);
    if (strcmp(err.msg, want_msg))
        fail_msg("message \"%s\", want \"%s\"", err.msg, want_msg);
    struct theme d;
    theme_default(&d);
    assert_memory_equal(&th, &d, sizeof(d));
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("{\"roles\": {\"header\": {\"fg\": \"red\" \"bg\": \"blue\"}}}", -EBADMSG,
               "./t.json:1:35: malformed JSON (check for a missing comma, quote or bracket "
               "near here)");
    expect_bad("", -EBADMSG, "./t.json: empty file, expected a JSON document");
    expect_bad("[1, 2]", -EINVAL,
               "./t.json: not a fabtop theme (needs a \"roles\" object mapping role names to "
               "{\"fg\", \"bg\", \"attrs\", \"mono\"})");
    expect_bad("{\"name\": \"x\"}", -EINVAL,
               "./t.json: not a fabtop theme (needs a \"roles\" object mapping role names to "
               "{\"fg\", \"bg\", \"attrs\", \"mono\"})");
    expect_bad("{\"roles\": {\"headr\": {}}}", -EINVAL, "./t.json: unknown role \"headr\"");
    expect_bad("{\"roles\": {\"header\": \"red\"}}", -EINVAL,
               "./t.json: role \"header\" must be an object {\"fg\", \"bg\", \"attrs\", "
               "\"mono\"}");
    expect_bad("{\"roles\": {\"ok\": {\"fg\": \"lime\"}}}", -EINVAL,
               "./t.json: role \"ok\": colours are names (red, brightblue, default), 0-255 or "
               "#rrggbb");
    expect_bad("{\"roles\": {\"ok\": {\"bg\": 300}}}", -EINVAL,
               "./t.json: role \"ok\": colours are names (red, brightblue, default), 0-255 or "
               "#rrggbb");
    expect_bad("{\"roles\": {\"ok\": {\"fg\": true}}}", -EINVAL,
               "./t.json: role \"ok\": colours are names (red, brightblue, default), 0-255 or "
               "#rrggbb");
    expect_bad("{\"roles\": {\"ok\": {\"fg\": \"red\", \"colour\": \"x\"}}}", -EINVAL,
               "./t.json: role \"ok\": unknown key \"colour\" (fg, bg, attrs, mono)");
    expect_bad("{\"roles\": {\"ok\": {\"attrs\": [\"blink\"]}}}", -EINVAL,
               "./t.json: role \"ok\": attrs must be a list of bold, underline, reverse, dim, "
               "standout");
    expect_bad("{\"roles\": {\"ok\": {\"mono\": \"bold\"}}}", -EINVAL,
               "./t.json: role \"ok\": mono must be a list of bold, underline, reverse, dim, "
               "standout");
    /* Missing files. */
    struct theme th;
    struct ft_err err = {0};
    assert_int_equal(theme_load("./nonexistent.json", &th, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "./nonexistent.json"));
    ft_err_clear(&err);
    assert_int_equal(theme_load("solarized", &th, &err), -ENOENT);
    assert_string_equal(err.msg, "theme 'solarized' not found (themes: default, high-contrast, "
                                 "light, monochrome)");
}

static void test_partial_and_numbers(void **state)
{
    (void)state;
    write_text("part.json",
               "{\"roles\": {\"header\": {\"fg\": 208, \"bg\": \"#000087\", \"attrs\": [\"bold\", "
               "\"underline\"]}}}");
    struct theme th, d;
    struct ft_err err = {0};
    assert_int_equal(theme_load("./part.json", &th, &err), 0);
    theme_default(&d);
    assert_string_equal(th.name, "part");
    assert_int_equal(th.role[ROLE_HEADER].fg, 208);
    assert_int_equal(th.role[ROLE_HEADER].bg, 18);
    assert_int_equal(th.role[ROLE_HEADER].attrs, THEME_A_BOLD | THEME_A_UNDERLINE);
    /* What the file leaves out keeps the default. */
    assert_int_equal(th.role[ROLE_HEADER].mono, d.role[ROLE_HEADER].mono);
    for (int r = 0; r < ROLE_COUNT; r++)
        if (r != ROLE_HEADER)
            assert_memory_equal(&th.role[r], &d.role[r], sizeof(d.role[r]));
}

static void test_list_and_next(void **state)
{
    (void)state;
    char **names = theme_list();
    int n = 0;
    for (; names[n]; n++)
        ;
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++)
        assert_string_equal(names[i], shipped[i]);
    theme_free_names(names);

    /* A user theme joins the list in order; a broken one is skipped by the t key. */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/fabtop", tmpdir);
    mkdir(dir, 0755);
    snprintf(dir, sizeof(dir), "%s/fabtop/themes", tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    char path[600];
    snprintf(path, sizeof(path), "%s/dusk.json", dir);
    write_text(path, "{\"roles\": {\"header\": {\"fg\": 223, \"bg\": 60}}}");
    snprintf(path, sizeof(path), "%s/broken.json", dir);
    write_text(path, "{\"roles\": ");
    names = theme_list();
    static const char *const want[] = {"default",       "broken", "dusk",
                                       "high-contrast", "light",  "monochrome"};
    for (n = 0; names[n]; n++)
        assert_string_equal(names[n], want[n]);
    assert_int_equal(n, 6);
    theme_free_names(names);

    struct theme th;
    theme_default(&th);
    struct ft_err err = {0};
    assert_true(theme_next(&th, &err) < 0);
    assert_non_null(strstr(err.msg, "broken.json"));
    assert_string_equal(th.name, "dusk");
    static const char *const cycle[] = {"high-contrast", "light", "monochrome", "default"};
    for (size_t i = 0; i < 4; i++) {
        ft_err_clear(&err);
        assert_int_equal(theme_next(&th, &err), 0);
        assert_string_equal(th.name, cycle[i]);
    }
    /* A theme loaded from a path outside the list goes on with the first. */
    write_text("odd.json", "{\"roles\": {}}");
    assert_int_equal(theme_load("./odd.json", &th, NULL), 0);
    assert_string_equal(th.name, "odd");
    ft_err_clear(&err);
    assert_int_equal(theme_next(&th, &err), 0);
    assert_string_equal(th.name, "default");
    remove(path);
    snprintf(path, sizeof(path), "%s/dusk.json", dir);
    remove(path);
    rmdir(dir);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-theme-XXXXXX");
    if (!mkdtemp(tmpdir) || chdir(tmpdir) < 0)
        return -1;
    /* Only the shipped themes: no user directory of ours. */
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (chdir("/") == 0)
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_color),
        cmocka_unit_test(test_downsample),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_shipped_complete),
        cmocka_unit_test(test_shipped_load),
        cmocka_unit_test(test_default_file_is_default),
        cmocka_unit_test(test_monochrome_has_no_colour),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_partial_and_numbers),
        cmocka_unit_test(test_list_and_next),
        cmocka_unit_test(test_change_roles),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
