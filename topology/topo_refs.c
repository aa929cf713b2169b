/* topo_refs: the reference table's reader (docs/diagnosis.md, "Reference table"). */
#include "topology/topo_refs.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/jsonutil.h"

static const char *const metrics[] = {
    "port_rate",             /* an adapter port's line rate */
    "rdma_write_bw",         /* perftest ib_write_bw-style RDMA WRITE goodput */
    "nccl_all_reduce_busbw", /* nccl-tests all_reduce_perf bus bandwidth */
    "nvlink_bw",             /* a GPU's NVLink bandwidth over all its links */
    "host_copy_bw",          /* host <-> GPU memory copies */
    "pcie_link_bw",          /* a PCIe link's raw bandwidth */
    NULL,
};

const char *const *topo_refs_metrics(void)
{
    return metrics;
}

static const char *const table_keys[] = {"version", "comment", "rows", NULL};
static const char *const row_keys[] = {
    "id",    "part",      "metric",     "kind",          "value",
    "unit",  "direction", "conditions", "tolerance_pct", "tolerance_basis",
    "match", "document",  "url",        "comment",       NULL};
static const char *const match_keys[] = {"models",    "pci_ids", "port_gbps", "gpus",
                                         "min_bytes", "algo",    "memory",    NULL};

/* Copy a required, non-empty string member that fits. */
static int req_str(const cJSON *row, const char *key, char *buf, size_t len, const char *where,
                   struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    if (!v)
        return ft_err_set(err, -EINVAL, "%s.%s: missing (every row names it)", where, key);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return ft_err_set(err, -EINVAL, "%s.%s: must be a non-empty string", where, key);
    if (strlen(v->valuestring) >= len)
        return ft_err_set(err, -EINVAL, "%s.%s: longer than %zu characters", where, key, len - 1);
    snprintf(buf, len, "%s", v->valuestring);
    return 0;
}

static bool id_ok(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return false;
    return true;
}

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

/* One of match's name lists: up to TOPO_REF_MAX_NAMES non-empty strings that fit. */
static int parse_names(const cJSON *m, const char *key, char *out, size_t width, int *n,
                       const char *where, struct ft_err *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(m, key), *v;
    *n = 0;
    if (!a)
        return 0;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > TOPO_REF_MAX_NAMES)
        return ft_err_set(err, -EINVAL, "%s.match.%s: must be an array of at most %d strings",
                          where, key, TOPO_REF_MAX_NAMES);
    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= width)
            return ft_err_set(err, -EINVAL,
                              "%s.match.%s[%d]: must be a non-empty string of at most %zu "
                              "characters",
                              where, key, *n, width - 1);
        snprintf(out + (size_t)*n * width, width, "%s", v->valuestring);
        (*n)++;
    }
    return 0;
}

/* A PCI id as lspci -n prints it: "10de:2330". */
static bool pci_id_ok(const char *s)
{
    if (strlen(s) != 9 || s[4] != ':')
        return false;
    for (int i = 0; i < 9; i++)
        if (i != 4 && !isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

static int parse_match(const cJSON *m, struct topo_ref_match *out, const char *where,
                       struct ft_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!m)
        return 0;
    char w[200];
    snprintf(w, sizeof(w), "%s.match", where);
    if (!cJSON_IsObject(m))
        return ft_err_set(err, -EINVAL, "%s: must be an object", w);
    int rc = jsonutil_check_keys(m, match_keys, w, err);
    if (rc < 0 ||
        (rc = parse_names(m, "models", &out->models[0][0], sizeof(out->models[0]), &out->nmodels,
                          where, err)) < 0 ||
        (rc = parse_names(m, "pci_ids", &out->pci_ids[0][0], sizeof(out->pci_ids[0]),
                          &out->npci_ids, where, err)) < 0)
        return rc;
    for (int i = 0; i < out->npci_ids; i++)
        if (!pci_id_ok(out->pci_ids[i]))
            return ft_err_set(err, -EINVAL, "%s.pci_ids[%d]: '%s' is not vvvv:dddd (hex)", w, i,
                              out->pci_ids[i]);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "port_gbps");
    if (v && (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e5))
        return ft_err_set(err, -EINVAL, "%s.port_gbps: must be a rate above 0 and at most 10^5", w);
    out->port_gbps = v ? v->valuedouble : 0;
    v = cJSON_GetObjectItemCaseSensitive(m, "gpus");
    if (v && (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
              v->valuedouble > 65536))
        return ft_err_set(err, -EINVAL, "%s.gpus: must be a whole number from 1 to 65536", w);
    out->gpus = v ? (int)v->valuedouble : 0;
    v = cJSON_GetObjectItemCaseSensitive(m, "min_bytes");
    if (v && (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 1e15))
        return ft_err_set(err, -EINVAL, "%s.min_bytes: must be a size from 0 to 10^15 bytes", w);
    out->min_bytes = v ? v->valuedouble : 0;
    v = cJSON_GetObjectItemCaseSensitive(m, "algo");
    if (v &&
        (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof(out->algo)))
        return ft_err_set(err, -EINVAL, "%s.algo: must be NCCL's algorithm name (\"RING\")", w);
    if (v)
        snprintf(out->algo, sizeof(out->algo), "%s", v->valuestring);
    v = cJSON_GetObjectItemCaseSensitive(m, "memory");
    if (v &&
        (!cJSON_IsString(v) || (strcmp(v->valuestring, "gpu") && strcmp(v->valuestring, "host"))))
        return ft_err_set(err, -EINVAL, "%s.memory: must be \"gpu\" or \"host\"", w);
    if (v)
        snprintf(out->memory, sizeof(out->memory), "%s", v->valuestring);
    return 0;
}

