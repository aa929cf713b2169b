/* test_schema_keys: docs/schema/mix.schema.json declares exactly the keys the mix reader
 * accepts: the document's, a flow's, its local, size and recover objects' (mix.h's lists), and
 * for params, per transport and op, what each transport's param_keys returns (the schema's
 * x-accepted-by). The nested objects whose lists are a reader's own (a kv flow's arrival, the
 * simulator's fabric settings and their parts, playback, an inline topology) are read from
 * the reader itself: a key no list is near is refused with "(known: ...)", every key it
 * takes. A key added to a reader without the schema (or the other way) fails here, naming
 * the key; the ops and transports the schema enumerates are the registry's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "common/jsonutil.h"
#include "engine/flow/kv.h"
#include "engine/flow/mix.h"
#include "engine/sim/sim.h"
#include "engine/xport/xport.h"

#ifndef MIX_SCHEMA
#error MIX_SCHEMA must name docs/schema/mix.schema.json
#endif

static cJSON *schema;

static int setup(void **state)
{
    (void)state;
    struct ft_err err = {0};
    if (jsonutil_load(MIX_SCHEMA, &schema, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cJSON_Delete(schema);
    return 0;
}

static const cJSON *def(const char *name)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(schema, "$defs");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d, name);
    if (!o)
        fail_msg("the schema has no $defs.%s", name);
    return o;
}

static bool in_list(const char *const *keys, const char *k)
{
    for (; *keys; keys++)
        if (!strcmp(*keys, k))
            return true;
    return false;
}

/* The schema's keys (names of props' members kept by keep, NULL: all) against the reader's
 * list: every difference is printed, and any fails. */
static void same_keys(const char *what, const cJSON *props, const char *const *reader,
                      bool (*keep)(const cJSON *prop, const void *arg), const void *arg)
{
    int bad = 0;
    const cJSON *p;
    if (!cJSON_IsObject(props))
        fail_msg("%s: the schema has no properties", what);
    cJSON_ArrayForEach(p, props)
    {
        if (keep && !keep(p, arg))
            continue;
        if (!in_list(reader, p->string)) {
            fprintf(stderr, "%s: the schema declares '%s', which the reader refuses\n", what,
                    p->string);
            bad++;
        }
    }
    for (const char *const *k = reader; *k; k++) {
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(props, *k);
        if (!q || (keep && !keep(q, arg))) {
            fprintf(stderr, "%s: the reader accepts '%s', which the schema does not declare\n",
                    what, *k);
            bad++;
        }
    }
    if (bad)
        fail_msg("%s: %d key(s) differ between the reader and %s", what, bad, MIX_SCHEMA);
}

static const cJSON *props_of(const cJSON *o)
{
    return cJSON_GetObjectItemCaseSensitive(o, "properties");
}

static void test_document(void **state)
{
    (void)state;
    same_keys("mix document", props_of(schema), mix_doc_keys, NULL, NULL);
}

static void test_flow(void **state)
{
    (void)state;
    same_keys("flow", props_of(def("flow")), mix_flow_keys, NULL, NULL);
    same_keys("flow.local", props_of(def("local")), mix_local_keys, NULL, NULL);
    same_keys("flow.recover", props_of(def("recover")), mix_recover_keys, NULL, NULL);
}

/* size: the object forms are the oneOf branches with properties; their keys together. */
static void test_size(void **state)
{
    (void)state;
    cJSON *all = cJSON_CreateObject();
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(def("size"), "oneOf"))
    {
        const cJSON *p;
        cJSON_ArrayForEach(p, props_of(b))
        {
            cJSON_AddItemToObject(all, p->string, cJSON_CreateTrue());
        }
    }
    same_keys("flow.size", all, mix_size_keys, NULL, NULL);
    cJSON_Delete(all);
}

/* An enum's strings as the members of an object, for same_keys. */
static cJSON *enum_set(const cJSON *e)
{
    cJSON *set = cJSON_CreateObject();
    const cJSON *v;
    cJSON_ArrayForEach(v, e)
    {
        if (cJSON_IsString(v))
            cJSON_AddItemToObject(set, v->valuestring, cJSON_CreateTrue());
    }
    return set;
}

