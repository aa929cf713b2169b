/* results_field: presence-keeping field readers and writers (results_field.h). */
#include "engine/results/results_field.h"

#include <errno.h>
#include <stdio.h>

#include "common/xalloc.h"

void results_field_put_num(cJSON *o, const char *k, const struct results_num *f)
{
    if (f->st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    else if (f->st == RESULTS_SET)
        cJSON_AddNumberToObject(o, k, f->v);
}

void results_field_put_str(cJSON *o, const char *k, const struct results_str *f)
{
    if (f->st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    else if (f->st == RESULTS_SET)
        cJSON_AddStringToObject(o, k, f->s ? f->s : "");
}

void results_field_put_bool(cJSON *o, const char *k, const struct results_bool *f)
{
    if (f->st == RESULTS_NULL)
        cJSON_AddNullToObject(o, k);
    else if (f->st == RESULTS_SET)
        cJSON_AddBoolToObject(o, k, f->v);
}

void results_field_put_carried(cJSON *o, const char *k, const cJSON *v)
{
    if (v)
        cJSON_AddItemToObject(o, k, cJSON_Duplicate(v, 1));
}

void results_field_bad(struct results_rd *r, const char *where, const char *key, const char *want)
{
    if (r->rc)
        return;
    char name[256];
    snprintf(name, sizeof(name), "%s%s%s", where, *where && key ? "." : "", key ? key : "");
    r->rc = ft_err_set(r->err, -EBADMSG, "%s: %s is not %s", r->what, *name ? name : "the document",
                       want);
}

const cJSON *results_field_member(const cJSON *o, const char *k, enum results_state *st)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *st = !v ? RESULTS_ABSENT : cJSON_IsNull(v) ? RESULTS_NULL : RESULTS_SET;
    return v;
}

void results_field_get_num(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                           struct results_num *f)
{
    const cJSON *v = results_field_member(o, k, &f->st);
    if (f->st == RESULTS_SET && !cJSON_IsNumber(v))
        results_field_bad(r, where, k, "a number or null");
    else if (f->st == RESULTS_SET)
        f->v = v->valuedouble;
}

void results_field_get_str(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                           struct results_str *f)
{
    const cJSON *v = results_field_member(o, k, &f->st);
    if (f->st == RESULTS_SET && !cJSON_IsString(v))
        results_field_bad(r, where, k, "a string or null");
    else if (f->st == RESULTS_SET)
        f->s = xalloc_strdup(v->valuestring);
}

void results_field_get_bool(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                            struct results_bool *f)
{
    const cJSON *v = results_field_member(o, k, &f->st);
    if (f->st == RESULTS_SET && !cJSON_IsBool(v))
        results_field_bad(r, where, k, "true, false or null");
    else if (f->st == RESULTS_SET)
        f->v = cJSON_IsTrue(v);
}

static const cJSON *typed(struct results_rd *r, const cJSON *o, const char *where, const char *k,
                          enum results_state *st, cJSON_bool (*is)(const cJSON *), const char *want)
{
    const cJSON *v = results_field_member(o, k, st);
    if (*st == RESULTS_SET && !is(v)) {
        results_field_bad(r, where, k, want);
        return NULL;
    }
    return *st == RESULTS_SET ? v : NULL;
}

const cJSON *results_field_obj(struct results_rd *r, const cJSON *o, const char *where,
                               const char *k, enum results_state *st)
{
    return typed(r, o, where, k, st, cJSON_IsObject, "an object or null");
}

const cJSON *results_field_arr(struct results_rd *r, const cJSON *o, const char *where,
                               const char *k, enum results_state *st)
{
    return typed(r, o, where, k, st, cJSON_IsArray, "an array or null");
}
