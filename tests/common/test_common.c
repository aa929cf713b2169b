/* test_common: fsutil readers (numbers, N/A files, natural order), JSON loading with
 * located errors, and atomic writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/atomicfile.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"

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
    assert_int_equal(fsu_read_u64(dir, "dec", &v), 0);
    assert_int_equal(v, 4294967295ull);
    assert_int_equal(fsu_read_u64(dir, "/hex", &v), 0);
    assert_int_equal(v, 0x3a4);
    assert_int_equal(fsu_read_u64(dir, "na", &v), -EINVAL);
    assert_int_equal(fsu_read_u64(dir, "neg", &v), -EINVAL);
    assert_int_equal(fsu_read_u64(dir, "missing", &v), -ENOENT);
    char buf[8];
    put("long", "abcdefghijkl");
    assert_int_equal(fsu_read(dir, "long", buf, sizeof(buf)), 7); /* cut, NUL-terminated */
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
    assert_int_equal(fsu_list(dir, "ports", &names), 3);
    assert_string_equal(names[0], "1");
    assert_string_equal(names[1], "2");
    assert_string_equal(names[2], "10");
    assert_null(names[3]);
    fsu_free_list(names);
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
    assert_int_equal(fsu_read(dir, "out.json", buf, sizeof(buf)), 11);
    assert_string_equal(buf, "new content");
    /* No temporary file is left behind. */
    char **names;
    int n = fsu_list(dir, "", &names);
    for (int i = 0; i < n; i++)
        assert_null(strstr(names[i], ".tmp."));
    fsu_free_list(names);
    snprintf(path, sizeof(path), "%s/no/such/dir/out.json", dir);
    assert_true(atomicfile_write(path, "x", 1, &err) < 0);
    assert_non_null(strstr(err.msg, "no/such/dir/out.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_numbers), cmocka_unit_test(test_natural_order),
        cmocka_unit_test(test_json_errors),  cmocka_unit_test(test_whole_numbers),
        cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