/* The enums of transport and op are the registry's names and the reader's ops. */
static void test_enums(void **state)
{
    (void)state;
    const cJSON *fp = props_of(def("flow"));
    const cJSON *te =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(fp, "transport"), "enum");
    const cJSON *oe =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(fp, "op"), "enum");
    const char *names[16];
    int n = 0;
    for (const struct xport_ops *const *x = xport_all(); *x && n < 15; x++)
        names[n++] = (*x)->name;
    names[n] = NULL;
    cJSON *set = enum_set(te);
    same_keys("flow.transport enum", set, names, NULL, NULL);
    cJSON_Delete(set);
    const char *ops[MIX_OP_COUNT + 1];
    for (int i = 0; i < MIX_OP_COUNT; i++)
        ops[i] = mix_op_str((enum mix_op)i);
    ops[MIX_OP_COUNT] = NULL;
    set = enum_set(oe);
    same_keys("flow.op enum", set, ops, NULL, NULL);
    cJSON_Delete(set);
}

struct accept_arg {
    const char *transport, *op;
};

/* Does the schema say params key prop is accepted by this transport for this op? */
static bool accepted(const cJSON *prop, const void *arg)
{
    const struct accept_arg *a = arg;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(prop, "x-accepted-by");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(by, a->transport);
    const cJSON *e;
    cJSON_ArrayForEach(e, ops)
    {
        if (cJSON_IsString(e) && !strcmp(e->valuestring, a->op))
            return true;
    }
    return false;
}

static void test_params(void **state)
{
    (void)state;
    const cJSON *props = props_of(def("params"));
    int checked = 0;
    for (const struct xport_ops *const *x = xport_all(); *x; x++) {
        if (!(*x)->param_keys)
            continue;
        for (int op = 0; op < MIX_OP_COUNT; op++) {
            if (!((*x)->ops & (1u << op)))
                continue;
            struct accept_arg a = {(*x)->name, mix_op_str((enum mix_op)op)};
            char what[64];
            snprintf(what, sizeof(what), "params of %s %s", a.transport, a.op);
            same_keys(what, props, (*x)->param_keys((enum mix_op)op), accepted, &a);
            checked++;
        }
    }
    assert_true(checked >= 10);
    /* Every x-accepted-by names a transport that exists and ops it runs. */
    const cJSON *p;
    cJSON_ArrayForEach(p, props)
    {
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(p, "x-accepted-by");
        if (!cJSON_IsObject(by) || !by->child)
            fail_msg("params.%s has no x-accepted-by", p->string);
        const cJSON *t;
        cJSON_ArrayForEach(t, by)
        {
            const struct xport_ops *xp = xport_find(t->string);
            if (!xp)
                fail_msg("params.%s: x-accepted-by names transport '%s', which does not exist",
                         p->string, t->string);
            const cJSON *o;
            cJSON_ArrayForEach(o, t)
            {
                int k = -1;
                for (int i = 0; i < MIX_OP_COUNT; i++)
                    if (cJSON_IsString(o) && !strcmp(o->valuestring, mix_op_str((enum mix_op)i)))
                        k = i;
                if (k < 0 || !(xp->ops & (1u << k)))
                    fail_msg("params.%s: %s does not run op '%s'", p->string, t->string,
                             cJSON_IsString(o) ? o->valuestring : "?");
            }
        }
    }
}

/* ---- nested objects: the reader's own list, from its refusal of a key near none ---- */

#define FAR_KEY "qqqqqqqqqqqqqqqqqqqqqqqq"

/* The list in "... unknown key 'K' (known: a, b, c)" as a NULL-terminated array in buf. */
static void known_list(const char *what, const char *msg, char *buf, size_t len, const char **keys,
                       int max)
{
    const char *k = strstr(msg, "(known: ");
    size_t n = strlen(msg);
    if (!k || !n || msg[n - 1] != ')')
        fail_msg("%s: the reader did not list its keys for an unknown one: \"%s\"", what, msg);
    snprintf(buf, len, "%.*s", (int)(n - 1 - (size_t)(k + 8 - msg)), k + 8);
    int i = 0;
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t && i < max - 1;
         t = strtok_r(NULL, ", ", &save))
        keys[i++] = t;
    keys[i] = NULL;
}

/* Wrap an object {FAR_KEY: 0} in the members of path (NULL-terminated; "[]" makes an array
 * of it), outermost first. */
