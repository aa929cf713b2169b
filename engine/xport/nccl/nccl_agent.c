/* nccl_agent: the agent side of NCCL flows: the "nccl.*" requests a peer's client sends
 * (open: load CUDA/NCCL, pick GPUs, make the unique ids; init; batch; close), served to keys
 * the agent allows (`fabtop serve --allow-nccl`); a worker thread per session issues the
 * same operations in the same order as the client. */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/agent.h"

/* The tag of this side's per-session state (agent_session_state). */
static const char state_tag;

/* One session's ranks on this host. A worker thread initialises the communicators and then
 * runs the batches the client announces, in order, so both sides issue the same operations. */
struct nccl_item {
    int point, sync, n;
    bool graph, check;
    uint64_t est_ns; /* the client's estimate of one operation */
};

struct nccl_srv {
    struct nccl_core core;
    struct agent_session *session;
    const struct cudart *a;
    int gpus[NC_MAX_GPUS], ngpus;
    nccl_id_t ids[NC_MAX_COMMS];
    char algo[64], proto[64];
    bool have_init;
    double max_duration_s;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct nccl_item q[64];
    int qhead, qlen;
    bool closing, stop;
    _Atomic uint64_t wrong;
    char error[320];
    pthread_t watch;
    bool watching;
    _Atomic bool watch_stop;
};

static void srv_error(struct nccl_srv *sv, const char *msg)
{
    pthread_mutex_lock(&sv->lock);
    if (!sv->error[0])
        snprintf(sv->error, sizeof(sv->error), "%s", msg);
    pthread_mutex_unlock(&sv->lock);
}

