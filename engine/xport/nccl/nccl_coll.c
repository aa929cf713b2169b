/* nccl_coll: the client side of a collective flow: the issuing thread (probes, timed
 * batches per size point, the failure bound), the GPUs it uses, and the remote mode in which
 * a peer agent's ranks join over the control channel (nccl.open/init/batch/close). */
#define _GNU_SOURCE
#include "engine/xport/nccl/xport_nccl_int.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "engine/peer/channel.h"

extern char **environ;

static void flow_alive(void *arg)
{
    struct flow_rt *f = arg;
    uint64_t now = flow_now_ns();
    for (int i = 0; i < f->nworkers; i++)
        atomic_store_explicit(&f->workers[i].last_progress_ns, now, memory_order_relaxed);
}

static void coll_op_done(void *arg, int c, int nops, uint64_t bytes)
{
    struct flow_rt *f = arg;
    struct flow_worker *w = &f->workers[c < f->nworkers ? c : 0];
    flow_progress(w, bytes * (uint64_t)nops, 0, (uint64_t)nops);
}

int nccl_coll_remote_batch(struct nccl_flow *x, int p, int sync, int n, bool graph, bool check,
                           uint64_t est_op_ns)
{
    if (!x->remote)
        return 0;
    struct flow_rt *f = x->f;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nccl.batch");
    cJSON_AddNumberToObject(req, "point", p);
    cJSON_AddNumberToObject(req, "sync", sync);
    cJSON_AddNumberToObject(req, "n", n);
    cJSON_AddBoolToObject(req, "graph", graph);
    cJSON_AddBoolToObject(req, "check", check);
    cJSON_AddNumberToObject(req, "est_ns", (double)est_op_ns);
    cJSON *resp = NULL;
    struct ft_err err = {0};
    int ms = (int)(f->fail_bound_s * 1000);
    int rc = channel_request(f->ctl, req, &resp, ms < 1000 ? 1000 : ms, &err);
    if (rc < 0) {
        nccl_core_seterr(&x->core, "control channel to the peer agent: %s", err.msg);
        flow_fail(f, "nccl: %s", x->core.err);
        return rc;
    }
    double wrong = 0;
    if (jsonutil_num(resp, "wrong", &wrong))
        x->peer_wrong = (uint64_t)wrong;
    cJSON_Delete(resp);
    return 0;
}

/* Turn a core failure into the flow's error: first the reason and the time, then abort. */
static void coll_fail(struct nccl_flow *x, int rc)
{
    struct flow_rt *f = x->f;
    if (rc == -ECANCELED && !x->core.err[0])
        return; /* stopping */
    flow_fail(f, "nccl: %s", x->core.err[0] ? x->core.err : strerror(-rc));
    if (atomic_load(&x->core.abort_claim))
        return; /* the watchdog aborted already */
    uint64_t t = flow_now_ns();
    bool ok = nccl_core_abort(&x->core);
    flow_event(f, "communicators aborted in %.3f s%s", (flow_now_ns() - t) / 1e9,
               ok ? "" : " (ncclCommAbort still running: left behind)");
}

/* Run one untimed operation of a new size with NCCL's tuning log on, then read which
 * algorithm, protocol and channels it chose (and any connections it just made). */
