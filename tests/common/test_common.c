/* test_common: fsutil readers (numbers, N/A files, natural order), JSON loading with
 * located errors, atomic writes (only regular files, through symlinks, modes kept, the
 * check before a run that leaves nothing behind), unknown keys with the nearest known one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/atomicfile.h"
#include "common/datadir.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/suggest.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/fabtop-common-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd);
}

static void put(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_read_numbers(void **state)
{
    (void)state;
    uint64_t v = 0;
    put("dec", "4294967295\n");
    put("hex", "0x3a4\n");
    put("na", "N/A (no PMA)\n");
    put("neg", "-1\n");
    assert_int_equal(fsutil_read_u64(dir, "dec", &v), 0);
    assert_int_equal(v, 4294967295ull);
    assert_int_equal(fsutil_read_u64(dir, "/hex", &v), 0);
    assert_int_equal(v, 0x3a4);
    assert_int_equal(fsutil_read_u64(dir, "na", &v), -EINVAL);
    assert_int_equal(fsutil_read_u64(dir, "neg", &v), -EINVAL);
    assert_int_equal(fsutil_read_u64(dir, "missing", &v), -ENOENT);
    char buf[8];
    put("long", "abcdefghijkl");
    assert_int_equal(fsutil_read(dir, "long", buf, sizeof(buf)), 7); /* cut, NUL-terminated */
    assert_string_equal(buf, "abcdefg");
}

static void test_natural_order(void **state)
{
    (void)state;
    char sub[128];
    snprintf(sub, sizeof(sub), "%s/ports", dir);
    mkdir(sub, 0755);
    put("ports/10", "");
    put("ports/2", "");
    put("ports/1", "");
    char **names;
    assert_int_equal(fsutil_list(dir, "ports", &names), 3);
    assert_string_equal(names[0], "1");
    assert_string_equal(names[1], "2");
    assert_string_equal(names[2], "10");
    assert_null(names[3]);
    fsutil_free_list(names);
}

static void test_json_errors(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof(path), "%s/bad.json", dir);
    put("bad.json", "{\n  \"a\": 1,\n  \"b\": [1, 2\n}\n");
    cJSON *doc = NULL;
    struct ft_err err = {0};
    assert_int_equal(jsonutil_load(path, &doc, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "bad.json:4:"));
    put("trailing.json", "{} x");
    snprintf(path, sizeof(path), "%s/trailing.json", dir);
    ft_err_clear(&err);
    assert_int_equal(jsonutil_load(path, &doc, &err), -EBADMSG);
    put("ok.json", "{\"n\": 3, \"s\": \"x\", \"t\": true}\n");
    snprintf(path, sizeof(path), "%s/ok.json", dir);
    assert_int_equal(jsonutil_load(path, &doc, &err), 0);
    int64_t n;
    bool t;
    assert_true(jsonutil_int(doc, "n", &n));
    assert_int_equal(n, 3);
    assert_false(jsonutil_int(doc, "s", &n));
    assert_true(jsonutil_bool(doc, "t", &t) && t);
    cJSON_Delete(doc);
}

/* Numbers from files become integers only through these: whole numbers in range, nothing
 * that converting would make undefined (beyond the type, NaN, infinities, fractions). */
static void test_whole_numbers(void **state)
{
    (void)state;
    int64_t i = 7;
    assert_true(jsonutil_whole(255, 0, 255, &i) && i == 255);
    assert_true(jsonutil_whole(-1, -1, 3, &i) && i == -1);
    assert_false(jsonutil_whole(256, 0, 255, &i));
    assert_false(jsonutil_whole(870, 0, 255, &i));
    assert_false(jsonutil_whole(2.5, 0, 255, &i));
    assert_false(jsonutil_whole(9223372036854775808.0, INT64_MIN, INT64_MAX, &i)); /* 2^63 */
    assert_true(jsonutil_whole(-9223372036854775808.0, INT64_MIN, INT64_MAX, &i) && i == INT64_MIN);
    assert_false(jsonutil_whole(1e300, INT64_MIN, INT64_MAX, &i));
    assert_false(jsonutil_whole(-INFINITY, INT64_MIN, INT64_MAX, &i));
    assert_false(jsonutil_whole(NAN, INT64_MIN, INT64_MAX, &i));
    assert_true(i == INT64_MIN); /* untouched by a refusal */
    uint64_t u = 0;
    assert_true(jsonutil_whole_u64(18446744073709549568.0, &u) && u == 18446744073709549568ull);
    assert_false(jsonutil_whole_u64(18446744073709551616.0, &u)); /* 2^64 */
    assert_false(jsonutil_whole_u64(-1, &u));
    assert_false(jsonutil_whole_u64(0.5, &u));
    cJSON *o = cJSON_Parse("{\"port\": 1e300, \"mtu\": 4096, \"s\": \"x\"}");
    assert_false(jsonutil_int_in(o, "port", 0, 255, &i));
    assert_true(jsonutil_int_in(o, "mtu", 0, 65536, &i) && i == 4096);
    assert_false(jsonutil_int_in(o, "s", 0, 1, &i));
    assert_string_equal(jsonutil_str_or(o, "s", "n/a"), "x");
    assert_string_equal(jsonutil_str_or(o, "mtu", "n/a"), "n/a");
    cJSON_Delete(o);
}