static cJSON *probe_doc(const char *const *path)
{
    int n = 0;
    while (path[n])
        n++;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, FAR_KEY, 0);
    for (int i = n - 1; i >= 0; i--) {
        cJSON *up;
        if (!strcmp(path[i], "[]")) {
            up = cJSON_CreateArray();
            cJSON_AddItemToArray(up, o);
        } else {
            up = cJSON_CreateObject();
            cJSON_AddItemToObject(up, path[i], o);
        }
        o = up;
    }
    return o;
}

/* The schema object at $defs.name, then down properties.K for each K of path ("[]": items). */
static const cJSON *schema_at(const char *name, const char *const *path)
{
    const cJSON *o = def(name);
    for (; *path; path++)
        o = !strcmp(*path, "[]") ? cJSON_GetObjectItemCaseSensitive(o, "items")
                                 : cJSON_GetObjectItemCaseSensitive(props_of(o), *path);
    if (!o)
        fail_msg("the schema has no %s at that path", name);
    return o;
}

static void compare_reader(const char *what, const cJSON *schema_obj, const char *msg)
{
    char buf[512];
    const char *keys[64];
    known_list(what, msg, buf, sizeof(buf), keys, 64);
    same_keys(what, props_of(schema_obj), keys, NULL, NULL);
}

/* kv: params.arrival (kv_params_from_json). */
static void test_kv_arrival(void **state)
{
    (void)state;
    cJSON *p = probe_doc((const char *const[]){"arrival", NULL});
    struct kv_params kp;
    struct ft_err err = {0};
    assert_int_not_equal(kv_params_from_json(p, "probe", &kp, &err), 0);
    compare_reader("params.arrival", def("kv_arrival"), err.msg);
    cJSON_Delete(p);
}

/* sim: params.fabric and its parts (sim_params_from_json). */
static void test_sim_fabric(void **state)
{
    (void)state;
    static const char *const paths[][4] = {
        {NULL},
        {"pfc", NULL},
        {"ecn", NULL},
        {"dcqcn", NULL},
        {"ibcc", NULL},
        {"ibcc", "SwitchCongestionSetting", NULL},
        {"ibcc", "CACongestionSetting", NULL},
        {"ibcc", "CongestionControlTable", NULL},
        {"link_events", "[]", NULL},
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        cJSON *p = probe_doc(paths[i]);
        struct sim_params sp;
        struct ft_err err = {0};
        sim_params_default(&sp, SIM_FABRIC_ROCE);
        assert_int_not_equal(sim_params_from_json(p, "probe", &sp, &err), 0);
        char what[96];
        snprintf(what, sizeof(what), "params.fabric%s%s%s%s", paths[i][0] ? "." : "",
                 paths[i][0] ? paths[i][0] : "", paths[i][0] && paths[i][1] ? "." : "",
                 paths[i][0] && paths[i][1] ? paths[i][1] : "");
        compare_reader(what, schema_at("sim_fabric", paths[i]), err.msg);
        cJSON_Delete(p);
    }
}

/* sim: params.playback (the sim transport's validate) and an inline topology (sim_new). */
static void test_sim_playback_topology(void **state)
{
    (void)state;
    const struct xport_ops *sim = xport_find("sim");
    assert_non_null(sim);
    assert_non_null(sim->validate);
    struct mix_flow *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    snprintf(f->name, sizeof(f->name), "probe");
    snprintf(f->transport, sizeof(f->transport), "sim");
    f->local_gpu = -1;
    f->params = probe_doc((const char *const[]){"playback", NULL});
    struct ft_err err = {0};
    assert_int_not_equal(sim->validate(f, &err), 0);
    compare_reader("params.playback", def("sim_playback"), err.msg);
    cJSON_Delete(f->params);
    free(f);

    cJSON *t = probe_doc((const char *const[]){NULL});
    cJSON_AddStringToObject(t, "format", "fabtop-sim-topology");
    struct sim_params sp;
    sim_params_default(&sp, SIM_FABRIC_ROCE);
    struct sim *s = NULL;
    struct ft_err terr = {0};
    assert_int_not_equal(sim_new(t, "probe", &sp, &s, &terr), 0);
    compare_reader("params.topology (inline)", def("sim_topology"), terr.msg);
    cJSON_Delete(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document),   cmocka_unit_test(test_flow),
        cmocka_unit_test(test_size),       cmocka_unit_test(test_enums),
        cmocka_unit_test(test_params),     cmocka_unit_test(test_kv_arrival),
        cmocka_unit_test(test_sim_fabric), cmocka_unit_test(test_sim_playback_topology),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