static int coll_probe(struct nccl_flow *x, int p)
{
    struct nccl_core *k = &x->core;
    struct nccl_point *pt = &x->pts[p];
    char path[512] = "";
    pthread_mutex_lock(&nccl_env_lock);
    if (x->tuning_log) {
        nccl_env_log_file_name(path, sizeof(path));
        nccl_env_log_on(x->a, path, true);
    }
    uint64_t t0 = flow_now_ns();
    k->waiting_by_design = true;
    int rc = nccl_coll_remote_batch(x, p, 1, 0, false, false, 0);
    for (int c = 0; c < k->ncomms && !rc; c++)
        rc = nccl_core_issue(k, c, p, flow_now_ns() + (uint64_t)(NC_INIT_TIMEOUT * 1e9));
    /* The first operation of a size may connect new channels (NCCL connects at run time):
     * allow it the initialisation bound. */
    if (!rc)
        rc = nccl_core_wait_streams(k, flow_now_ns() + (uint64_t)(NC_INIT_TIMEOUT * 1e9),
                                    "the first operation of this size");
    k->waiting_by_design = false;
    pt->est_op_ns = flow_now_ns() - t0;
    if (x->tuning_log) {
        nccl_env_log_off(x->a);
        struct nccl_util_log l;
        nccl_util_log_init(&l);
        if (nccl_util_log_file(&l, path) == 0) {
            const char *func = nccl_util_coll_func(k->coll);
            uint64_t per = k->lay[p].count * (uint64_t)k->dt->size;
            const struct nccl_util_tuning *t = NULL;
            if (func && !(t = nccl_util_log_tuning(&l, func, k->lay[p].bytes)))
                t = nccl_util_log_tuning(&l, func, per);
            for (int i = l.ntuning - 1; func && !t && i >= 0; i--)
                if (!strcmp(l.tuning[i].func, func))
                    t = &l.tuning[i];
            if (t) {
                snprintf(pt->algo, sizeof(pt->algo), "%s", t->algo);
                snprintf(pt->proto, sizeof(pt->proto), "%s", t->proto);
                pt->ch_lo = t->ch_lo;
                pt->ch_hi = t->ch_hi;
                pt->tuned = true;
            }
            for (int i = 0; i < l.ntransports; i++) {
                bool dup = false;
                for (int j = 0; j < x->log.ntransports; j++)
                    dup |= !strcmp(x->log.transports[j], l.transports[i]);
                if (!dup && x->log.ntransports < NCCL_LOG_MAX_TRANSPORTS)
                    snprintf(x->log.transports[x->log.ntransports++], sizeof(x->log.transports[0]),
                             "%s", l.transports[i]);
            }
            if (l.network[0] && !x->log.network[0])
                snprintf(x->log.network, sizeof(x->log.network), "%s", l.network);
        }
        unlink(path);
    }
    pthread_mutex_unlock(&nccl_env_lock);
    return rc;
}

static int coll_begin_point(struct nccl_flow *x, int p)
{
    struct nccl_core *k = &x->core;
    struct nccl_point *pt = &x->pts[p];
    int rc = coll_probe(x, p);
    if (!rc && x->prm.check) {
        k->waiting_by_design = true;
        rc = nccl_coll_remote_batch(x, p, 0, 0, false, true, pt->est_op_ns);
        if (!rc)
            rc = nccl_core_check(k, p, &pt->wrong, &pt->checked);
        k->waiting_by_design = false;
        pt->check_done = rc == 0;
    }
    if (!rc && x->prm.graph && !nccl_core_has_graph(k, p)) {
        /* The peer captures its own graph when it sees the first graph batch. */
        rc = nccl_core_capture(k, p);
    }
    pt->begun = rc == 0;
    return rc;
}