static void test_atomic_write(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof(path), "%s/out.json", dir);
    put("out.json", "old");
    struct ft_err err = {0};
    assert_int_equal(atomicfile_write(path, "new content", 11, &err), 0);
    char buf[32];
    assert_int_equal(fsutil_read(dir, "out.json", buf, sizeof(buf)), 11);
    assert_string_equal(buf, "new content");
    /* No temporary file is left behind. */
    char **names;
    int n = fsutil_list(dir, "", &names);
    for (int i = 0; i < n; i++)
        assert_null(strstr(names[i], ".tmp."));
    fsutil_free_list(names);
    snprintf(path, sizeof(path), "%s/no/such/dir/out.json", dir);
    assert_true(atomicfile_write(path, "x", 1, &err) < 0);
    assert_non_null(strstr(err.msg, "no/such/dir/out.json"));
}

static void dpath(char *out, size_t len, const char *rel)
{
    snprintf(out, len, "%s/%s", dir, rel);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode;
}

/* No ".tmp" file of the atomic writer is left in dir. */
static void no_temporaries(void)
{
    char **names;
    int n = fsutil_list(dir, "", &names);
    for (int i = 0; i < n; i++)
        if (strstr(names[i], ".tmp"))
            fail_msg("a temporary file is left behind: %s", names[i]);
    fsutil_free_list(names);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "blocked on a FIFO\n";
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* exiting anyway */
    }
    _exit(1);
}

/* Devices, FIFOs, sockets and directories are refused with one line, without opening them
 * (a FIFO would block) and without replacing them. */
