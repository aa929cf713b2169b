/* verbs_params: the parameters of a verbs flow (verb, latency mode, transport timeout and
 * retries, depth, the port and GID the flow wants, librdmacm): the keys the mix reader
 * accepts, the settings read from them; errors name the flow and the field. */
#include "engine/xport/verbs/xport_verbs_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"
#include "engine/peer/channel.h"
#include "engine/counters/counters_qp.h"
#include "engine/flow/kv.h"
#include "engine/flow/ring.h"
#include "topology/topo_dcb.h"
#include "engine/peer/rrcheck.h"
#include "engine/xport/verbs/verbs_cm.h"
#include "topology/topo_model.h"

const char *const verbs_params_verb_names[] = {"write", "send", "read"};
const char *const verbs_params_lat_names[] = {"pingpong", "completion", "imm"};

int verbs_params_name_idx(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* A whole-number parameter, dflt when absent; INT_MIN (which the range checks refuse) when it
 * is a fraction or beyond an int: never converted (that would be undefined). */
static int int_or(const cJSON *p, const char *key, int dflt)
{
    double d;
    int64_t v;
    if (!jsonutil_num(p, key, &d))
        return dflt;
    return jsonutil_whole(d, INT_MIN + 1, INT_MAX, &v) ? (int)v : INT_MIN;
}

int verbs_params_parse(const struct mix_flow *f, struct verbs_params *c, struct ft_err *err)
{
    memset(c, 0, sizeof(*c));
    const cJSON *p = f->params;
    const char *verb = jsonutil_str(p, "verb"), *lat = jsonutil_str(p, "latency"),
               *mem = jsonutil_str(p, "memory");
    int v = verb ? verbs_params_name_idx(verb, verbs_params_verb_names, 3) : VERBS_WRITE;
    int l = lat ? verbs_params_name_idx(lat, verbs_params_lat_names, 3) : VERBS_LAT_POLL;
    if (v < 0)
        return ft_err_set(err, -EINVAL, "flow %s: params.verb must be write, send or read",
                          f->name);
    if (l < 0)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.latency must be pingpong, completion or imm", f->name);
    c->verb = (enum verbs_params_verb)v;
    c->lat = (enum verbs_params_lat)l;
    c->timeout = int_or(p, "timeout", 14);
    c->retry_cnt = int_or(p, "retry_cnt", 7);
    c->depth = int_or(p, "depth", f->op == MIX_OP_STREAM || f->op == MIX_OP_KV ? 64 : 2);
    c->want.gid_index = int_or(p, "gid_index", -1); /* -1: chosen by the port's GIDs */
    c->want.path_mtu = int_or(p, "path_mtu", 0);    /* 0: the smaller active MTU */
    c->want.dscp = int_or(p, "dscp", 26);           /* the RoCE default, AF31 */
    c->want.sl = int_or(p, "sl", 0);
    c->want.numa = -1;
    c->want.gpu_memory = mem && !strcmp(mem, "gpu");
    c->want.gpu = f->local_gpu >= 0 ? f->local_gpu : 0;
    const char *conn = jsonutil_str(p, "connect");
    if (conn && strcmp(conn, "ctl") && strcmp(conn, "rdmacm"))
        return ft_err_set(err, -EINVAL, "flow %s: params.connect must be ctl or rdmacm", f->name);
    c->rdmacm = conn && !strcmp(conn, "rdmacm");
    if (mem && strcmp(mem, "gpu") && strcmp(mem, "host"))
        return ft_err_set(err, -EINVAL, "flow %s: params.memory must be host or gpu", f->name);
    if (c->want.path_mtu && !verbs_res_mtu_of_bytes(c->want.path_mtu))
        return ft_err_set(err, -EINVAL,
                          "flow %s: params.path_mtu must be 256, 512, 1024, 2048 or 4096 (bytes)",
                          f->name);
    if (c->timeout < 0 || c->timeout > 31 || c->retry_cnt < 0 || c->retry_cnt > 7 || c->depth < 1 ||
        c->depth > 4096 || c->want.dscp < 0 || c->want.dscp > 63 || c->want.sl < 0 ||
        c->want.sl > 15 || c->want.gid_index < -1 || c->want.gid_index > 65535)
        return ft_err_set(err, -EINVAL,
                          "flow %s: params out of range (timeout 0-31, retry_cnt 0-7, depth "
                          "1-4096, dscp 0-63, sl 0-15, gid_index -1-65535; whole numbers)",
                          f->name);
    c->msg = 0;
    for (int i = 0; i < f->size.n; i++)
        if (f->size.bytes[i] > c->msg)
            c->msg = f->size.bytes[i];
    if (f->local_rdma[0]) {
        char dev[64];
        int port = 0;
        snprintf(dev, sizeof(dev), "%s", f->local_rdma);
        char *colon = strchr(dev, ':');
        if (colon) {
            port = atoi(colon + 1);
            *colon = '\0';
        }
        snprintf(c->want.device, sizeof(c->want.device), "%s", dev);
        c->want.port = port;
    }
    snprintf(c->want.ip, sizeof(c->want.ip), "%s", f->local_ip);
    snprintf(c->want.netdev, sizeof(c->want.netdev), "%s", f->local_netdev);
    return 0;
}

/* The params parse_cfg reads. */
const char *const *verbs_params_keys(enum mix_op op)
{
    static const char *const keys[] = {"verb",      "latency", "memory",    "timeout",
                                       "retry_cnt", "depth",   "gid_index", "path_mtu",
                                       "dscp",      "sl",      "connect",   NULL};
    /* kv: the verb follows the engine (vLLM reads, the others write); the rest as kv.h reads. */
    static const char *const kv_keys[] = {
        "memory",    "timeout",        "retry_cnt", "depth",
        "gid_index", "path_mtu",       "dscp",      "sl",
        "connect",   "engine",         "layout",    "layers",
        "pages",     "page_tokens",    "run_pages", "layers_per_block",
        "qps",       "doorbell_batch", "arrival",   NULL};
    /* collective: a ring all-reduce's pattern as SEND/RECV (engine/flow/ring.h); the verb,
     * latency mode, depth, memory and connection are the ring's own. */
    static const char *const ring_keys[] = {
        "collective", "ranks", "timeout", "retry_cnt", "gid_index", "path_mtu", "dscp", "sl", NULL};
    return op == MIX_OP_KV ? kv_keys : op == MIX_OP_COLLECTIVE ? ring_keys : keys;
}

int verbs_params_validate(const struct mix_flow *f, struct ft_err *err)
{
    struct verbs_params c;
    int rc = verbs_params_parse(f, &c, err);
    if (rc < 0)
        return rc;
    if (f->size.kind == MIX_SIZE_DIST)
        return ft_err_set(err, -EINVAL,
                          "flow %s: verbs flows take a fixed size or a sweep, not a distribution",
                          f->name);
    if (f->concurrency > VERBS_RES_MAX_QPS)
        return ft_err_set(err, -EINVAL, "flow %s: at most %d queue pairs", f->name,
                          VERBS_RES_MAX_QPS);
    if (f->op == MIX_OP_KV) {
        struct kv_params k;
        rc = kv_params_from_json(f->params, f->name, &k, err);
        if (rc)
            return rc;
        if (f->size.kind != MIX_SIZE_FIXED)
            return ft_err_set(err, -EINVAL,
                              "flow %s: size of a kv flow is one page of one layer's cache (one "
                              "number of bytes), not a sweep",
                              f->name);
        if (f->concurrency * k.qps > VERBS_RES_MAX_QPS)
            return ft_err_set(err, -EINVAL,
                              "flow %s: concurrency x params.qps is %d queue pairs, at most %d",
                              f->name, f->concurrency * k.qps, VERBS_RES_MAX_QPS);
        if (c.rdmacm)
            return ft_err_set(err, -EINVAL,
                              "flow %s: params.connect rdmacm is not taken by kv flows (ctl)",
                              f->name);
        uint64_t nkv = k.layout == KV_LAYOUT_FLASH ? 2 : 1;
        uint64_t most =
            k.engine == KV_ENGINE_TRTLLM
                ? c.msg * nkv * (uint64_t)(k.layers_per_block ? k.layers_per_block : k.layers)
            : k.engine == KV_ENGINE_SGLANG ? c.msg * (uint64_t)k.run_pages
                                           : c.msg;
        if (most > (1u << 30))
            return ft_err_set(err, -EINVAL,
                              "flow %s: a descriptor of up to %llu B is over 1 GiB (lower size, "
                              "run_pages or layers_per_block)",
                              f->name, (unsigned long long)most);
        if (k.arrival == KV_ARRIVAL_TRACE) {
            struct kv_trace t;
            rc = kv_trace_load(k.trace, &t, err);
            if (rc)
                return rc;
            kv_trace_free(&t);
        }
    }
    if (f->op == MIX_OP_COLLECTIVE) {
        struct ring_params rp;
        rc = ring_params_from(f, &rp, err);
        if (rc)
            return rc;
        if (f->concurrency > 1)
            return ft_err_set(err, -EINVAL,
                              "flow %s: an emulated all-reduce over verbs runs one ring (one "
                              "queue pair): concurrency 1",
                              f->name);
        c.msg = ring_chunk(f->size.bytes[0], rp.ranks); /* a step, not S, is one message */
    }
    if (c.msg > (1u << 30))
        return ft_err_set(err, -EINVAL, "flow %s: messages up to 1 GiB", f->name);
    if (f->op == MIX_OP_PINGPONG && c.verb == VERBS_READ && c.lat != VERBS_LAT_POLL)
        return ft_err_set(err, -EINVAL, "flow %s: READ latency is always a round trip", f->name);
    if (f->op == MIX_OP_STREAM && f->dir != MIX_DIR_TX && c.verb == VERBS_READ)
        return ft_err_set(err, -EINVAL, "flow %s: RDMA READ streams run in direction tx", f->name);
    if (c.want.gpu_memory && f->op == MIX_OP_PINGPONG && c.lat == VERBS_LAT_POLL)
        return ft_err_set(err, -EINVAL,
                          "flow %s: GPU memory cannot be polled from the CPU: use "
                          "params.latency \"imm\" (WRITE with immediate)",
                          f->name);
    return 0;
}