void *nccl_coll_main(void *arg)
{
    struct flow_rt *f = arg;
    struct nccl_flow *x = f->xdata;
    struct nccl_core *k = &x->core;
    flow_worker_begin(&f->workers[0]);
    flow_alive(f);
    int cur = -1;
    while (flow_wait_running(&f->workers[0])) {
        int p = atomic_load(&f->point);
        struct nccl_point *pt = &x->pts[p];
        int rc = 0;
        if (p != cur) {
            cur = p;
            rc = coll_begin_point(x, p);
            if (rc) {
                coll_fail(x, rc);
                break;
            }
            continue; /* re-read the state: the runner may have moved on meanwhile */
        }
        /* Each point starts with a host-timed batch (nccl-tests' figure), then alternates. */
        bool host = (x->prm.timing == NC_TIME_HOST) ||
                    (x->prm.timing == (NC_TIME_HOST | NC_TIME_EVENTS) && !pt->next_events);
        pt->next_events = !pt->next_events;
        uint64_t est = pt->est_op_ns ? pt->est_op_ns : 1000;
        int n;
        if (host) {
            n = x->prm.host_iters;
            if ((uint64_t)n * est > NC_HOST_BATCH)
                n = (int)(NC_HOST_BATCH / est);
        } else {
            n = (int)(NC_EVENT_BATCH / est);
            if (n > x->prm.event_iters)
                n = x->prm.event_iters;
        }
        int st0 = flow_state(f);
        if (atomic_load(&f->point) != p)
            continue; /* the runner moved on meanwhile */
        /* With a timed measure window, no batch is longer than half of it, and inside the
         * window a batch ends with it where the estimate allows, so that a batch of the
         * other kind still starts inside. */
        uint64_t w0 = f->points[p].t0_ns, now = flow_now_ns();
        if (f->spec->duration_s > 0 && !f->spec->iterations) {
            uint64_t win = (uint64_t)(f->spec->duration_s * 1e9);
            if ((uint64_t)n * est > win / 2)
                n = (int)(win / 2 / est);
            if (st0 == FLOW_ST_MEASURE && w0) {
                uint64_t room = w0 + win > now ? w0 + win - now : 0;
                if ((uint64_t)n * est > room / 2 && !host)
                    n = (int)(room / 2 / est); /* leave room for a host-timed batch too */
                else if ((uint64_t)n * est > room)
                    n = (int)(room / est);
            }
        }
        /* Ranks in another process enqueue on their own: only local batches are gated. Graph
         * launches take microseconds and are never gated: behind the gate they stalled until
         * the progress deadline on H200 (bench/device/h200x2-2026-11-30/device_run.log). */
        bool gate = !x->remote && x->gate && !x->prm.graph;
        if (gate && n > NC_GATE_MAX)
            n = NC_GATE_MAX;
        if (n < 1)
            n = 1;
        struct nccl_batch b = {.point = p,
                               .sync = x->remote ? 1 : 0,
                               .n = n,
                               .graph = x->prm.graph,
                               .events = !host,
                               .gate = gate,
                               .est_op_ns = est,
                               .lat_ns = x->lat,
                               .op_done = coll_op_done,
                               .arg = f};
        rc = nccl_coll_remote_batch(x, p, b.sync, n, b.graph, false, est);
        if (rc)
            break;
        rc = nccl_core_batch(k, &b);
        if (rc) {
            coll_fail(x, rc);
            break;
        }
        /* A batch belongs to the point's measurement when it started inside the measure
         * window (it may end just after the window closes: an operation of a large size can
         * be longer than the window's remainder). */
        bool measured = st0 == FLOW_ST_MEASURE;
        if (b.t1_ns > b.t0_ns)
            pt->est_op_ns = (b.t1_ns - b.t0_ns) / (uint64_t)n;
        if (!measured)
            continue;
        pt->enq_ns += b.enqueue_ns;
        pt->enq_ops += b.gate ? (uint64_t)n : 0;
        if (host) {
            pt->host_ns += b.t1_ns - b.t0_ns;
            pt->host_iters += (uint64_t)n;
            pt->host_batches++;
        } else {
            /* Straight into the point's histograms (single writer: this thread), since
             * flow_record drops samples once the window has closed. */
            for (int i = 0; i < n; i++)
                for (int c = 0; c < k->ncomms; c++)
                    flow_record_point(
                        &f->workers[c < f->nworkers ? c : 0], p,
                        (uint64_t)llround(x->lat[(size_t)i * (size_t)k->ncomms + (size_t)c]));
        }
    }
    return NULL;
}

