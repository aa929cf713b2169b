/* results_causes_json: the run document's "causes": each cause's rule, flow, phase, figure,
 * percent of the ceiling, message, fix and evidence, in that order. */
#include "engine/results/results_causes_json.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/xalloc.h"

static void str_clear(struct results_str *f)
{
    if (f->st == RESULTS_SET)
        free(f->s);
    f->st = RESULTS_ABSENT;
    f->s = NULL;
}

void results_causes_clear(struct results_causes *c)
{
    for (int i = 0; i < c->n; i++) {
        struct results_cause *e = &c->v[i];
        str_clear(&e->rule);
        str_clear(&e->flow);
        str_clear(&e->phase);
        str_clear(&e->figure);
        str_clear(&e->message);
        str_clear(&e->fix);
        for (int k = 0; k < e->nev; k++) {
            str_clear(&e->ev[k].name);
            str_clear(&e->ev[k].unit);
            str_clear(&e->ev[k].text);
        }
        free(e->ev);
    }
    free(c->v);
    c->v = NULL;
    c->n = 0;
    c->st = RESULTS_ABSENT;
}

void results_causes_json_write(cJSON *doc, const struct results_causes *c)
{
    if (c->st == RESULTS_NULL)
        cJSON_AddNullToObject(doc, "causes");
    if (c->st != RESULTS_SET)
        return;
    cJSON *a = cJSON_AddArrayToObject(doc, "causes");
    for (int i = 0; i < c->n; i++) {
        const struct results_cause *e = &c->v[i];
        cJSON *o = cJSON_CreateObject();
        results_field_put_str(o, "rule", &e->rule);
        results_field_put_str(o, "flow", &e->flow);
        results_field_put_str(o, "phase", &e->phase);
        results_field_put_str(o, "figure", &e->figure);
        results_field_put_num(o, "percent_of_ceiling", &e->percent_of_ceiling);
        results_field_put_str(o, "message", &e->message);
        results_field_put_str(o, "fix", &e->fix);
        cJSON *ev = cJSON_AddArrayToObject(o, "evidence");
        for (int k = 0; k < e->nev; k++) {
            cJSON *x = cJSON_CreateObject();
            results_field_put_str(x, "name", &e->ev[k].name);
            results_field_put_num(x, "value", &e->ev[k].value);
            results_field_put_str(x, "unit", &e->ev[k].unit);
            results_field_put_str(x, "text", &e->ev[k].text);
            cJSON_AddItemToArray(ev, x);
        }
        cJSON_AddItemToArray(a, o);
    }
}

void results_causes_json_read(struct results_rd *r, const cJSON *j, struct results_causes *c)
{
    const cJSON *a = results_field_arr(r, j, "", "causes", &c->st);
    if (!a)
        return;
    c->v = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(*c->v));
    const cJSON *o;
    cJSON_ArrayForEach(o, a)
    {
        char where[48], sub[80];
        snprintf(where, sizeof(where), "causes[%d]", c->n);
        struct results_cause *e = &c->v[c->n++];
        if (!cJSON_IsObject(o)) {
            results_field_bad(r, where, NULL, "an object");
            continue;
        }
        results_field_get_str(r, o, where, "rule", &e->rule);
        results_field_get_str(r, o, where, "flow", &e->flow);
        results_field_get_str(r, o, where, "phase", &e->phase);
        results_field_get_str(r, o, where, "figure", &e->figure);
        results_field_get_num(r, o, where, "percent_of_ceiling", &e->percent_of_ceiling);
        results_field_get_str(r, o, where, "message", &e->message);
        results_field_get_str(r, o, where, "fix", &e->fix);
        if (e->rule.st != RESULTS_SET)
            results_field_bad(r, where, "rule", "a string");
        enum results_state st;
        const cJSON *ev = results_field_arr(r, o, where, "evidence", &st);
        e->ev = xalloc_zero((size_t)cJSON_GetArraySize(ev) + 1, sizeof(*e->ev));
        const cJSON *x;
        cJSON_ArrayForEach(x, ev)
        {
            snprintf(sub, sizeof(sub), "%s.evidence[%d]", where, e->nev);
            struct results_cause_ev *v = &e->ev[e->nev++];
            if (!cJSON_IsObject(x)) {
                results_field_bad(r, sub, NULL, "an object");
                continue;
            }
            results_field_get_str(r, x, sub, "name", &v->name);
            results_field_get_num(r, x, sub, "value", &v->value);
            results_field_get_str(r, x, sub, "unit", &v->unit);
            results_field_get_str(r, x, sub, "text", &v->text);
        }
    }
}

