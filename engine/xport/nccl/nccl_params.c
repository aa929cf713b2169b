/* nccl_params: the parameters of an NCCL flow (collective and copy): the keys the mix
 * reader accepts, their defaults and ranges; errors name the flow and the field. */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

int nccl_params_gpu_list(const cJSON *v, const char *what, const char *flow, bool *all, int *n,
                         int *out, struct ft_err *err)
{
    *all = false;
    *n = 0;
    if (!v || cJSON_IsNull(v)) {
        *all = true;
        return 0;
    }
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "all")) {
        *all = true;
        return 0;
    }
    const cJSON *e;
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 && cJSON_GetArraySize(v) <= NC_MAX_GPUS) {
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1023 ||
                e->valuedouble != floor(e->valuedouble))
                goto bad;
            for (int i = 0; i < *n; i++)
                if (out[i] == (int)e->valuedouble)
                    return ft_err_set(err, -EINVAL, "flow %s: params.%s lists GPU %d twice", flow,
                                      what, out[i]);
            out[(*n)++] = (int)e->valuedouble;
        }
        return 0;
    }
bad:
    return ft_err_set(err, -EINVAL,
                      "flow %s: params.%s must be \"all\" or a list of 1 to %d CUDA device "
                      "numbers, e.g. [0, 1]",
                      flow, what, NC_MAX_GPUS);
}

static int int_param(const cJSON *p, const char *key, int dflt, int lo, int hi, const char *flow,
                     int *out, struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
        v->valuedouble != floor(v->valuedouble))
        return ft_err_set(err, -EINVAL, "flow %s: params.%s must be an integer from %d to %d", flow,
                          key, lo, hi);
    *out = (int)v->valuedouble;
    return 0;
}