void *nccl_coll_watch_main(void *arg)
{
    struct flow_rt *f = arg;
    struct nccl_flow *x = f->xdata;
    while (!atomic_load(&x->watch_stop)) {
        if (nccl_core_watchdog(&x->core)) {
            flow_fail(f, "nccl: %s", x->core.err);
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* CUDA ordinals for "all" / a list; checks they exist. */
int nccl_coll_pick_gpus(const struct cudart *a, bool all, int n, const int *list, int *out,
                        const char *flow, const char *where, struct ft_err *err)
{
    if (all) {
        int cnt = a->ndevices < NC_MAX_GPUS ? a->ndevices : NC_MAX_GPUS;
        for (int i = 0; i < cnt; i++)
            out[i] = i;
        return cnt;
    }
    for (int i = 0; i < n; i++) {
        if (list[i] >= a->ndevices)
            return ft_err_set(err, -ENODEV, "flow %s: GPU %d does not exist %s (%d visible)", flow,
                              list[i], where, a->ndevices);
        out[i] = list[i];
    }
    return n;
}

static int ids_parse(const cJSON *a, int n, nccl_id_t *ids)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return -EPROTO;
    for (int c = 0; c < n; c++) {
        const cJSON *h = cJSON_GetArrayItem(a, c);
        size_t got = 0;
        if (!cJSON_IsString(h) ||
            sodium_hex2bin((unsigned char *)&ids[c], CUDART_NCCL_ID_BYTES, h->valuestring,
                           strlen(h->valuestring), NULL, &got, NULL) ||
            got != CUDART_NCCL_ID_BYTES)
            return -EPROTO;
    }
    return 0;
}

void nccl_coll_id_hex(const nccl_id_t *id, char *hex)
{
    sodium_bin2hex(hex, 2 * CUDART_NCCL_ID_BYTES + 1, (const unsigned char *)id,
                   CUDART_NCCL_ID_BYTES);
}

static void add_sizes(cJSON *o, const struct nccl_core *k)
{
    cJSON *s = cJSON_AddArrayToObject(o, "sizes");
    for (int p = 0; p < k->npoints; p++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber((double)k->sizes[p]));
}

/* Remote mode, step 1: ask the peer which GPUs it will use (it loads CUDA and NCCL). */
static int remote_open(struct nccl_flow *x, struct ft_err *err)
{
    struct flow_rt *f = x->f;
    const struct mix_flow *s = f->spec;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nccl.open");
    cJSON_AddStringToObject(req, "collective", nccl_util_coll_name(x->prm.coll));
    cJSON_AddStringToObject(req, "dtype", x->prm.dt->name);
    cJSON_AddStringToObject(req, "redop", nccl_util_redop_name(x->prm.redop));
    cJSON_AddNumberToObject(req, "root", x->prm.root);
    cJSON_AddBoolToObject(req, "in_place", x->prm.in_place);
    cJSON_AddNumberToObject(req, "ncomms", x->core.ncomms);
    cJSON_AddNumberToObject(req, "bound_s", f->fail_bound_s);
    if (x->prm.peer_all) {
        cJSON_AddStringToObject(req, "gpus", "all");
    } else {
        cJSON *g = cJSON_AddArrayToObject(req, "gpus");
        for (int i = 0; i < x->prm.npeer; i++)
            cJSON_AddItemToArray(g, cJSON_CreateNumber(x->prm.peer_gpus[i]));
    }
    if (x->prm.algo[0])
        cJSON_AddStringToObject(req, "algo", x->prm.algo);
    if (x->prm.proto[0])
        cJSON_AddStringToObject(req, "proto", x->prm.proto);
    add_sizes(req, &x->core);
    cJSON *resp = NULL;
    int rc = channel_request(f->ctl, req, &resp, 30000, err);
    if (rc < 0)
        return rc;
    const cJSON *g = cJSON_GetObjectItem(resp, "gpus");
    const cJSON *b = cJSON_GetObjectItem(resp, "busids");
    x->nremote = cJSON_GetArraySize(g);
    if (x->nremote < 1 || x->nremote > NC_MAX_GPUS) {
        cJSON_Delete(resp);
        return ft_err_set(err, -EPROTO, "flow %s: the peer's nccl.open reply names no GPUs",
                          s->name);
    }
    if (ids_parse(cJSON_GetObjectItem(resp, "ids"), x->core.ncomms, x->remote_ids) < 0) {
        cJSON_Delete(resp);
        return ft_err_set(err, -EPROTO,
                          "flow %s: the peer's nccl.open reply has no unique id per communicator",
                          s->name);
    }
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_printf(&sb, "%s: %s, NCCL %s, GPUs", f->peer_desc,
                  jsonutil_str(resp, "host") ? jsonutil_str(resp, "host") : "?",
                  jsonutil_str(resp, "nccl") ? jsonutil_str(resp, "nccl") : "?");
    for (int i = 0; i < x->nremote; i++) {
        const cJSON *bi = cJSON_GetArrayItem(b, i);
        int64_t gpu = -1; /* the peer's number: shown only when it is a GPU index */
        const cJSON *gi = cJSON_GetArrayItem(g, i);
        if (cJSON_IsNumber(gi) && jsonutil_whole(gi->valuedouble, 0, 4095, &gpu))
            strbuf_printf(&sb, " %d", (int)gpu);
        else
            strbuf_add(&sb, " ?");
        strbuf_printf(&sb, " (%s)", cJSON_IsString(bi) ? bi->valuestring : "?");
    }
    snprintf(x->remote_desc, sizeof(x->remote_desc), "%s", sb.s);
    strbuf_free(&sb);
    cJSON_Delete(resp);
    return 0;
}

/* Remote mode, step 2: the peer's ranks join (with the ids it made). */
static int remote_init(struct nccl_flow *x, struct ft_err *err)
{
    struct flow_rt *f = x->f;
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "type", "nccl.init");
    cJSON_AddNumberToObject(req, "nranks", x->core.nranks);
    cJSON_AddNumberToObject(req, "first_rank", x->core.nlocal);
    cJSON *resp = NULL;
    int rc = channel_request(f->ctl, req, &resp, 30000, err);
    cJSON_Delete(resp);
    return rc;
}

static void record_env(struct nccl_flow *x)
{
    struct strbuf sb;
    strbuf_init(&sb);
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "NCCL_", 5) && strncmp(*e, "NCCL_DEBUG", 10))
            strbuf_printf(&sb, "%s%s", sb.len ? " " : "", *e);
    snprintf(x->env_note, sizeof(x->env_note), "%s", sb.s);
    strbuf_free(&sb);
}