/* A reference match's strings and numbers, in the order written (before document, url). */
static const char *const ref_str_keys[] = {
    "flow",   "phase",     "id",         "part",   "metric",          "kind",
    "unit",   "direction", "conditions", "figure", "tolerance_basis", "verdict",
    "differs"};
static const char *const ref_num_keys[] = {"value", "tolerance_pct", "measured", "percent"};
#define NSTR (sizeof(ref_str_keys) / sizeof(ref_str_keys[0]))
#define NNUM (sizeof(ref_num_keys) / sizeof(ref_num_keys[0]))

static struct results_str *ref_str(struct results_ref_match *e, size_t i)
{
    struct results_str *v[NSTR] = {
        &e->flow,   &e->phase,     &e->id,         &e->part,   &e->metric,          &e->kind,
        &e->unit,   &e->direction, &e->conditions, &e->figure, &e->tolerance_basis, &e->verdict,
        &e->differs};
    return v[i];
}

static struct results_num *ref_num(struct results_ref_match *e, size_t i)
{
    struct results_num *v[NNUM] = {&e->value, &e->tolerance_pct, &e->measured, &e->percent};
    return v[i];
}

void results_ref_matches_clear(struct results_ref_matches *m)
{
    for (int i = 0; i < m->n; i++) {
        for (size_t k = 0; k < NSTR; k++)
            str_clear(ref_str(&m->v[i], k));
        str_clear(&m->v[i].document);
        str_clear(&m->v[i].url);
    }
    free(m->v);
    m->v = NULL;
    m->n = 0;
    m->st = RESULTS_ABSENT;
}

void results_refs_json_write(cJSON *doc, const struct results_ref_matches *m)
{
    if (m->st == RESULTS_NULL)
        cJSON_AddNullToObject(doc, "references");
    if (m->st != RESULTS_SET)
        return;
    cJSON *a = cJSON_AddArrayToObject(doc, "references");
    for (int i = 0; i < m->n; i++) {
        struct results_ref_match *e = &m->v[i];
        cJSON *o = cJSON_CreateObject();
        for (size_t k = 0; k < NSTR; k++)
            results_field_put_str(o, ref_str_keys[k], ref_str(e, k));
        for (size_t k = 0; k < NNUM; k++)
            results_field_put_num(o, ref_num_keys[k], ref_num(e, k));
        results_field_put_str(o, "document", &e->document);
        results_field_put_str(o, "url", &e->url);
        cJSON_AddItemToArray(a, o);
    }
}

void results_refs_json_read(struct results_rd *r, const cJSON *j, struct results_ref_matches *m)
{
    const cJSON *a = results_field_arr(r, j, "", "references", &m->st);
    if (!a)
        return;
    m->v = xalloc_zero((size_t)cJSON_GetArraySize(a) + 1, sizeof(*m->v));
    const cJSON *o;
    cJSON_ArrayForEach(o, a)
    {
        char where[48];
        snprintf(where, sizeof(where), "references[%d]", m->n);
        struct results_ref_match *e = &m->v[m->n++];
        if (!cJSON_IsObject(o)) {
            results_field_bad(r, where, NULL, "an object");
            continue;
        }
        for (size_t k = 0; k < NSTR; k++)
            results_field_get_str(r, o, where, ref_str_keys[k], ref_str(e, k));
        for (size_t k = 0; k < NNUM; k++)
            results_field_get_num(r, o, where, ref_num_keys[k], ref_num(e, k));
        results_field_get_str(r, o, where, "document", &e->document);
        results_field_get_str(r, o, where, "url", &e->url);
        if (e->id.st != RESULTS_SET)
            results_field_bad(r, where, "id", "a string");
    }
}