static int bool_param(const cJSON *p, const char *key, bool dflt, const char *flow, bool *out,
                      struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return ft_err_set(err, -EINVAL, "flow %s: params.%s must be true or false", flow, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

static int str_param(const cJSON *p, const char *key, const char *flow, char *buf, size_t len,
                     struct ft_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    buf[0] = '\0';
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= len)
        return ft_err_set(err, -EINVAL, "flow %s: params.%s must be a string shorter than %zu",
                          flow, key, len);
    snprintf(buf, len, "%s", v->valuestring);
    return 0;
}

/* The parameters of a collective flow and of a copy flow (the mix reader refuses others). */
const char *const *nccl_params_keys(enum mix_op op)
{
    static const char *const coll[] = {"collective", "dtype",       "redop",    "root",
                                       "in_place",   "graph",       "check",    "timing",
                                       "host_iters", "event_iters", "algo",     "proto",
                                       "gpus",       "peer_gpus",   "blocking", NULL};
    static const char *const copy[] = {"copy", "pinned", "depth", "gpus", NULL};
    return op == MIX_OP_COPY ? copy : coll;
}

/* Every parameter the flow may carry, with its default; errors name the flow and the field. */
int nccl_params_parse(const struct mix_flow *f, struct nccl_params *p, struct ft_err *err)
{
    const cJSON *pp = f->params;
    memset(p, 0, sizeof(*p));
    int rc;
    const char *s = jsonutil_str(pp, "collective");
    int c = s ? nccl_util_coll_parse(s) : NCCL_COLL_ALL_REDUCE;
    if (c < 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.collective '%s' is not one of all_reduce, all_gather, "
                          "reduce_scatter, alltoall, broadcast, reduce, sendrecv",
                          f->name, s);
    p->coll = (enum nccl_util_coll)c;
    s = jsonutil_str(pp, "dtype");
    p->dt = nccl_util_dtype_find(s ? s : "float");
    if (!p->dt)
        return ft_err_set(err, -EINVAL, "flow %s: params.dtype '%s' is not one of %s", f->name, s,
                          nccl_util_dtype_names());
    s = jsonutil_str(pp, "redop");
    p->redop = nccl_util_redop_parse(s ? s : "sum");
    if (p->redop < 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.redop '%s' is not sum, prod, max, min "
                          "or avg",
                          f->name, s);
    if ((rc = int_param(pp, "root", 0, 0, 4095, f->name, &p->root, err)) < 0 ||
        (rc = bool_param(pp, "in_place", false, f->name, &p->in_place, err)) < 0 ||
        (rc = bool_param(pp, "graph", false, f->name, &p->graph, err)) < 0 ||
        (rc = bool_param(pp, "check", false, f->name, &p->check, err)) < 0 ||
        (rc = bool_param(pp, "blocking", false, f->name, &p->blocking, err)) < 0 ||
        (rc = int_param(pp, "host_iters", NC_HOST_ITERS, 1, 10000, f->name, &p->host_iters, err)) <
            0 ||
        (rc = int_param(pp, "event_iters", NC_EVENT_ITERS, 1, NC_EV_MAX, f->name, &p->event_iters,
                        err)) < 0 ||
        (rc = str_param(pp, "algo", f->name, p->algo, sizeof(p->algo), err)) < 0 ||
        (rc = str_param(pp, "proto", f->name, p->proto, sizeof(p->proto), err)) < 0 ||
        (rc = bool_param(pp, "pinned", true, f->name, &p->pinned, err)) < 0 ||
        (rc = int_param(pp, "depth", NC_COPY_DEPTH, 1, 16, f->name, &p->depth, err)) < 0)
        return rc;
    s = jsonutil_str(pp, "timing");
    if (!s || !strcmp(s, "both"))
        p->timing = NC_TIME_EVENTS | NC_TIME_HOST;
    else if (!strcmp(s, "events"))
        p->timing = NC_TIME_EVENTS;
    else if (!strcmp(s, "host"))
        p->timing = NC_TIME_HOST;
    else
        return ft_err_set(err, -EINVAL, "flow %s: params.timing must be both, events or host",
                          f->name);
    rc = nccl_params_gpu_list(cJSON_GetObjectItemCaseSensitive(pp, "gpus"), "gpus", f->name,
                              &p->all_gpus, &p->ngpus, p->gpus, err);
    if (rc < 0)
        return rc;
    if (p->all_gpus && f->local_gpu >= 0 && !cJSON_GetObjectItemCaseSensitive(pp, "gpus")) {
        p->all_gpus = false;
        p->ngpus = 1;
        p->gpus[0] = f->local_gpu;
    }
    rc = nccl_params_gpu_list(cJSON_GetObjectItemCaseSensitive(pp, "peer_gpus"), "peer_gpus",
                              f->name, &p->peer_all, &p->npeer, p->peer_gpus, err);
    if (rc < 0)
        return rc;
    s = jsonutil_str(pp, "copy");
    if (!s)
        p->copy_dir = f->dir == MIX_DIR_TX ? 1 : f->dir == MIX_DIR_RX ? 2 : 3;
    else if (!strcmp(s, "h2d"))
        p->copy_dir = 1;
    else if (!strcmp(s, "d2h"))
        p->copy_dir = 2;
    else if (!strcmp(s, "both"))
        p->copy_dir = 3;
    else
        return ft_err_set(err, -EINVAL, "flow %s: params.copy must be h2d, d2h or both", f->name);
    return 0;
}

int nccl_params_validate(const struct mix_flow *f, struct ft_err *err)
{
    struct nccl_params p;
    int rc = nccl_params_parse(f, &p, err);
    if (rc < 0)
        return rc;
    if (f->rate_gbps > 0)
        return ft_err_set(err, -EINVAL, "flow %s: nccl flows are not paced (rate_gbps must be 0)",
                          f->name);
    if (f->op == MIX_OP_COPY)
        return 0;
    if (f->size.kind == MIX_SIZE_DIST)
        return ft_err_set(err, -EINVAL,
                          "flow %s: collectives take a fixed size or a sweep, not a "
                          "distribution",
                          f->name);
    if (f->concurrency > NC_MAX_COMMS)
        return ft_err_set(err, -EINVAL,
                          "flow %s: concurrency (communicators issued at once) must be 1 to %d",
                          f->name, NC_MAX_COMMS);
    for (int i = 0; i < f->size.n; i++)
        if (f->size.bytes[i] < (uint64_t)p.dt->size)
            return ft_err_set(err, -EINVAL,
                              "flow %s: size %llu B is smaller than one %s element (%d B)", f->name,
                              (unsigned long long)f->size.bytes[i], p.dt->name, p.dt->size);
    if (p.in_place && (p.coll == NCCL_COLL_ALLTOALL || p.coll == NCCL_COLL_SENDRECV))
        return ft_err_set(err, -EINVAL, "flow %s: %s cannot run in place", f->name,
                          nccl_util_coll_name(p.coll));
    if (p.check && !p.dt->checkable)
        return ft_err_set(err, -EINVAL,
                          "flow %s: the correctness check does not support %s (use a float, "
                          "half, bfloat16, double or integer type)",
                          f->name, p.dt->name);
    if (p.redop == 4 && !p.dt->is_float && nccl_util_coll_reduces(p.coll))
        return ft_err_set(err, -EINVAL, "flow %s: avg needs a floating-point dtype", f->name);
    return 0;
}