int nccl_coll_setup(struct flow_rt *f, struct nccl_flow *x, struct ft_err *err)
{
    const struct mix_flow *s = f->spec;
    struct nccl_core *k = &x->core;
    k->a = x->a;
    k->coll = x->prm.coll;
    k->dt = x->prm.dt;
    k->redop = x->prm.redop;
    k->root = x->prm.root;
    k->in_place = x->prm.in_place;
    k->ncomms = s->concurrency;
    k->bound_ns = (uint64_t)(f->fail_bound_s * 1e9);
    k->blocking = x->prm.blocking;
    k->op_timeout_ns = k->bound_ns * 6 / 10; /* ahead of the runner's own progress deadline */
    k->alive = flow_alive;
    k->alive_arg = f;
    k->npoints = f->npoints;
    for (int p = 0; p < f->npoints; p++)
        k->sizes[p] = f->points[p].size;
    int gpus[NC_MAX_GPUS];
    int n = nccl_coll_pick_gpus(x->a, x->prm.all_gpus, x->prm.ngpus, x->prm.gpus, gpus, s->name,
                                "on this host", err);
    if (n < 0)
        return n;
    /* The in-process loopback agent means every rank runs here; a named peer agent holds
     * the other ranks. */
    x->remote = f->ctl && strncmp(f->peer_desc, "loopback agent", 14) != 0;
    const char *g = getenv("FABTOP_NCCL_GATE");
    x->gate = !(g && !strcmp(g, "0"));
    if (x->remote)
        snprintf(x->remote_host, sizeof(x->remote_host), "%s", f->peer_desc);
    else
        f->peer_desc[0] = '\0'; /* no peer: the results list none */
    k->nlocal = n;
    for (int i = 0; i < n; i++) {
        k->ranks[i].dev = gpus[i];
        k->ranks[i].rank = i;
        x->a->cudaDeviceGetPCIBusId(k->ranks[i].busid, sizeof(k->ranks[i].busid), gpus[i]);
    }
    int rc;
    if (x->remote && (rc = remote_open(x, err)) < 0)
        return rc;
    k->nranks = k->nlocal + (x->remote ? x->nremote : 0);
    if (k->nranks < 2)
        return ft_err_set(err, -EINVAL,
                          "flow %s: a collective needs at least 2 ranks; this host has %d GPU%s "
                          "in params.gpus (give a peer agent for ranks on another host)",
                          s->name, k->nlocal, k->nlocal == 1 ? "" : "s");
    if (k->root >= k->nranks)
        return ft_err_set(err, -EINVAL, "flow %s: params.root %d but only %d ranks", s->name,
                          k->root, k->nranks);
    if ((rc = nccl_core_layouts(k)) < 0 || (rc = nccl_core_alloc(k)) < 0)
        return ft_err_set(err, rc, "flow %s: %s", s->name, k->err);
    /* For the live view's bus bandwidth: each point's S and the collective's factor. */
    for (int p = 0; p < k->npoints; p++)
        f->points[p].bw_bytes = k->lay[p].bytes;
    f->bw_factor = nccl_util_busbw_factor(k->coll, k->nranks);
    x->lat = xalloc_zero((size_t)NC_EV_MAX * (size_t)k->ncomms, sizeof(double));
    record_env(x);

    nccl_id_t ids[NC_MAX_COMMS];
    pthread_mutex_lock(&nccl_env_lock);
    char path[512], old_algo[128] = "", old_proto[128] = "";
    bool had_algo = getenv("NCCL_ALGO") != NULL, had_proto = getenv("NCCL_PROTO") != NULL;
    if (had_algo)
        snprintf(old_algo, sizeof(old_algo), "%s", getenv("NCCL_ALGO"));
    if (had_proto)
        snprintf(old_proto, sizeof(old_proto), "%s", getenv("NCCL_PROTO"));
    if (x->prm.algo[0])
        setenv("NCCL_ALGO", x->prm.algo, 1);
    if (x->prm.proto[0])
        setenv("NCCL_PROTO", x->prm.proto, 1);
    bool user_tuning = nccl_env_user_logs_tuning();
    nccl_env_log_file_name(path, sizeof(path));
    if (!user_tuning)
        nccl_env_log_on(x->a, path, false);
    rc = 0;
    /* With a peer agent, its ids (it is the bootstrap root); else our own. */
    for (int c = 0; c < k->ncomms && !rc; c++) {
        nccl_result_t r = x->remote ? 0 : x->a->ncclGetUniqueId(&ids[c]);
        if (x->remote)
            ids[c] = x->remote_ids[c];
        if (r)
            rc = nccl_core_fail(k, r, "ncclGetUniqueId", NULL);
    }
    uint64_t t0 = flow_now_ns();
    if (!rc && x->remote && remote_init(x, err) < 0)
        rc = -EIO;
    if (!rc)
        rc = nccl_core_init_comms(k, ids, NC_INIT_TIMEOUT);
    x->init_s = (flow_now_ns() - t0) / 1e9;
    if (!user_tuning) {
        nccl_env_log_off(x->a);
        nccl_util_log_file(&x->log, path);
        unlink(path);
    }
    nccl_env_restore_var("NCCL_ALGO", had_algo ? old_algo : NULL);
    nccl_env_restore_var("NCCL_PROTO", had_proto ? old_proto : NULL);
    x->tuning_log = x->a->ncclResetDebugInit && !user_tuning;
    if (user_tuning)
        snprintf(x->tuning_note, sizeof(x->tuning_note),
                 "not recorded: NCCL_DEBUG_SUBSYS with TUNING was set by the user, so NCCL logs "
                 "every operation and small-message timing is distorted");
    else if (!x->a->ncclResetDebugInit)
        snprintf(x->tuning_note, sizeof(x->tuning_note),
                 "not recorded: this libnccl cannot switch logging off again "
                 "(no ncclResetDebugInit), and TUNING logs every operation");
    else
        snprintf(x->tuning_note, sizeof(x->tuning_note),
                 "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING during one untimed probe "
                 "operation per size, then logging off");
    pthread_mutex_unlock(&nccl_env_lock);
    if (rc) {
        if (err->code)
            return err->code;
        return ft_err_set(err, rc, "flow %s: NCCL initialisation: %s", s->name, k->err);
    }
    return 0;
}