static void *srv_watch(void *arg)
{
    struct nccl_srv *sv = arg;
    while (!atomic_load(&sv->watch_stop)) {
        if (nccl_core_watchdog(&sv->core)) {
            srv_error(sv, sv->core.err);
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *srv_main(void *arg)
{
    struct nccl_srv *sv = arg;
    struct nccl_core *k = &sv->core;
    uint64_t t0 = flow_now_ns();
    pthread_mutex_lock(&nccl_env_lock);
    char old_algo[128] = "", old_proto[128] = "";
    bool had_algo = getenv("NCCL_ALGO") != NULL, had_proto = getenv("NCCL_PROTO") != NULL;
    if (had_algo)
        snprintf(old_algo, sizeof(old_algo), "%s", getenv("NCCL_ALGO"));
    if (had_proto)
        snprintf(old_proto, sizeof(old_proto), "%s", getenv("NCCL_PROTO"));
    if (sv->algo[0])
        setenv("NCCL_ALGO", sv->algo, 1);
    if (sv->proto[0])
        setenv("NCCL_PROTO", sv->proto, 1);
    int rc = nccl_core_init_comms(k, sv->ids, NC_INIT_TIMEOUT);
    nccl_env_restore_var("NCCL_ALGO", had_algo ? old_algo : NULL);
    nccl_env_restore_var("NCCL_PROTO", had_proto ? old_proto : NULL);
    pthread_mutex_unlock(&nccl_env_lock);
    if (rc) {
        char m[400];
        snprintf(m, sizeof(m), "NCCL initialisation on the peer: %s", k->err);
        srv_error(sv, m);
        nccl_core_abort(k);
        return NULL;
    }
    agent_session_log(sv->session, "nccl: %d rank(s) joined in %.2f s", k->nlocal,
                      (flow_now_ns() - t0) / 1e9);
    for (;;) {
        pthread_mutex_lock(&sv->lock);
        while (!sv->qlen && !sv->closing && !sv->stop)
            pthread_cond_wait(&sv->cond, &sv->lock);
        if (sv->stop || (!sv->qlen && sv->closing)) {
            pthread_mutex_unlock(&sv->lock);
            break;
        }
        struct nccl_item it = sv->q[sv->qhead];
        sv->qhead = (sv->qhead + 1) % 64;
        sv->qlen--;
        pthread_mutex_unlock(&sv->lock);
        if (sv->max_duration_s > 0 && (flow_now_ns() - t0) / 1e9 > sv->max_duration_s) {
            char m[128];
            snprintf(m, sizeof(m), "the agent's duration cap (%.0f s) ended the test",
                     sv->max_duration_s);
            srv_error(sv, m);
            nccl_core_abort(k);
            break;
        }
        if (it.point < 0 || it.point >= k->npoints)
            continue;
        if (it.check) {
            uint64_t w = 0, c = 0;
            rc = nccl_core_check(k, it.point, &w, &c);
            atomic_fetch_add(&sv->wrong, w);
        } else {
            rc = 0;
            if (it.graph && !nccl_core_has_graph(k, it.point))
                rc = nccl_core_capture(k, it.point);
            struct nccl_batch b = {.point = it.point,
                                   .sync = it.sync,
                                   .n = it.n,
                                   .graph = it.graph,
                                   .events = false,
                                   .est_op_ns = it.est_ns ? it.est_ns : 1000000};
            if (!rc)
                rc = nccl_core_batch(k, &b);
        }
        if (rc) {
            char m[400];
            snprintf(m, sizeof(m), "the peer's ranks: %s", k->err[0] ? k->err : strerror(-rc));
            srv_error(sv, m);
            agent_session_log(sv->session, "nccl: %s; aborting", m);
            nccl_core_abort(k);
            break;
        }
    }
    return NULL;
}

static void srv_free(void *arg)
{
    struct nccl_srv *sv = arg;
    pthread_mutex_lock(&sv->lock);
    sv->closing = true;
    pthread_mutex_unlock(&sv->lock);
    pthread_cond_broadcast(&sv->cond);
    if (sv->started) {
        /* The client is gone: if our ranks still wait on it, the deadline (or the watchdog)
         * ends them; give the queue that long, then stop. */
        uint64_t until = flow_now_ns() + sv->core.bound_ns * 3 + 1000000000ull;
        while (flow_now_ns() < until) {
            pthread_mutex_lock(&sv->lock);
            bool idle = sv->qlen == 0;
            pthread_mutex_unlock(&sv->lock);
            if (idle)
                break;
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        pthread_mutex_lock(&sv->lock);
        sv->stop = true;
        pthread_mutex_unlock(&sv->lock);
        pthread_cond_broadcast(&sv->cond);
        pthread_join(sv->thread, NULL);
    }
    if (sv->watching) {
        atomic_store(&sv->watch_stop, true);
        pthread_join(sv->watch, NULL);
    }
    if (!nccl_core_free(&sv->core)) {
        if (!atomic_load(&sv->core.abort_claim))
            agent_session_log(sv->session, "nccl: NCCL did not release its communicators in time");
        if (nccl_core_abandon(sv))
            return;
    }
    pthread_mutex_destroy(&sv->lock);
    pthread_cond_destroy(&sv->cond);
    free(sv);
}

/* nccl.* only for keys the agent allows (see the top). */
static int nccl_allowed(struct agent_session *s, const char *what, struct ft_err *err)
{
    if (agent_session_allow_nccl(s))
        return 0;
    return ft_err_set(err, -EPERM,
                      "%s: this agent does not serve NCCL to this key: NCCL's ranks connect to "
                      "addresses the client's ranks advertise, so it is allowed per key "
                      "('fabtop serve --allow-nccl')",
                      what);
}

static int handle_open(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    int rc = nccl_allowed(s, "nccl.open", err);
    if (rc < 0)
        return rc;
    if (agent_session_state(s, &state_tag))
        return ft_err_set(err, -EBUSY, "nccl.open: this session already holds NCCL ranks");
    const struct agent_cfg *cfg = agent_session_cfg(s);
    /* The request first (the same answer on any host), then CUDA and NCCL. */
    int c = nccl_util_coll_parse(jsonutil_str(req, "collective"));
    const struct nccl_util_dtype *dt = nccl_util_dtype_find(jsonutil_str(req, "dtype"));
    int op = nccl_util_redop_parse(jsonutil_str(req, "redop"));
    double ncomms = 0, root = 0, bound = 0;
    bool inplace = false;
    jsonutil_num(req, "root", &root);
    jsonutil_bool(req, "in_place", &inplace);
    const cJSON *sizes = cJSON_GetObjectItem(req, "sizes");
    /* bound_s: the client's failure bound, which also sets how long the agent's ranks may
     * wait at the end (srv_free): at most NC_MAX_BOUND_S. */
    if (c < 0 || !dt || op < 0 || !jsonutil_num(req, "ncomms", &ncomms) || ncomms < 1 ||
        ncomms > NC_MAX_COMMS || ncomms != (int)ncomms || !jsonutil_num(req, "bound_s", &bound) ||
        !(bound > 0 && bound <= NC_MAX_BOUND_S) || !(root >= 0 && root < 4096) ||
        !cJSON_IsArray(sizes) || cJSON_GetArraySize(sizes) < 1 ||
        cJSON_GetArraySize(sizes) > MIX_MAX_SIZES)
        return ft_err_set(err, -EINVAL,
                          "nccl.open: bad request (collective, dtype, redop, ncomms 1-%d, "
                          "bound_s 0-%d, root 0-4095 and sizes are required)",
                          NC_MAX_COMMS, NC_MAX_BOUND_S);
    if (cfg->max_streams > 0 && ncomms > cfg->max_streams)
        return ft_err_set(err, -EPERM,
                          "nccl.open: %d communicators asked, the agent allows %d (--max-streams)",
                          (int)ncomms, cfg->max_streams);
    uint64_t sz[MIX_MAX_SIZES];
    int npoints = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, sizes)
    {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1 && e->valuedouble <= 16.0 * (1ull << 30)))
            return ft_err_set(err, -EINVAL, "nccl.open: sizes must be 1 B to 16 GiB");
        sz[npoints++] = (uint64_t)e->valuedouble;
    }
    bool all = false;
    int n = 0, list[NC_MAX_GPUS];
    struct ft_err ge = {0};
    if (nccl_params_gpu_list(cJSON_GetObjectItem(req, "gpus"), "gpus", "(peer)", &all, &n, list,
                             &ge) < 0)
        return ft_err_set(err, -EINVAL, "nccl.open: %s", ge.msg);
    char why[768];
    const struct cudart *a;
    rc = cudart_load(&a, why, sizeof(why));
    if (rc < 0)
        return ft_err_set(err, rc, "nccl.open: the peer cannot run NCCL: %s", why);
    if (agent_session_flow_add(s, "nccl.open", err) < 0)
        return err->code;
    struct nccl_srv *sv = xalloc_zero(1, sizeof(*sv));
    nccl_core_init_struct(&sv->core);
    pthread_mutex_init(&sv->lock, NULL);
    pthread_cond_init(&sv->cond, NULL);
    sv->session = s;
    sv->a = a;
    sv->max_duration_s = cfg->max_duration_s;
    struct nccl_core *k = &sv->core;
    k->a = a;
    k->coll = (enum nccl_util_coll)c;
    k->dt = dt;
    k->redop = op;
    k->root = (int)root;
    k->in_place = inplace;
    k->ncomms = (int)ncomms;
    k->bound_ns = (uint64_t)(bound * 1e9);
    k->op_timeout_ns = k->bound_ns * 6 / 10;
    for (int p = 0; p < npoints; p++)
        k->sizes[k->npoints++] = sz[p];
    if ((n = nccl_coll_pick_gpus(a, all, n, list, sv->gpus, "(peer)", "on the peer", &ge)) < 0) {
        srv_free(sv);
        return ft_err_set(err, -EINVAL, "nccl.open: %s", ge.msg);
    }
    sv->ngpus = n;
    k->nlocal = n;
    cJSON *ga = cJSON_AddArrayToObject(resp, "gpus");
    cJSON *ba = cJSON_AddArrayToObject(resp, "busids");
    for (int i = 0; i < n; i++) {
        k->ranks[i].dev = sv->gpus[i];
        a->cudaDeviceGetPCIBusId(k->ranks[i].busid, sizeof(k->ranks[i].busid), sv->gpus[i]);
        cJSON_AddItemToArray(ga, cJSON_CreateNumber(sv->gpus[i]));
        cJSON_AddItemToArray(ba, cJSON_CreateString(k->ranks[i].busid));
    }
    char host[256] = "", v[32];
    gethostname(host, sizeof(host) - 1);
    cudart_version_str(a->nccl_version, true, v, sizeof(v));
    cJSON_AddStringToObject(resp, "host", host);
    cJSON_AddStringToObject(resp, "nccl", v);
    /* NCCL_ALGO / NCCL_PROTO apply when the communicators initialise (srv_main). */
    jsonutil_strcpy(req, "algo", sv->algo, sizeof(sv->algo));
    jsonutil_strcpy(req, "proto", sv->proto, sizeof(sv->proto));
    /* The agent is the bootstrap root of every communicator: its own ids. */
    pthread_mutex_lock(&nccl_env_lock);
    nccl_result_t r = 0;
    for (int i = 0; i < k->ncomms && !r; i++)
        r = a->ncclGetUniqueId(&sv->ids[i]);
    pthread_mutex_unlock(&nccl_env_lock);
    if (r) {
        srv_free(sv);
        return ft_err_set(err, -EIO, "nccl.open: ncclGetUniqueId on the peer: %s",
                          a->ncclGetErrorString ? a->ncclGetErrorString(r) : "failed");
    }
    cJSON *ia = cJSON_AddArrayToObject(resp, "ids");
    for (int i = 0; i < k->ncomms; i++) {
        char hex[2 * CUDART_NCCL_ID_BYTES + 1];
        nccl_coll_id_hex(&sv->ids[i], hex);
        cJSON_AddItemToArray(ia, cJSON_CreateString(hex));
    }
    agent_session_set_state(s, &state_tag, sv, srv_free);
    agent_session_log(s, "nccl: %s %s on %d GPU(s), %d communicator(s)",
                      nccl_util_coll_name(k->coll), dt->name, n, k->ncomms);
    return 0;
}

static int handle_init(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)resp;
    int rc = nccl_allowed(s, "nccl.init", err);
    if (rc < 0)
        return rc;
    struct nccl_srv *sv = agent_session_state(s, &state_tag);
    if (!sv || sv->have_init)
        return ft_err_set(err, -EPROTO, "nccl.init: send nccl.open first (once per session)");
    struct nccl_core *k = &sv->core;
    double nranks = 0, first = 0;
    if (cJSON_GetObjectItem(req, "ids"))
        return ft_err_set(err, -EINVAL,
                          "nccl.init: the agent makes the unique ids (its nccl.open reply); ids "
                          "from a client are not accepted");
    if (!jsonutil_num(req, "nranks", &nranks) || !jsonutil_num(req, "first_rank", &first) ||
        first < 1 || nranks < first + k->nlocal || nranks > 4096)
        return ft_err_set(err, -EINVAL, "nccl.init: bad request (nranks and first_rank)");
    k->nranks = (int)nranks;
    for (int i = 0; i < k->nlocal; i++)
        k->ranks[i].rank = (int)first + i;
    if (nccl_core_layouts(k) < 0 || nccl_core_alloc(k) < 0)
        return ft_err_set(err, -EIO, "nccl.init: %s", k->err);
    sv->have_init = true;
    if (pthread_create(&sv->thread, NULL, srv_main, sv) != 0)
        return ft_err_set(err, -EAGAIN, "nccl.init: cannot start a thread");
    sv->started = true;
    if (pthread_create(&sv->watch, NULL, srv_watch, sv) == 0)
        sv->watching = true;
    return 0;
}

