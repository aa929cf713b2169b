/* topo_jsonrd: helpers shared by the topology snapshot's writer and reader. */
#include "topology/topo_jsonrd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"

int topo_name_to_enum(const char *s, const char *const *names, int n)
{
    if (!s)
        return -1;
    for (int i = 0; i < n; i++)
        if (names[i][0] && !strcmp(s, names[i]))
            return i;
    return -1;
}

void topo_json_add_idx(cJSON *o, const char *key, int v)
{
    if (v >= 0)
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

int topo_jrd_bad(struct topo_jrd *c, const char *arr, int i, const char *key, const char *must)
{
    if (c->rc == 0 && i < 0)
        c->rc = ft_err_set(c->err, -EBADMSG, "%s: %s%s.%s %s", c->what, c->scope, arr, key, must);
    else if (c->rc == 0)
        c->rc = ft_err_set(c->err, -EBADMSG, "%s: %s%s[%d].%s %s", c->what, c->scope, arr, i, key,
                           must);
    return c->rc;
}

bool topo_jrd_num(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it || cJSON_IsNull(it))
        return false;
    if (!cJSON_IsNumber(it)) {
        topo_jrd_bad(c, arr, i, key, "must be a number or null");
        return false;
    }
    *out = it->valuedouble;
    return true;
}

int topo_jrd_range(struct topo_jrd *c, const char *arr, int i, const char *key, double v,
                   int64_t lo, int64_t hi)
{
    char must[96];
    if (hi < 0) /* an index into an empty array */
        snprintf(must, sizeof(must), "= %.15g names no entry (there is none)", v);
    else /* "0-255", "-1 to 3" */
        snprintf(must, sizeof(must), "= %.15g is %s %" PRId64 "%s%" PRId64, v,
                 v >= (double)lo && v <= (double)hi ? "not a whole number in" : "out of range", lo,
                 lo < 0 ? " to " : "-", hi);
    return topo_jrd_bad(c, arr, i, key, must);
}

bool topo_jrd_int(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  int64_t lo, int64_t hi, int64_t *out)
{
    double v;
    if (!topo_jrd_num(c, o, arr, i, key, &v))
        return false;
    if (jsonutil_whole(v, lo, hi, out))
        return true;
    topo_jrd_range(c, arr, i, key, v, lo, hi);
    return false;
}

bool topo_jrd_u64(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                  uint64_t *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it || cJSON_IsNull(it))
        return false;
    if (cJSON_IsNumber(it) && jsonutil_whole_u64(it->valuedouble, out))
        return true;
    if (cJSON_IsString(it) && it->valuestring[0] >= '0' && it->valuestring[0] <= '9') {
        char *end;
        errno = 0;
        *out = strtoull(it->valuestring, &end, 10);
        if (!errno && !*end)
            return true;
    }
    topo_jrd_bad(c, arr, i, key,
                 "must be a whole number from 0 to 18446744073709551615 (a number or a decimal "
                 "string) or null");
    return false;
}

const cJSON *topo_jrd_array(struct topo_jrd *c, const cJSON *o, const char *key, bool null_ok)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a || (null_ok && cJSON_IsNull(a)))
        return NULL;
    if (cJSON_IsArray(a))
        return a;
    if (c->rc == 0)
        c->rc = ft_err_set(c->err, -EBADMSG, "%s: %s%s must be an array", c->what, c->scope, key);
    return NULL;
}

void topo_jrd_str(const cJSON *o, const char *key, char *buf, size_t len)
{
    if (!jsonutil_strcpy(o, key, buf, len) && len)
        buf[0] = '\0';
}