static int parse_row(const cJSON *row, int i, const struct topo_refs *done, struct topo_ref *r,
                     const char *what, struct ft_err *err)
{
    char where[160];
    snprintf(where, sizeof(where), "%s: rows[%d]", what, i);
    if (!cJSON_IsObject(row))
        return ft_err_set(err, -EINVAL, "%s: must be an object", where);
    int rc = req_str(row, "id", r->id, sizeof(r->id), where, err);
    if (rc < 0)
        return rc;
    if (!id_ok(r->id))
        return ft_err_set(err, -EINVAL, "%s.id: '%s' may hold only a-z, 0-9, '-' and '_'", where,
                          r->id);
    if (topo_refs_find(done, r->id))
        return ft_err_set(err, -EINVAL, "%s.id: '%s' is used by an earlier row", where, r->id);
    snprintf(where, sizeof(where), "%s: rows[%d] (id '%s')", what, i, r->id);
    if ((rc = jsonutil_check_keys(row, row_keys, where, err)) < 0)
        return rc;
    char kind[16], metric[64];
    if ((rc = req_str(row, "part", r->part, sizeof(r->part), where, err)) < 0 ||
        (rc = req_str(row, "metric", metric, sizeof(metric), where, err)) < 0 ||
        (rc = req_str(row, "kind", kind, sizeof(kind), where, err)) < 0 ||
        (rc = req_str(row, "unit", r->unit, sizeof(r->unit), where, err)) < 0 ||
        (rc = req_str(row, "direction", r->direction, sizeof(r->direction), where, err)) < 0 ||
        (rc = req_str(row, "conditions", r->conditions, sizeof(r->conditions), where, err)) < 0 ||
        (rc = req_str(row, "document", r->document, sizeof(r->document), where, err)) < 0)
        return rc;
    if (!in_list(metric, metrics))
        return ft_err_set(err, -EINVAL,
                          "%s.metric: '%s' is not one of port_rate, rdma_write_bw, "
                          "nccl_all_reduce_busbw, nvlink_bw, host_copy_bw, pcie_link_bw",
                          where, metric);
    snprintf(r->metric, sizeof(r->metric), "%s", metric);
    if (!strcmp(kind, "pass_line"))
        r->kind = TOPO_REF_PASS_LINE;
    else if (!strcmp(kind, "peak"))
        r->kind = TOPO_REF_PEAK;
    else if (!strcmp(kind, "result"))
        r->kind = TOPO_REF_RESULT;
    else
        return ft_err_set(err, -EINVAL, "%s.kind: '%s' is not pass_line, peak or result", where,
                          kind);
    if (strcmp(r->unit, "Gb/s") && strcmp(r->unit, "GB/s"))
        return ft_err_set(err, -EINVAL,
                          "%s.unit: '%s' is not Gb/s (10^9 bit/s) or GB/s (10^9 byte/s); convert "
                          "other units first",
                          where, r->unit);
    if (strcmp(r->direction, "one") && strcmp(r->direction, "both"))
        return ft_err_set(err, -EINVAL,
                          "%s.direction: '%s' is not one (per direction) or both (summed)", where,
                          r->direction);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "value");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0) ||
        v->valuedouble > 1e6)
        return ft_err_set(err, -EINVAL, "%s.value: must be a number above 0 and at most 10^6",
                          where);
    r->value = v->valuedouble;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "tolerance_pct");
    if (r->kind == TOPO_REF_PASS_LINE) {
        if (!t)
            return ft_err_set(err, -EINVAL,
                              "%s.tolerance_pct: missing (a pass line states how far below "
                              "it still passes)",
                              where);
        if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0 ||
            t->valuedouble > 50)
            return ft_err_set(err, -EINVAL, "%s.tolerance_pct: must be a number from 0 to 50",
                              where);
        r->has_tolerance = true;
        r->tolerance_pct = t->valuedouble;
        if ((rc = req_str(row, "tolerance_basis", r->tolerance_basis, sizeof(r->tolerance_basis),
                          where, err)) < 0)
            return rc;
    } else if ((t && !cJSON_IsNull(t)) ||
               cJSON_GetObjectItemCaseSensitive(row, "tolerance_basis")) {
        return ft_err_set(err, -EINVAL,
                          "%s.tolerance_pct: a %s has no tolerance (leave it and tolerance_basis "
                          "out)",
                          where, kind);
    }
    if ((rc = parse_match(cJSON_GetObjectItemCaseSensitive(row, "match"), &r->match, where, err)) <
        0)
        return rc;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(row, "url");
    if (u) {
        if (!cJSON_IsString(u) || strncmp(u->valuestring, "https://", 8))
            return ft_err_set(err, -EINVAL, "%s.url: must be a string starting with https://",
                              where);
        if (strlen(u->valuestring) >= sizeof(r->url))
            return ft_err_set(err, -EINVAL, "%s.url: longer than %zu characters", where,
                              sizeof(r->url) - 1);
        snprintf(r->url, sizeof(r->url), "%s", u->valuestring);
    }
    return 0;
}

