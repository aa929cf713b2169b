/* jsonutil: cJSON file loading with located errors, getters and atomic save. */
#include "common/jsonutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomicfile.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "common/suggest.h"

int jsonutil_slurp(const char *path, char **out, size_t *len, size_t max, struct ft_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = -errno;
        return ft_err_set(err, e, "%s: cannot open: %s", path, strerror(-e));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ft_err_set(err, -EINVAL, "%s: not a regular file", path);
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        return ft_err_set(err, -E2BIG, "%s: too large (%lld bytes, limit %zu)", path,
                          (long long)st.st_size, max);
    }
    size_t cap = (size_t)st.st_size + 1, got = 0;
    char *buf = xalloc(cap);
    for (;;) {
        if (got + 1 >= cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                return ft_err_set(err, -E2BIG, "%s: too large (limit %zu bytes)", path, max);
            }
            cap *= 2;
            buf = xalloc_resize(buf, cap);
        }
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            free(buf);
            close(fd);
            return ft_err_set(err, e, "%s: read failed: %s", path, strerror(-e));
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = got;
    return 0;
}

int jsonutil_parse(const char *text, size_t len, const char *what, cJSON **out, struct ft_err *err)
{
    const char *end = NULL;
    /* text[len] is the NUL: cJSON only accepts "nothing after the document" when the
     * terminator lies inside the length it is given. */
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!doc) {
        const char *at = end ? end : cJSON_GetErrorPtr();
        int line = 1, col = 1;
        if (at && at >= text && at <= text + len) {
            for (const char *p = text; p < at; p++) {
                if (*p == '\n') {
                    line++;
                    col = 1;
                } else {
                    col++;
                }
            }
        }
        if (len == 0)
            return ft_err_set(err, -EBADMSG, "%s: empty file, expected a JSON document", what);
        return ft_err_set(err, -EBADMSG,
                          "%s:%d:%d: malformed JSON (check for a missing comma, "
                          "quote or bracket near here)",
                          what, line, col);
    }
    *out = doc;
    return 0;
}

int jsonutil_load(const char *path, cJSON **out, struct ft_err *err)
{
    char *text;
    size_t len;
    int rc = jsonutil_slurp(path, &text, &len, JSONUTIL_MAX_BYTES, err);
    if (rc < 0)
        return rc;
    rc = jsonutil_parse(text, len, path, out, err);
    free(text);
    return rc;
}

int jsonutil_save(const char *path, const cJSON *doc, bool pretty, struct ft_err *err)
{
    char *text = pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc);
    if (!text)
        return ft_err_set(err, -ENOMEM, "%s: out of memory while printing JSON", path);
    size_t n = strlen(text);
    char *withnl = xalloc(n + 2);
    memcpy(withnl, text, n);
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    cJSON_free(text);
    int rc = atomicfile_write(path, withnl, n + 1, err);
    free(withnl);
    return rc;
}

int jsonutil_check_keys(const cJSON *obj, const char *const *known, const char *where,
                        struct ft_err *err)
{
    if (!cJSON_IsObject(obj))
        return 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(*k, it->string);
        if (ok)
            continue;
        const char *near = suggest_nearest(it->string, known);
        if (near)
            return ft_err_set(err, -EINVAL, "%s: unknown key '%s' (did you mean '%s'?)", where,
                              it->string, near);
        struct strbuf sb;
        strbuf_init(&sb);
        for (const char *const *k = known; *k; k++)
            strbuf_printf(&sb, "%s%s", k == known ? "" : ", ", *k);
        int rc =
            ft_err_set(err, -EINVAL, "%s: unknown key '%s' (known: %s)", where, it->string, sb.s);
        strbuf_free(&sb);
        return rc;
    }
    return 0;
}

bool jsonutil_num(const cJSON *obj, const char *key, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(it))
        return false;
    *out = it->valuedouble;
    return true;
}

bool jsonutil_whole(double v, int64_t lo, int64_t hi, int64_t *out)
{
    /* [-2^63, 2^63) holds every double that converts to int64_t; NaN fails the test. */
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) || v != floor(v))
        return false;
    int64_t i = (int64_t)v;
    if (i < lo || i > hi)
        return false;
    *out = i;
    return true;
}

bool jsonutil_whole_u64(double v, uint64_t *out)
{
    if (!(v >= 0 && v < 18446744073709551616.0) || v != floor(v))
        return false;
    *out = (uint64_t)v;
    return true;
}

bool jsonutil_int_in(const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    double d;
    return jsonutil_num(obj, key, &d) && jsonutil_whole(d, lo, hi, out);
}

bool jsonutil_int(const cJSON *obj, const char *key, int64_t *out)
{
    double d;
    /* 2^53: beyond it a double no longer holds every integer. */
    return jsonutil_num(obj, key, &d) &&
           jsonutil_whole(d, -9007199254740992LL, 9007199254740992LL, out);
}

bool jsonutil_bool(const cJSON *obj, const char *key, bool *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsBool(it))
        return false;
    *out = cJSON_IsTrue(it);
    return true;
}

const char *jsonutil_str(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

const char *jsonutil_str_or(const cJSON *obj, const char *key, const char *dflt)
{
    const char *s = jsonutil_str(obj, key);
    return s ? s : dflt;
}

bool jsonutil_strcpy(const cJSON *obj, const char *key, char *buf, size_t len)
{
    const char *s = jsonutil_str(obj, key);
    if (!s)
        return false;
    snprintf(buf, len, "%s", s);
    return true;
}

void jsonutil_add_num_or_null(cJSON *obj, const char *key, bool valid, double v)
{
    if (valid && isfinite(v))
        cJSON_AddNumberToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

void jsonutil_add_str_or_null(cJSON *obj, const char *key, const char *s)
{
    if (s && *s)
        cJSON_AddStringToObject(obj, key, s);
    else
        cJSON_AddNullToObject(obj, key);
}

/* Save doc to a new file named after kind and the time in dir; its path in out. */
static int save_fallback_in(const cJSON *doc, const char *dir, const char *kind, char *out,
                            size_t len)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(out, len, "%s/fabtop-%s-%s-%ld.json", dir, kind, stamp, (long)getpid());
    struct stat st;
    if (lstat(out, &st) == 0)
        return -EEXIST; /* never replace anything */
    struct ft_err err = {0};
    return jsonutil_save(out, doc, true, &err);
}

int jsonutil_save_fallback(const cJSON *doc, const char *kind, char *out, size_t len)
{
    char cwd[1024];
    const char *tmpdir = getenv("TMPDIR");
    const char *dirs[] = {getcwd(cwd, sizeof(cwd)), tmpdir && *tmpdir ? tmpdir : "/tmp"};
    int rc = -ENOENT;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (dirs[i] && (rc = save_fallback_in(doc, dirs[i], kind, out, len)) == 0)
            return 0;
    return rc;
}