static void test_atomic_refuses(void **state)
{
    (void)state;
    char path[256];
    struct ft_err err = {0};
    signal(SIGALRM, on_alarm);
    alarm(10);
    dpath(path, sizeof(path), "fifo");
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(atomicfile_check(path, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "is a FIFO"));
    ft_err_clear(&err);
    assert_int_equal(atomicfile_write(path, "x", 1, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "fifo: is a FIFO, not a regular file"));
    assert_true(S_ISFIFO(mode_of(path)));
    ft_err_clear(&err);
    dpath(path, sizeof(path), "adir");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(atomicfile_write(path, "x", 1, &err), -EISDIR);
    assert_non_null(strstr(err.msg, "adir: is a directory"));
    assert_true(S_ISDIR(mode_of(path)));
    ft_err_clear(&err);
    /* A character device like /dev/null (1,3), made here; only root may make one. */
    dpath(path, sizeof(path), "null");
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        assert_int_equal(atomicfile_check(path, &err), -EINVAL);
        ft_err_clear(&err);
        assert_int_equal(atomicfile_write(path, "x", 1, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "null: is a character device, not a regular file"));
        assert_true(S_ISCHR(mode_of(path)));
        ft_err_clear(&err);
        /* A symlink to it is refused too: the target decides. */
        char link[256];
        dpath(link, sizeof(link), "to-null");
        assert_int_equal(symlink(path, link), 0);
        assert_int_equal(atomicfile_write(link, "x", 1, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "is a character device"));
        assert_true(S_ISLNK(mode_of(link)));
        ft_err_clear(&err);
    } else {
        print_message("not root: the device node check is skipped (%s)\n", strerror(errno));
    }
    /* A missing directory, and a file where a directory should be. */
    dpath(path, sizeof(path), "no/such/dir/out.json");
    assert_int_equal(atomicfile_check(path, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no/such/dir: no such directory"));
    ft_err_clear(&err);
    put("plain", "x");
    dpath(path, sizeof(path), "plain/out.json");
    assert_int_equal(atomicfile_write(path, "x", 1, &err), -ENOTDIR);
    ft_err_clear(&err);
    /* A symlink loop. */
    char a[256], b[256];
    dpath(a, sizeof(a), "loop-a");
    dpath(b, sizeof(b), "loop-b");
    assert_int_equal(symlink(b, a), 0);
    assert_int_equal(symlink(a, b), 0);
    assert_int_equal(atomicfile_write(a, "x", 1, &err), -ELOOP);
    ft_err_clear(&err);
    alarm(0);
    no_temporaries();
}

/* A symlink is written through: the link stays, its target gets the content (also a target
 * that does not exist yet, through a relative link into another directory). */
static void test_atomic_symlink(void **state)
{
    (void)state;
    char target[256], link[256], sub[256];
    struct ft_err err = {0};
    dpath(sub, sizeof(sub), "real");
    assert_int_equal(mkdir(sub, 0755), 0);
    put("real/target.json", "old");
    dpath(target, sizeof(target), "real/target.json");
    dpath(link, sizeof(link), "link.json");
    assert_int_equal(symlink("real/target.json", link), 0);
    assert_int_equal(atomicfile_write(link, "through", 7, &err), 0);
    assert_true(S_ISLNK(mode_of(link)));
    char buf[32];
    assert_int_equal(fsutil_read(dir, "real/target.json", buf, sizeof(buf)), 7);
    assert_string_equal(buf, "through");
    /* A dangling link: its target is created. */
    dpath(link, sizeof(link), "dangling.json");
    assert_int_equal(symlink("real/new.json", link), 0);
    assert_int_equal(atomicfile_check(link, &err), 0);
    assert_int_equal(access(target, F_OK), 0);
    dpath(target, sizeof(target), "real/new.json");
    assert_int_equal(access(target, F_OK), -1); /* the check created nothing */
    assert_int_equal(atomicfile_write(link, "new", 3, &err), 0);
    assert_true(S_ISLNK(mode_of(link)));
    assert_int_equal(fsutil_read(dir, "real/new.json", buf, sizeof(buf)), 3);
    no_temporaries();
    char **names;
    int n = fsutil_list(dir, "real", &names);
    assert_int_equal(n, 2);
    fsutil_free_list(names);
}

/* An existing file keeps its mode; a new one gets 0666 less the umask. */
static void test_atomic_modes(void **state)
{
    (void)state;
    char path[256];
    struct ft_err err = {0};
    put("secret.json", "old");
    dpath(path, sizeof(path), "secret.json");
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(atomicfile_write(path, "new", 3, &err), 0);
    assert_int_equal(mode_of(path) & 07777, 0600);
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(atomicfile_write(path, "newer", 5, &err), 0);
    assert_int_equal(mode_of(path) & 07777, 0640);
    mode_t old = umask(027);
    dpath(path, sizeof(path), "fresh.json");
    assert_int_equal(atomicfile_write(path, "x", 1, &err), 0);
    assert_int_equal(mode_of(path) & 07777, 0640);
    umask(022);
    dpath(path, sizeof(path), "fresh2.json");
    assert_int_equal(atomicfile_write(path, "x", 1, &err), 0);
    assert_int_equal(mode_of(path) & 07777, 0644);
    umask(old);
    no_temporaries();
}

/* The check before a run: it neither creates nor truncates anything. */
static void test_atomic_check(void **state)
{
    (void)state;
    char path[256];
    struct ft_err err = {0};
    dpath(path, sizeof(path), "later.json");
    assert_int_equal(atomicfile_check(path, &err), 0);
    assert_int_equal(access(path, F_OK), -1);
    put("kept.json", "measured");
    dpath(path, sizeof(path), "kept.json");
    assert_int_equal(atomicfile_check(path, &err), 0);
    char buf[32];
    assert_int_equal(fsutil_read(dir, "kept.json", buf, sizeof(buf)), 8);
    no_temporaries();
    /* A directory nobody may write (root may: then the check passes). */
    char ro[256];
    dpath(ro, sizeof(ro), "ro");
    assert_int_equal(mkdir(ro, 0555), 0);
    dpath(path, sizeof(path), "ro/out.json");
    int rc = atomicfile_check(path, &err);
    if (geteuid() != 0) {
        assert_int_equal(rc, -EACCES);
        assert_non_null(strstr(err.msg, "ro: cannot create a file in this directory"));
    } else {
        assert_int_equal(rc, 0);
    }
    assert_int_equal(access(path, F_OK), -1);
}

static void test_suggest(void **state)
{
    (void)state;
    static const char *const keys[] = {"duration_s", "size", "seed", "start_s", "warmup_s", NULL};
    assert_int_equal(suggest_distance("duraton_s", "duration_s"), 1);
    assert_int_equal(suggest_distance("sise", "size"), 1);
    assert_int_equal(suggest_distance("szie", "size"), 1); /* a transposition is one edit */
    assert_int_equal(suggest_distance("", "abc"), 3);
    assert_int_equal(suggest_distance("kitten", "sitting"), 3);
    assert_string_equal(suggest_nearest("duraton_s", keys), "duration_s");
    assert_string_equal(suggest_nearest("sise", keys), "size");
    assert_string_equal(suggest_nearest("Warmup_S", keys), "warmup_s");
    assert_null(suggest_nearest("colour", keys));
    assert_null(suggest_nearest("x", keys));

    cJSON *o = cJSON_Parse("{\"size\": 1, \"duraton_s\": 2}");
    struct ft_err err = {0};
    assert_int_equal(jsonutil_check_keys(o, keys, "m.json: flows[1]", &err), -EINVAL);
    assert_string_equal(err.msg,
                        "m.json: flows[1]: unknown key 'duraton_s' (did you mean 'duration_s'?)");
    cJSON_Delete(o);
    o = cJSON_Parse("{\"colour\": 1}");
    ft_err_clear(&err);
    assert_int_equal(jsonutil_check_keys(o, keys, "t", &err), -EINVAL);
    assert_string_equal(err.msg, "t: unknown key 'colour' (known: duration_s, size, seed, "
                                 "start_s, warmup_s)");
    cJSON_Delete(o);
    o = cJSON_Parse("{\"seed\": 1}");
    assert_int_equal(jsonutil_check_keys(o, keys, "t", NULL), 0);
    cJSON_Delete(o);
}

/* Where shipped files are searched: the user's XDG directories (else under ~), the source
 * tree for a program in the build tree, PREFIX/share for PREFIX/bin, the configured data
 * directory, $XDG_DATA_DIRS (default /usr/local/share:/usr/share), without repeats. */
static void test_search_dirs(void **state)
{
    (void)state;
    char d[DATADIR_MAX][DATADIR_LEN];
    char inst[DATADIR_LEN + 16];
    snprintf(inst, sizeof(inst), "%s/mixes", datadir_installed());
    setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
    setenv("XDG_DATA_HOME", "/x/data", 1);
    setenv("HOME", "/x/home", 1);
    setenv("XDG_DATA_DIRS", "/a/share/:/b:relative::/a/share", 1);
    int n = datadir_search_exe("mixes", "/src", "/opt/ft/bin/fabtop", d);
    assert_int_equal(n, 6);
    assert_string_equal(d[0], "/x/cfg/fabtop/mixes");
    assert_string_equal(d[1], "/x/data/fabtop/mixes");
    assert_string_equal(d[2], "/opt/ft/share/fabtop/mixes");
    assert_string_equal(d[3], inst);
    assert_string_equal(d[4], "/a/share/fabtop/mixes");
    assert_string_equal(d[5], "/b/fabtop/mixes");
    /* In the build tree: the source directory comes before anything installed. */
    char exe[DATADIR_LEN + 16];
    snprintf(exe, sizeof(exe), "%s/bin/fabtop", datadir_build_dir());
    setenv("XDG_CONFIG_HOME", "", 1);
    unsetenv("XDG_DATA_HOME");
    unsetenv("XDG_DATA_DIRS");
    n = datadir_search_exe("mixes", "/src", exe, d);
    assert_string_equal(d[0], "/x/home/.config/fabtop/mixes");
    assert_string_equal(d[1], "/x/home/.local/share/fabtop/mixes");
    if (datadir_build_dir()[0])
        assert_string_equal(d[2], "/src");
    assert_string_equal(d[n - 2], "/usr/local/share/fabtop/mixes");
    assert_string_equal(d[n - 1], "/usr/share/fabtop/mixes");
    /* A program elsewhere never reads the build tree's sources; no HOME, no user dirs. */
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("HOME");
    n = datadir_search_exe("mixes", "/src", "/usr/bin/fabtop", d);
    for (int i = 0; i < n; i++) {
        assert_string_not_equal(d[i], "/src");
        assert_null(strstr(d[i], "/x/"));
    }
    assert_string_equal(d[0], "/usr/share/fabtop/mixes");
}

/* A shell word: as it is when safe, else single-quoted with a ' inside escaped; a leading
 * "~/" outside the quotes. What `sh -c 'printf %s WORD'` would print back is the word. */
static void test_shell_word(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain-1.0:/x@y", "plain-1.0:/x@y"},
        {"two words", "'two words'"},
        {"it's", "'it'\\''s'"},
        {"", "''"},
        {"~/a b", "~/'a b'"},
        {"~/ok", "~/ok"},
        {"$HOME;rm", "'$HOME;rm'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strbuf sb;
        strbuf_init(&sb);
        strbuf_add_shell_word(&sb, cases[i].in);
        assert_string_equal(sb.s, cases[i].out);
        strbuf_free(&sb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_numbers),   cmocka_unit_test(test_natural_order),
        cmocka_unit_test(test_json_errors),    cmocka_unit_test(test_whole_numbers),
        cmocka_unit_test(test_atomic_write),   cmocka_unit_test(test_atomic_refuses),
        cmocka_unit_test(test_atomic_symlink), cmocka_unit_test(test_atomic_modes),
        cmocka_unit_test(test_atomic_check),   cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_search_dirs),    cmocka_unit_test(test_shell_word),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