int topo_refs_parse(const char *text, size_t len, const char *what, struct topo_refs *out,
                    struct ft_err *err)
{
    if (!text || !what || !out)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    cJSON *doc = NULL;
    int rc = jsonutil_parse(text, len, what, &doc, err);
    if (rc < 0)
        return rc;
    if (!cJSON_IsObject(doc)) {
        rc = ft_err_set(err, -EINVAL, "%s: must be an object with version and rows", what);
        goto out;
    }
    if ((rc = jsonutil_check_keys(doc, table_keys, what, err)) < 0)
        goto out;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        rc = ft_err_set(err, -EINVAL, "%s.version: must be 1 (this fabtop reads version 1)", what);
        goto out;
    }
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
    if (!cJSON_IsArray(rows)) {
        rc = ft_err_set(err, -EINVAL, "%s.rows: must be an array of rows", what);
        goto out;
    }
    int n = cJSON_GetArraySize(rows);
    if (n > 4096) {
        rc = ft_err_set(err, -EINVAL, "%s.rows: %d rows, more than 4096", what, n);
        goto out;
    }
    out->rows = n ? calloc((size_t)n, sizeof(*out->rows)) : NULL;
    if (n && !out->rows) {
        rc = ft_err_set(err, -ENOMEM, "%s: out of memory", what);
        goto out;
    }
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        if ((rc = parse_row(row, i, out, &out->rows[i], what, err)) < 0)
            goto out;
        out->n = ++i;
    }
    rc = 0;
out:
    cJSON_Delete(doc);
    if (rc < 0)
        topo_refs_free(out);
    return rc;
}

int topo_refs_load(const char *path, struct topo_refs *out, struct ft_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = jsonutil_slurp(path, &text, &len, 16u << 20, err);
    if (rc < 0)
        return rc;
    rc = topo_refs_parse(text, len, path, out, err);
    free(text);
    return rc;
}

void topo_refs_free(struct topo_refs *r)
{
    if (!r)
        return;
    free(r->rows);
    r->rows = NULL;
    r->n = 0;
}

const struct topo_ref *topo_refs_find(const struct topo_refs *r, const char *id)
{
    if (!r || !id)
        return NULL;
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].id, id))
            return &r->rows[i];
    return NULL;
}

const char *topo_ref_kind_str(enum topo_ref_kind k)
{
    return k == TOPO_REF_PEAK ? "peak" : k == TOPO_REF_RESULT ? "result" : "pass_line";
}

/* name occurs in model as a whole name: not followed by a digit or letter ("ConnectX-7" in
 * "MT2910 Family [ConnectX-7]", not in "ConnectX-70"; "H100" in "NVIDIA H100 80GB HBM3"). */
static bool has_name(const char *model, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = strstr(model, name); at; at = strstr(at + 1, name)) {
        bool start = at == model || !isalnum((unsigned char)at[-1]);
        if (start && !isalnum((unsigned char)at[n]))
            return true;
    }
    return false;
}

bool topo_ref_names(const struct topo_ref *row, const char *model)
{
    if (!model || !*model)
        return false;
    for (int i = 0; i < row->match.nmodels; i++)
        if (has_name(model, row->match.models[i]))
            return true;
    for (int i = 0; i < row->match.npci_ids; i++)
        if (!strcasecmp(model, row->match.pci_ids[i]))
            return true;
    return false;
}

double topo_ref_gbps_one_way(const struct topo_ref *row)
{
    double v = row->value * (!strcmp(row->unit, "GB/s") ? 8 : 1);
    return !strcmp(row->direction, "both") ? v / 2 : v;
}