static int handle_batch(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    if (nccl_allowed(s, "nccl.batch", err) < 0)
        return err->code;
    struct nccl_srv *sv = agent_session_state(s, &state_tag);
    if (!sv || !sv->have_init)
        return ft_err_set(err, -EPROTO, "nccl.batch: no NCCL ranks in this session");
    double point = -1, sync = 0, n = 0, est = 0;
    struct nccl_item it = {0};
    if (jsonutil_num(req, "est_ns", &est) && est > 0 && est < 1e12)
        it.est_ns = (uint64_t)est;
    jsonutil_num(req, "point", &point);
    jsonutil_num(req, "sync", &sync);
    jsonutil_num(req, "n", &n);
    jsonutil_bool(req, "graph", &it.graph);
    jsonutil_bool(req, "check", &it.check);
    if (point < 0 || point >= sv->core.npoints || sync < 0 || sync > 4 || n < 0 || n > 100000)
        return ft_err_set(err, -EINVAL, "nccl.batch: bad request (point, sync 0-4, n 0-100000)");
    it.point = (int)point;
    it.sync = (int)sync;
    it.n = (int)n;
    pthread_mutex_lock(&sv->lock);
    int rc = 0;
    if (sv->error[0])
        rc = ft_err_set(err, -EIO, "%s", sv->error);
    else if (sv->qlen == 64)
        rc = ft_err_set(err, -EBUSY, "nccl.batch: the peer is 64 batches behind");
    else {
        sv->q[(sv->qhead + sv->qlen) % 64] = it;
        sv->qlen++;
    }
    pthread_mutex_unlock(&sv->lock);
    pthread_cond_signal(&sv->cond);
    cJSON_AddNumberToObject(resp, "wrong", (double)atomic_load(&sv->wrong));
    return rc;
}

static int handle_close(struct agent_session *s, const cJSON *req, cJSON *resp, struct ft_err *err)
{
    (void)req;
    if (nccl_allowed(s, "nccl.close", err) < 0)
        return err->code;
    struct nccl_srv *sv = agent_session_state(s, &state_tag);
    if (sv) {
        pthread_mutex_lock(&sv->lock);
        sv->closing = true;
        pthread_mutex_unlock(&sv->lock);
        pthread_cond_broadcast(&sv->cond);
        cJSON_AddNumberToObject(resp, "wrong", (double)atomic_load(&sv->wrong));
    }
    return 0;
}

static const struct agent_handler nccl_open_handler = {"nccl.open", handle_open};
static const struct agent_handler nccl_init_handler = {"nccl.init", handle_init};
static const struct agent_handler nccl_batch_handler = {"nccl.batch", handle_batch};
static const struct agent_handler nccl_close_handler = {"nccl.close", handle_close};
const struct agent_handler *const nccl_agent_handlers[] = {
    &nccl_open_handler, &nccl_init_handler, &nccl_batch_handler, &nccl_close_handler, NULL};
